#!/usr/bin/env python3
"""Writes docs/simgpu-api-coverage.md: for each simulated library, by header group, which exported
functions are modelled and which are the generated stubs that return the documented "not
supported" answer (and name themselves when called: docs/simgpu.md, "Unmodelled functions").

A function is modelled when the built library defines it strongly (nm type T); the generated stubs
are weak (W). Groups are the headers' Doxygen \\defgroup sections, or the header itself where it has
none (cuDNN: graph, ops, cnn, adv).

usage: coverage.py INCLUDE_DIR SIMGPU_LIB_DIR OUT_MD
       coverage.py --check INCLUDE_DIR SIMGPU_LIB_DIR DOC_MD
  --check: exit 1, naming the differences, when DOC_MD is not what the built libraries give (a
  function it lists as modelled is a stub, or the other way round).
"""
import os
import re
import subprocess
import sys

# title, library file, headers, name pattern, API macros before the name (None: any return type),
# what an unmodelled function returns.
LIBRARIES = [
    ("Driver", "libcuda.so.1", ["cuda.h", "cudaProfiler.h"], r"cu[A-Z]\w*", "CUDAAPI", "CUDA_ERROR_NOT_SUPPORTED"),
    ("Runtime", "libcudart.so.13", ["cuda_runtime_api.h", "cuda_profiler_api.h", "cuda_gl_interop.h",
                                    "cuda_egl_interop.h", "cuda_vdpau_interop.h"], r"cuda[A-Z]\w*", "CUDARTAPI",
     "cudaErrorNotSupported"),
    ("cuBLAS", "libcublas.so.13", ["cublas_api.h", "cublas.h", "cublasXt.h"], r"cublas(?!Lt)\w*",
     "CUBLASWINAPI|CUBLASAPI", "CUBLAS_STATUS_NOT_SUPPORTED"),
    ("cuBLASLt", "libcublasLt.so.13", ["cublasLt.h"], r"cublasLt\w*", "CUBLASWINAPI|CUBLASAPI",
     "CUBLAS_STATUS_NOT_SUPPORTED"),
    ("cuDNN", "libcudnn.so.9", ["cudnn_graph_v9.h", "cudnn_ops_v9.h", "cudnn_cnn_v9.h", "cudnn_adv_v9.h"],
     r"cudnn\w*", "CUDNNWINAPI", "CUDNN_STATUS_NOT_SUPPORTED"),
    ("cuRAND", "libcurand.so.10", ["curand.h"], r"curand\w*", "CURANDAPI", "CURAND_STATUS_TYPE_ERROR"),
    ("cuFFT", "libcufft.so.12", ["cufft.h", "cufftXt.h"], r"cufft\w*", "CUFFTAPI", "CUFFT_NOT_SUPPORTED"),
    ("cuSPARSE", "libcusparse.so.12", ["cusparse.h"], r"cusparse\w*", "CUSPARSEAPI", "CUSPARSE_STATUS_NOT_SUPPORTED"),
    ("cuSOLVER", "libcusolver.so.12", ["cusolverDn.h", "cusolverSp.h", "cusolverRf.h",
                                       "cusolverSp_LOWLEVEL_PREVIEW.h", "cusolver_common.h"], r"cusolver\w*",
     "CUSOLVERAPI", "CUSOLVER_STATUS_NOT_SUPPORTED"),
    ("NVRTC", "libnvrtc.so.13", ["nvrtc.h"], r"nvrtc\w*", None, "NVRTC_ERROR_INVALID_PROGRAM"),
    ("nvJitLink", "libnvJitLink.so.13", ["nvJitLink.h"], r"__nvJitLink\w*|nvJitLink\w*", None,
     "NVJITLINK_ERROR_INTERNAL"),
    ("NCCL", "libnccl.so.2", ["nccl.h"], r"p?nccl\w*", None, "ncclInvalidUsage"),
]


UNDECLARED = "Not declared in a public header"


def exports(path):
    out = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True, text=True, check=True).stdout
    kinds = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TW":
            kinds[parts[2].split("@")[0]] = parts[1]
    return kinds


def groups(include_dir, headers, prefix, macros):
    """name -> group title: the \\defgroup last opened before the name's first declaration (the
    header's name before any)."""
    result = {}
    before = r"(?:" + macros + r")\s+" if macros else r"[\w*]\s*[\s*]"
    for header in headers:
        path = os.path.join(include_dir, header)
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        marks = [(m.start(), m.group(1).strip().rstrip("*/").strip())
                 for m in re.finditer(r"\\defgroup\s+\w+\s+([^\n]+)", text)]
        # Comments blanked (same length), so that positions still match and prose is not code.
        code = re.sub(r"/\*.*?\*/|//[^\n]*", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)
        for m in re.finditer(before + r"(" + prefix + r")\s*\(", code):
            group = header
            for position, title in marks:
                if position > m.start():
                    break
                group = title
            result.setdefault(m.group(1), group)
    return result


def base_name(symbol):
    return re.sub(r"(_v\d+)?(_64)?(_ptds|_ptsz)?$", "", symbol)


def library_groups(include_dir, lib_dir, library, headers, prefix, macros):
    """group -> {base name: modelled}."""
    kinds = exports(os.path.join(lib_dir, library))
    group_of = groups(include_dir, headers, prefix, macros)
    by_group = {}
    for symbol, kind in kinds.items():
        name = base_name(symbol)
        group = group_of.get(name) or group_of.get(symbol) or UNDECLARED
        entry = by_group.setdefault(group, {}).setdefault(name, False)
        by_group[group][name] = entry or kind == "T"
    return by_group


def render(include_dir, lib_dir):
    lines = [
        "# Simulated GPU: API coverage",
        "",
        "Generated by `simgpu/exports/coverage.py` from the built libraries and the toolkit's headers (do not",
        "edit by hand; `cmake --build build --target simgpu_api_coverage` rewrites it, and the test",
        "`simgpu.api_coverage` fails when it is stale). Every function the real library exports is exported",
        "by the simulated one ([simgpu.md](simgpu.md#entry-points)); a function is **modelled** when the",
        "simulator implements it, otherwise it is a stub that returns the library's documented error for an",
        "unsupported feature and names itself on stderr ([simgpu.md](simgpu.md#unmodelled-functions)).",
        "Names are base names: `cuMemAlloc` stands for `cuMemAlloc`, `cuMemAlloc_v2`, and per-thread-stream",
        "forms.",
        "",
        "Functions no public header declares have no documented signature and are never modelled. The",
        "runtime's and driver's are exported (stubs, or modelled where nvcc's generated code calls them);",
        "cuBLAS's and cuBLASLt's (`cublasLt_for_cublas_*`, ...: NVIDIA's private entry points between its",
        "own libraries, which the simulated stack replaces) are not exported at all. The last two columns",
        "count only the functions the public headers declare.",
        "",
        "| library | modelled | exported | modelled % | declared in a public header | modelled % of declared |",
        "|---|---|---|---|---|---|",
    ]
    sections = []
    for title, library, headers, prefix, macros, error in LIBRARIES:
        by_group = library_groups(include_dir, lib_dir, library, headers, prefix, macros)
        modelled = sum(v for g in by_group.values() for v in g.values())
        total = sum(len(g) for g in by_group.values())
        declared = {g: v for g, v in by_group.items() if g != UNDECLARED}
        declared_total = sum(len(g) for g in declared.values())
        declared_modelled = sum(v for g in declared.values() for v in g.values())
        lines.append(f"| {title} (`{library}`) | {modelled} | {total} | {100.0 * modelled / max(total, 1):.1f} "
                     f"| {declared_total} | {100.0 * declared_modelled / max(declared_total, 1):.1f} |")
        sections += [f"## {title} (`{library}`): {modelled} of {total} functions modelled", "",
                     f"Not modelled: `{error}`.", "",
                     "| group | modelled | not modelled |", "|---|---|---|"]
        for group in sorted(by_group):
            names = by_group[group]
            yes = ", ".join(f"`{n}`" for n in sorted(n for n, v in names.items() if v)) or "—"
            no = sorted(n for n, v in names.items() if not v)
            no_text = f"{len(no)}: " + ", ".join(no) if no else "—"
            sections.append(f"| {group} | {yes} | {no_text} |")
        sections.append("")
    return "\n".join(lines + [""] + sections)


def modelled_names(markdown):
    """library file -> the names a coverage page lists as modelled (its tables' second column)."""
    result, library = {}, None
    for line in markdown.splitlines():
        heading = re.match(r"## .*\(`([^`]+)`\)", line)
        if heading:
            library = heading.group(1)
            result.setdefault(library, set())
        elif library and line.startswith("| ") and not line.startswith("| group"):
            cells = line.split(" | ")
            if len(cells) >= 3:
                result[library].update(re.findall(r"`(\w+)`", cells[1]))
    return result


def main():
    args = sys.argv[1:]
    check = args[:1] == ["--check"]
    if check:
        args = args[1:]
    if len(args) != 3:
        sys.exit(__doc__)
    include_dir, lib_dir, out_md = args
    text = render(include_dir, lib_dir)
    if not check:
        with open(out_md, "w") as f:
            f.write(text)
        return
    with open(out_md) as f:
        current = f.read()
    if current != text:
        was, now = modelled_names(current), modelled_names(text)
        for library in sorted(set(was) | set(now)):
            stubs = sorted(was.get(library, set()) - now.get(library, set()))
            added = sorted(now.get(library, set()) - was.get(library, set()))
            if stubs:
                print(f"{library}: listed as modelled, but the built library has no strong definition "
                      f"(a stub, or not exported): {', '.join(stubs)}")
            if added:
                print(f"{library}: modelled but listed as not modelled: {', '.join(added)}")
        print(f"{out_md} is stale: regenerate it with `cmake --build build --target simgpu_api_coverage`")
        sys.exit(1)
    print(f"{out_md} matches the built libraries")


if __name__ == "__main__":
    main()
