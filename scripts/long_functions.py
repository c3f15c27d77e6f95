#!/usr/bin/env python3
"""List C++ functions longer than a limit in product code (none over 80 lines
except a grammar's switch).

No libclang here, so this is a brace-matching scan: comments, string/character literals and
preprocessor lines are blanked first (keeping line numbers), then scopes are walked. A '{' whose
header (the text since the previous ';', '{' or '}') opens a namespace, an extern "C" block or a
class/struct/union/enum is descended into; any other '{' at namespace or class scope whose header
holds a '(' starts a function, whose length runs from the first line of its header (after any
template<...> line) to its closing brace. Lambdas and local classes count toward the function
that holds them. Braces inside a constructor's initializer list (a_{x}) are followed to the body.

Usage: long_functions.py [--max N] [--allow FILE] [--root DIR] [PATH...]
  PATH defaults to the product folders. With --allow, exits 1 when a function over the limit is
  not listed in FILE (lines 'path name', '#' comments) or a listed one is no longer over it.
"""
import argparse
import os
import re
import sys

PRODUCT_DIRS = ["preload", "collector", "trace", "tagger", "analyzer", "interop", "cli", "viewer",
                "gpu_catalog"]
SOURCE_SUFFIXES = (".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".cu", ".cuh")
SKIPPED_DIR_NAMES = {"tests", "test"}

RAW_STRING = re.compile(r'R"([^()\\ ]{0,16})\(')


def blank(text, start, end):
    """Replace text[start:end] by spaces, keeping newlines (so line numbers stay)."""
    return "".join(c if c == "\n" else " " for c in text[start:end])


def strip_code(text):
    """Blank comments, literals and preprocessor lines; the result has the same length."""
    out = []
    i, n = 0, len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if at_line_start and c == "#":
            j = i
            while j < n and text[j] != "\n":
                if text[j] == "\\" and j + 1 < n and text[j + 1] == "\n":
                    j += 1
                j += 1
            out.append(blank(text, i, j))
            i = j
            continue
        if c == "\n":
            at_line_start = True
            out.append(c)
            i += 1
            continue
        if not c.isspace():
            at_line_start = False
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(blank(text, i, j))
            i = j
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(blank(text, i, j))
            i = j
            continue
        raw = RAW_STRING.match(text, i)
        if raw and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            close = ")" + raw.group(1) + '"'
            j = text.find(close, raw.end())
            j = n if j < 0 else j + len(close)
            out.append('""' + blank(text, i + 2, j))
            i = j
            continue
        if c in "\"'":
            # A ' between digits is a digit separator (1'000), not a character literal.
            if c == "'" and i > 0 and text[i - 1].isalnum() and i + 1 < n and text[i + 1].isalnum():
                out.append(c)
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + blank(text, i + 1, j - 1) + c)
            i = j
            continue
        out.append(c)
        i += 1
    return "".join(out)


def matching_brace(code, open_index):
    depth = 0
    for k in range(open_index, len(code)):
        if code[k] == "{":
            depth += 1
        elif code[k] == "}":
            depth -= 1
            if depth == 0:
                return k
    return len(code) - 1


TEMPLATE_PREFIX = re.compile(r"^\s*template\s*<")
SCOPE_KEYWORD = re.compile(r"^\s*(?:(?:export|inline)\s+)*(namespace|extern\s*\"\"|class|struct|union|enum)\b")
CTOR_INIT_COLON = re.compile(r"\)\s*(?:noexcept\s*(?:\([^)]*\))?\s*)?:(?!:)")


def strip_template_prefix(header):
    """Drop leading template<...> clauses; returns (rest, offset of rest in header)."""
    offset = 0
    while True:
        m = TEMPLATE_PREFIX.match(header, offset)
        if not m:
            return header[offset:], offset
        depth, k = 0, m.end() - 1
        while k < len(header):
            if header[k] == "<":
                depth += 1
            elif header[k] == ">":
                depth -= 1
                if depth == 0:
                    break
            k += 1
        offset = k + 1


MACRO_CALL_LINE = re.compile(r"\)[ \t]*\n\s*([A-Za-z_]\w*)")
# Words that may follow a function's ')' on the next line: still the same declarator.
DECLARATOR_TAIL_WORDS = {"const", "volatile", "noexcept", "override", "final", "requires", "try", "throw",
                         "mutable", "and", "or"}


def skip_macro_calls(header):
    """Offset past macro invocations without ';' (TBD_HOOK(a, b) lines) that precede a header:
    a line that ends with a ')' at parenthesis depth 0 and is followed by a line that starts with a
    word other than a declarator's tail (const, noexcept, ...) restarts it."""
    start, depth = 0, 0
    for k, c in enumerate(header):
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            m = MACRO_CALL_LINE.match(header, k)
            if depth == 0 and m and m.group(1) not in DECLARATOR_TAIL_WORDS:
                start = header.index("\n", k) + 1
    return start


def function_name(header):
    m = re.search(r"operator\s*(\(\)|[^\s(]+)\s*\(", header)
    if m:
        before = re.findall(r"[\w:~]+\s*$", header[:m.start()])
        return (before[0].strip() if before else "") + "operator" + m.group(1)
    paren = header.find("(")
    words = re.findall(r"[\w:~]+", header[:paren])
    return words[-1] if words else "(anonymous)"


def function_end(code, open_index, header):
    """Closing brace of a function body, following braces of a constructor initializer list."""
    end = matching_brace(code, open_index)
    if not CTOR_INIT_COLON.search(header):
        return end
    while True:
        k = end + 1
        while k < len(code) and code[k].isspace():
            k += 1
        if k >= len(code) or code[k] not in ",{":
            return end
        if code[k] == ",":
            k = code.find("{", k)
            if k < 0:
                return end
        end = matching_brace(code, k)


def scan_functions(code):
    """Yields (first_line, last_line, name) of every function defined in code."""
    line_of = []
    line = 1
    for c in code:
        line_of.append(line)
        if c == "\n":
            line += 1
    header_start = 0
    i = 0
    while i < len(code):
        c = code[i]
        if c in ";}":
            header_start = i + 1
        elif c == "{":
            header = code[header_start:i]
            skipped = skip_macro_calls(header)
            header_start += skipped
            header = header[skipped:]
            rest, offset = strip_template_prefix(header)
            if SCOPE_KEYWORD.match(rest) and "(" not in rest.split("{")[0].split(":")[0]:
                header_start = i + 1  # descend into the namespace or class
            elif "(" in rest and rest.strip():
                end = function_end(code, i, rest)
                first = header_start + offset + (len(rest) - len(rest.lstrip()))
                yield line_of[first], line_of[end], function_name(rest)
                i = end
                header_start = end + 1
            else:
                i = matching_brace(code, i)  # an initializer or something else: skip it
                header_start = i + 1
        i += 1


def product_files(root, paths):
    for top in paths:
        full = os.path.join(root, top)
        if os.path.isfile(full):
            yield top
            continue
        for dirpath, dirnames, filenames in os.walk(full):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIR_NAMES)
            for name in sorted(filenames):
                if name.endswith(SOURCE_SUFFIXES):
                    yield os.path.relpath(os.path.join(dirpath, name), root)


def long_functions(root, paths, max_lines):
    found = []
    for rel in product_files(root, paths):
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            code = strip_code(f.read())
        for first, last, name in scan_functions(code):
            length = last - first + 1
            if length > max_lines:
                found.append((rel, first, name, length))
    return found


def read_allow_list(path):
    allowed = set()
    with open(path, encoding="utf-8") as f:
        for raw in f:
            entry = raw.split("#", 1)[0].split()
            if len(entry) >= 2:
                allowed.add((entry[0], entry[1]))
    return allowed


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max", type=int, default=80, help="longest allowed function (lines)")
    parser.add_argument("--allow", help="file of 'path name' exceptions; exit 1 on any other")
    parser.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    parser.add_argument("paths", nargs="*", default=PRODUCT_DIRS)
    args = parser.parse_args()
    root = os.path.abspath(args.root)
    for top in args.paths:
        if not os.path.exists(os.path.join(root, top)):
            print(f"long_functions: no such file or folder: {top}", file=sys.stderr)
            return 2
    found = long_functions(root, args.paths, args.max)
    for rel, first, name, length in sorted(found, key=lambda f: -f[3]):
        print(f"{length:5d}  {rel}:{first}  {name}")
    print(f"{len(found)} function(s) over {args.max} lines")
    if not args.allow:
        return 0
    allowed = read_allow_list(args.allow)
    seen = {(rel, name) for rel, _, name, _ in found}
    unexpected = sorted(seen - allowed)
    stale = sorted(allowed - seen)
    for rel, name in unexpected:
        print(f"long_functions: {rel} {name} is over {args.max} lines and not an allowed exception",
              file=sys.stderr)
    for rel, name in stale:
        print(f"long_functions: {rel} {name} is listed as an exception but is not over "
              f"{args.max} lines any more: remove it from {args.allow}", file=sys.stderr)
    return 1 if unexpected or stale else 0


if __name__ == "__main__":
    sys.exit(main())
