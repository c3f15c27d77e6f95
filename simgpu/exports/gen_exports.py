#!/usr/bin/env python3
"""Generates the simulated libraries' export tables from the CUDA toolkit's public headers.

Every function a public header declares becomes an exported symbol of the simulated library. The
generated file defines each one as a *weak* stub of its return-type shape (status codes return the
library's NOT_SUPPORTED code, void returns nothing, numbers return 0, strings a fixed text; the
runtime's status stub also makes cudaErrorNotSupported the thread's last error) that names itself once
on stderr and in the TBDSIM_NOT_MODELLED file (simgpu/include/simgpu/not_modelled.h). A modelled
function is an ordinary (strong) definition elsewhere in the library, which the linker prefers, so
this file needs no list of what is modelled. The stubs share one section (tbdsim_stubs), which
tbdsim_is_stub() tests an address against.

For the driver it also writes the cuGetProcAddress table from cudaTypedefs.h (and
cudaProfilerTypedefs.h): every (name, version)
there, mapped to its symbol (the oldest version is the plain name, the next ones _v2, _v3, ...; the
newest is what cuda.h #defines the name to), with its per-thread-stream twin where one exists.

Names the toolkit's own runtime or driver exports but no public header declares get the status stub
too when --real LIBRARY is given (the build passes it for cuda and cudart only): nvcc's generated code
may call such runtime entry points (CUPTI's public callback ids name them: __cudaRegisterHostVar,
__cudaRegisterUnifiedTable, __cudaGetProcAddress), so a program built by another nvcc must still load.
Their signatures are unknown, so they are never modelled. cuBLAS's and cuBLASLt's undeclared names
(cublasLt_for_cublas_*, ...) are NVIDIA's private entry points between its own libraries, which the
simulated stack replaces: they are not exported at all.

usage: gen_exports.py LIBRARY INCLUDE_DIRS OUT_CPP [OUT_PROC_TABLE] [--real TOOLKIT_LIBRARY]
  writes OUT_CPP, and the declared names one per line next to it (OUT_CPP with .symbols)
  LIBRARY: cuda | cudart | cublas | cublasLt
"""
import os
import re
import subprocess
import sys

HEADERS = {
    "cuda": ["cuda.h", "cudaProfiler.h"],  # the stub exports no graphics-interop entry points
    "cudart": ["cuda_runtime_api.h", "cuda_profiler_api.h", "cuda_gl_interop.h", "cuda_egl_interop.h",
               "cuda_vdpau_interop.h"],
    "cublas": ["cublas_api.h", "cublas.h", "cublasXt.h"],
    "cublasLt": ["cublasLt.h"],
}
PREFIX = {"cuda": r"cu[A-Z]\w*", "cudart": r"cuda[A-Z]\w*", "cublas": r"cublas(?!Lt)\w*",
          "cublasLt": r"cublasLt\w*"}
# The library's status type and its documented "not supported" value.
STATUS = {"CUresult": 801, "cudaError_t": 801, "cublasStatus_t": 15, "cublasStatus": 15}  # *_NOT_SUPPORTED
# Names cuda.h maps to another entry point of the same signature, served under both names.
EXTRA_ENTRIES = [("cuGraphInstantiate", 12000, "cuGraphInstantiateWithFlags")]
NOISE = {"extern", "CUDAAPI", "CUDARTAPI", "CUBLASAPI", "CUBLASWINAPI", "__host__", "__device__",
         "__cudart_builtin__", "__CUDA_DEPRECATED", "CUDART_CB", "static", "inline", "const"}


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def logical_lines(text):
    return text.replace("\\\n", " ").split("\n")


def read(include_dirs, name):
    """The header from the first of the ';'-separated directories that has it ("" if none)."""
    paths = [os.path.join(d, name) for d in include_dirs.split(";") if d]
    path = next((p for p in paths if os.path.exists(p)), None)
    if path is None:
        return ""
    with open(path, encoding="utf-8", errors="replace") as f:
        return strip_comments(f.read())


def declarations(text, prefix):
    """(return type, name, parameters) of each function declaration outside #define lines."""
    body = "\n".join(line for line in logical_lines(text) if not line.lstrip().startswith("#"))
    body = re.sub(r"__dv\([^)]*\)", "", body)
    body = re.sub(r"__CUDA_DEPRECATED\s*\([^)]*\)", "", body)
    found = []
    pieces = re.split(r"([;{}])", body)
    for chunk, end in zip(pieces[0::2], pieces[1::2] + [""]):
        if end != ";":
            continue  # a definition (an inline wrapper in the header), not an exported function
        m = re.match(r"\s*(?:extern\s+\"C\"\s*)?(.*?)\b(" + prefix + r")\s*\((.*)\)\s*$", chunk, re.S)
        if not m or "typedef" in m.group(1) or "(" in m.group(1) or "=" in chunk:
            continue
        words = [w for w in re.findall(r"[\w*]+|\*", m.group(1)) if w not in NOISE]
        ret = " ".join(words).replace(" *", "*")
        if not ret:
            continue
        found.append((ret, m.group(2), " ".join(m.group(3).split())))
    return found


def renames(text):
    """#define NAME TARGET, with cuda.h's per-thread wrappers resolved to both forms."""
    out = {}
    for line in logical_lines(text):
        m = re.match(r"\s*#\s*define\s+(\w+)\s+(.*)$", line)
        if not m:
            continue
        name, value = m.group(1), m.group(2).strip()
        w = re.match(r"__CUDA_API_(PTDS|PTSZ)\((\w+)\)|__CUDART_API_(PTDS|PTSZ)\((\w+)\)", value)
        if w:
            kind, target = (w.group(1), w.group(2)) if w.group(1) else (w.group(3), w.group(4))
            out.setdefault(name, set()).update({target, target + "_" + kind.lower()})
        elif re.fullmatch(r"\w+", value):
            out.setdefault(name, set()).add(value)
    return out


def shape(ret, library):
    if ret in STATUS:
        return "status"
    if ret == "void":
        return "void"
    if ret in ("float", "double", "cuComplex", "cuFloatComplex"):
        return "fp_zero"
    if ret in ("cuDoubleComplex",):
        return "dcomplex_zero"
    if ret in ("int", "unsigned", "unsigned int", "size_t", "long", "char", "cudaDataType"):
        return "int_zero"
    if ret.endswith("*") or ret.startswith("const char"):
        return "null" if "char" not in ret else "string"
    return None  # a struct returned by value: must be modelled by hand


def library_symbols(library, include_dir):
    text = "\n".join(read(include_dir, h) for h in HEADERS[library])
    decls = declarations(text, PREFIX[library])
    names = renames(text)
    symbols = {}
    for ret, name, _ in decls:
        for symbol in {name} | names.get(name, set()):
            if re.fullmatch(PREFIX[library], symbol) and "WGL" not in symbol:  # WGL: Windows only
                symbols.setdefault(symbol, ret)
    return symbols, names


def typedef_entries(include_dir, cuda_renames):
    """(name, version, per_thread_kind or '', parameters) from cudaTypedefs.h."""
    # cudaProfilerTypedefs.h holds cuProfilerStart/Stop's (the graphics-interop ones are not exported).
    text = read(include_dir, "cudaTypedefs.h") + read(include_dir, "cudaProfilerTypedefs.h")
    entries = []
    for m in re.finditer(r"typedef\s+CUresult\s*\(\s*CUDAAPI\s*\*\s*PFN_(\w+?)_v(\d+)(_ptds|_ptsz)?\s*\)\s*\(([^;]*)\)\s*;", text):
        params = re.sub(r"\b\w+(?=\s*(,|$|\[))", "", " ".join(m.group(4).split()))  # drop parameter names
        entries.append((m.group(1), int(m.group(2)), (m.group(3) or "")[1:], params))
    return entries


def proc_table(include_dir, cuda_renames, symbols):
    entries = typedef_entries(include_dir, cuda_renames)
    plain = {}
    for name, version, pt, params in entries:
        if not pt:
            plain.setdefault(name, {})[version] = params
    rows = []
    skipped = []
    symbol_of = {}
    for name, versions in sorted(plain.items()):
        ordered = sorted(versions)
        for i, version in enumerate(ordered):
            symbol = name if i == 0 else f"{name}_v{i + 1}"
            if i == len(ordered) - 1:
                targets = [t for t in cuda_renames.get(name, ())
                           if re.fullmatch(re.escape(name) + r"_v\d+", t)]
                if len(targets) == 1:
                    symbol = targets[0]
            if symbol not in symbols:
                skipped.append(f"{name}@{version}->{symbol}")
                continue
            symbol_of[(name, version)] = symbol
    for name, version, pt, params in entries:
        if not pt:
            continue
        # The per-thread twin of the newest plain version at or below it with the same signature.
        same = [v for v, p in plain.get(name, {}).items() if p == params and v <= version and (name, v) in symbol_of]
        if not same:
            candidates = [v for v in plain.get(name, {}) if (name, v) in symbol_of]
            same = [max(candidates)] if candidates else []
        if same and symbol_of[(name, max(same))] + "_" + pt in symbols:  # as cuda.h declares it
            base = symbol_of[(name, max(same))]
            symbol_of.setdefault((name, max(same), "pt"), base + "_" + pt)
    for name, version, symbol in EXTRA_ENTRIES:
        if symbol in symbols:
            rows.append(f"ENTRY({name}, {version}, {symbol}, {symbol})")
    for (key, symbol) in sorted(symbol_of.items(), key=lambda kv: (kv[0][0], kv[0][1], len(kv[0]))):
        if len(key) == 3:
            continue
        name, version = key
        pt_symbol = symbol_of.get((name, version, "pt"))
        params = plain[name][version]
        # Older entries with the same signature as a newer one are served by the newer one when
        # the older symbol itself is not modelled (the real driver answers them the same way).
        same_as = max((v for v, p in plain[name].items() if p == params and v > version and (name, v) in symbol_of),
                      default=None)
        alt = symbol_of[(name, same_as)] if same_as else symbol
        if pt_symbol:
            rows.append(f"ENTRY_PT({name}, {version}, {symbol}, {pt_symbol}, {alt})")
        else:
            rows.append(f"ENTRY({name}, {version}, {symbol}, {alt})")
    return rows, skipped


def exported_names(path):
    """Function names a shared library exports (nm -D), or none when it or nm is missing."""
    if not path or not os.path.exists(path):
        return set()
    try:
        out = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return set()
    names = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TtWi":
            names.add(parts[2].split("@")[0])
    return names


def main():
    args = sys.argv[1:]
    real = None
    if "--real" in args:
        i = args.index("--real")
        real = args[i + 1] if i + 1 < len(args) else None
        del args[i:i + 2]
    library, include_dir, out_cpp = args[0], args[1], args[2]
    symbols, cuda_renames = library_symbols(library, include_dir)
    declared = dict(symbols)
    undocumented = sorted(n for n in exported_names(real) if n not in symbols)
    rows = []
    if library == "cuda" and len(args) > 3:
        rows, skipped = proc_table(include_dir, cuda_renames, symbols)
        for s in skipped:
            print(f"gen_exports: cudaTypedefs.h entry without a declared symbol: {s}", file=sys.stderr)
        with open(args[3], "w") as f:
            f.write("// Generated by simgpu/exports/gen_exports.py from cudaTypedefs.h and cuda.h. Do not edit.\n")
            f.write("// ENTRY(name, version, symbol, same-signature newer symbol) / ENTRY_PT(..., per-thread symbol, ...)\n")
            f.write("\n".join(rows) + "\n")
    status_code = {"cuda": 801, "cudart": 801, "cublas": 15, "cublasLt": 15}[library]
    status_name = {"cuda": "CUDA_ERROR_NOT_SUPPORTED", "cudart": "cudaErrorNotSupported",
                   "cublas": "CUBLAS_STATUS_NOT_SUPPORTED", "cublasLt": "CUBLAS_STATUS_NOT_SUPPORTED"}[library]
    # The runtime remembers every error as the thread's last error (cudaGetLastError), unsupported
    # calls included: its stub goes through the runtime's own recorder (simgpu/runtime/errors.cpp).
    status_value = "tbdsim_cudart_not_supported()" if library == "cudart" else str(status_code)
    by_shape = {}
    unhandled = []
    for symbol, ret in sorted(symbols.items()):
        s = shape(ret, library)
        if s is None:
            unhandled.append(symbol)
            continue
        by_shape.setdefault(s, []).append(symbol)
    lines = [
        f"// Generated by simgpu/exports/gen_exports.py from the toolkit's headers for lib{library}. Do not edit.",
        "// Each declared function is a weak stub for its return shape that names itself once",
        "// (simgpu/not_modelled.h) and returns the library's \"not supported\" answer; a modelled function",
        "// (a strong definition elsewhere in the library) replaces it at link time. The stubs' prototypes",
        "// are not the real ones: only the symbol and the return register matter (the caller owns its",
        "// arguments). They live in section tbdsim_stubs, so that the library can tell a stub's address",
        "// from a modelled function's (tbdsim_is_stub).",
        "#include <simgpu/not_modelled.h>",
        "namespace {",
        "struct DoubleComplex { double x, y; };",
        "}",
        "extern \"C\" {",
        *(["int tbdsim_cudart_not_supported();"] if library == "cudart" else []),
        "extern const char __start_tbdsim_stubs[] __attribute__((visibility(\"hidden\")));",
        "extern const char __stop_tbdsim_stubs[] __attribute__((visibility(\"hidden\")));",
        "__attribute__((visibility(\"hidden\"))) bool tbdsim_is_stub(const void* function) {",
        "    const char* f = static_cast<const char*>(function);",
        "    return f >= __start_tbdsim_stubs && f < __stop_tbdsim_stubs;",
        "}",
        "}",
        "#define TBDSIM_STUB(type, symbol, result, value)                                                   \\",
        "    extern \"C\" __attribute__((weak, visibility(\"default\"), section(\"tbdsim_stubs\"))) type symbol() { \\",
        "        tbdsim_not_modelled(#symbol, result);                                                      \\",
        "        return value;                                                                              \\",
        "    }",
        f"#define TBDSIM_UNSUPPORTED_status(symbol) TBDSIM_STUB(int, symbol, \"{status_name}\", {status_value})",
        "#define TBDSIM_UNSUPPORTED_void(symbol) TBDSIM_STUB(void, symbol, \"nothing\", )",
        "#define TBDSIM_UNSUPPORTED_fp_zero(symbol) TBDSIM_STUB(double, symbol, \"0\", 0.0)",
        "#define TBDSIM_UNSUPPORTED_dcomplex_zero(symbol) TBDSIM_STUB(DoubleComplex, symbol, \"0\", (DoubleComplex{0.0, 0.0}))",
        "#define TBDSIM_UNSUPPORTED_int_zero(symbol) TBDSIM_STUB(long, symbol, \"0\", 0)",
        "#define TBDSIM_UNSUPPORTED_null(symbol) TBDSIM_STUB(void*, symbol, \"NULL\", nullptr)",
        "#define TBDSIM_UNSUPPORTED_string(symbol) TBDSIM_STUB(const char*, symbol, \"a placeholder text\", \\",
        "                                                      \"not supported by the simulated GPU\")",
    ]
    for s, names in sorted(by_shape.items()):
        for n in names:
            lines.append(f"TBDSIM_UNSUPPORTED_{s}({n})")
    if undocumented:
        lines.append("// Exported by the toolkit's library, declared in no public header: never modelled.")
        for n in undocumented:
            lines.append(f"TBDSIM_UNSUPPORTED_status({n})")
    if unhandled:
        lines.append("// Returned by value, modelled by hand: " + " ".join(unhandled))
    with open(out_cpp, "w") as f:
        f.write("\n".join(lines) + "\n")
    # The declared names, for the export test (simgpu/tests/check_exports.sh).
    with open(os.path.splitext(out_cpp)[0] + ".symbols", "w") as f:
        f.write("\n".join(sorted(declared)) + "\n")


if __name__ == "__main__":
    main()
