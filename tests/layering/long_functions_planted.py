#!/usr/bin/env python3
"""scripts/long_functions.py on planted sources: the functions it must find over the limit (with
their lengths), those it must not, and the allow list's two failures (an unlisted long function, a
listed one that is short now)."""
import os
import subprocess
import sys
import tempfile

script = sys.argv[1]


def body(lines):
    return "".join(f"    x += {i};\n" for i in range(lines))


# Each planted function's length runs from its first header line to its closing brace.
PLANTED = (
    "#include <string>\n"
    "#define HOOK(name) void name() { }\n"
    "HOOK(a)\n"
    "HOOK(b)\n"
    "namespace outer {\n"
    "namespace {\n"
    "const char* kText = \"{ not a brace\"; // {\n"
    "/* { */ const char kChar = '{';\n"
    "}  // namespace\n"
    "int long_free(int x) {\n" + body(10) + "    return x;\n}\n"          # 13 lines
    "int short_free(int x) {\n" + body(3) + "    return x;\n}\n"          # 6 lines
    "struct Widget {\n"
    "    Widget(int a) : a_(a), b_{a} {\n" + body(9) + "    }\n"          # 11 lines, init-list braces
    "    int inline_long(int x) const {\n"
    "        auto f = [&](int y) {\n" + body(8) + "            return y;\n        };\n"
    "        return f(x);\n    }\n"                                         # 14 lines, lambda inside
    "    int a_, b_;\n"
    "};\n"
    "template <typename T>\n"
    "T templated(T x) {\n" + body(11) + "    return x;\n}\n"              # 14 lines
    "const std::string kRaw = R\"(\n{\n{\n)\";\n"
    "}  // namespace outer\n"
)


def run(root, *extra):
    return subprocess.run([sys.executable, script, "--max", "10", "--root", root, *extra, "planted.cpp"],
                          capture_output=True, text=True)


def main():
    failures = []
    with tempfile.TemporaryDirectory() as root:
        with open(os.path.join(root, "planted.cpp"), "w") as f:
            f.write(PLANTED)
        listed = run(root)
        found = {}
        for line in listed.stdout.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[0].isdigit():
                found[parts[2]] = int(parts[0])
        want = {"long_free": 13, "Widget": 11, "inline_long": 14, "templated": 14}
        if found != want:
            failures.append(f"found {found}, want {want}\n{listed.stdout}{listed.stderr}")
        allow = os.path.join(root, "allow.txt")
        with open(allow, "w") as f:
            f.write("# planted\nplanted.cpp long_free\nplanted.cpp Widget\nplanted.cpp inline_long\n"
                    "planted.cpp short_free  # not long: stale\n")
        checked = run(root, "--allow", allow)
        if checked.returncode != 1:
            failures.append(f"allow check exited {checked.returncode}, want 1")
        if "planted.cpp templated is over 10 lines and not an allowed exception" not in checked.stderr:
            failures.append(f"the unlisted long function was not named:\n{checked.stderr}")
        if "planted.cpp short_free is listed as an exception but is not over 10 lines" not in checked.stderr:
            failures.append(f"the stale exception was not named:\n{checked.stderr}")
        with open(allow, "w") as f:
            f.write("planted.cpp long_free\nplanted.cpp Widget\nplanted.cpp inline_long\nplanted.cpp templated\n")
        if run(root, "--allow", allow).returncode != 0:
            failures.append("a complete allow list did not pass")
        if run(root, "no-such-folder").returncode != 2:
            failures.append("a missing path did not exit 2")
    for failure in failures:
        print("FAIL:", failure)
    print("ok" if not failures else f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
