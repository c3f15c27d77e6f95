#!/usr/bin/env python3
"""Generates the export tables of the simulated CUDA libraries that are mostly not modelled
(simgpu/stubs/<library>.inc) from the toolkit's headers.

Every function a header declares becomes one line `TBDSIM_STUB_<KIND>(name)`, where KIND says what
the function returns: STATUS (the library's status enum), STRING (const char *), VALUE (an integer
such as size_t), VOID. simgpu/stubs/stub_macros.h turns each line into a weak function that returns the
library's documented "not supported" status; a modelled function (a strong definition elsewhere in
the same library) replaces it at link time.

    scripts/gen_simgpu_stubs.py [CUDA_INCLUDE_DIR]   (default /usr/local/cuda/include)
    scripts/gen_simgpu_stubs.py INCLUDE_DIR LIBRARY...   only those (EXTRA_LIBRARIES: headers from pip)

Only run when the toolkit changes; the output is committed so that builds need no Python.
"""
import os
import re
import sys

LIBRARIES = {
    # library: (headers, name prefixes, status type)
    "cudnn": (["cudnn_graph_v9.h", "cudnn_ops_v9.h", "cudnn_cnn_v9.h", "cudnn_adv_v9.h"], ["cudnn"], "cudnnStatus_t"),
    "curand": (["curand.h"], ["curand"], "curandStatus_t"),
    "cufft": (["cufft.h", "cufftXt.h"], ["cufft"], "cufftResult"),
    "cusparse": (["cusparse.h"], ["cusparse"], "cusparseStatus_t"),
    "cusolver": (["cusolverDn.h", "cusolverSp.h", "cusolverRf.h", "cusolverSp_LOWLEVEL_PREVIEW.h", "cusolver_common.h"],
                 ["cusolver"], "cusolverStatus_t"),
    "nvrtc": (["nvrtc.h"], ["nvrtc"], "nvrtcResult"),
    "nvJitLink": (["nvJitLink.h"], ["__nvJitLink", "nvJitLink"], "nvJitLinkResult"),
}
# Libraries PyTorch links that the toolkit in /usr/local/cuda does not ship: their headers come with
# their pip packages (nvidia-cufile, nvidia-cusparselt-cu13: include/; nvidia-nvshmem-cu13:
# nvshmem/include/). Generated only when named on the command line, with that include folder.
EXTRA_LIBRARIES = {
    # PyTorch 2.15 links functions of NCCL 2.32 (ncclCommSuspend, ncclCommGrow, device communicators,
    # ...) that the toolkit's nccl.h (2.28) lacks: the header of the nvidia-nccl-cu13 pip package.
    "nccl": (["nccl.h", "nccl_device/host.h"], ["nccl", "pnccl"], "ncclResult_t"),
    "cufile": (["cufile.h"], ["cuFile"], "CUfileError_t"),
    "cusparseLt": (["cusparseLt.h"], ["cusparseLt"], "cusparseStatus_t"),
    # nvshmemid_* are declared in the public device_host/ header and called by libtorch_nvshmem.so.
    # The driver's management library, which PyTorch dlopens (expandable segments, out-of-memory
    # messages); header from the nvidia-nvml-dev pip package.
    "nvidia-ml": (["nvml.h"], ["nvml"], "nvmlReturn_t"),
    "nvshmem_host": (["host/nvshmem_api.h", "host/nvshmemx_api.h", "host/nvshmem_coll_api.h",
                      "host/nvshmemx_coll_api.h", "device_host/nvshmem_common.cuh"],
                     ["nvshmem_", "nvshmemx_", "nvshmemid_"], "int"),
}

API_MACROS = r"(?:CUDNNWINAPI|CURANDAPI|CUFFTAPI|CUSPARSEAPI|CUSOLVERAPI|CUDARTAPI|CUSPARSELT_API|DECLDIR|NVSHMEMI_HOSTDEVICE_PREFIX|NVSHMEMI_HOST_ONLY|NVSHMEMI_DEVICE_PREFIX)"


def strip(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    # Preprocessor lines (macros that look like calls) are not declarations.
    text = re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", " ", text, flags=re.M)
    # Macro calls standing alone on a line, which end in no ';' (NVSHMEMI_REPT_FOR_SIZES(DECL)).
    text = re.sub(r"^[ \t]*[A-Z][A-Z0-9_]*\([A-Z0-9_, ]*\)[ \t]*$", " ", text, flags=re.M)
    # Deprecation markers, some with an argument: CUSPARSE_DEPRECATED_REPLACE_WITH(cusparseSpMM).
    text = re.sub(r"\b[A-Z_]*DEPRECATED\w*\s*(?:\([^()]*\))?", " ", text)
    return re.sub(r"\s+", " ", text)


def declarations(text, prefixes, status_type):
    """Function declarations in preprocessed-away, comment-free header text: each statement (split at
    ';', '{', '}') whose first call-like token names a function with one of the prefixes."""
    names = {}
    name_pattern = re.compile(r"^(" + "|".join(prefixes) + r")\w*$")
    for statement in re.split(r"[;{}]", text):
        head, paren, _ = statement.partition("(")
        if not paren:
            continue
        tokens = re.findall(r"[A-Za-z_]\w*|\*", head)
        if len(tokens) < 2 or not name_pattern.match(tokens[-1]):
            continue
        name, before = tokens[-1], tokens[:-1]
        # Header-only wrappers (nvJitLink's `static inline nvJitLinkCreate`) are exported too.
        if any(t in ("return", "typedef", "define") for t in before):
            continue
        before = [t for t in before if not re.fullmatch(API_MACROS, t) and t not in ("extern", "static", "inline")
                  and not t.startswith("CUSPARSE_DEPRECATED") and not t.startswith("CUDNN_DEPRECATED")]
        if not before:
            continue
        if "*" in before:
            kind = "STRING" if "char" in before else "POINTER"
        elif before[-1] == status_type:
            kind = "STATUS"
        elif before[-1] == "void":
            kind = "VOID"
        elif before[-1] in ("size_t", "int", "unsigned", "long", "int64_t") or before[-1].endswith("_t"):
            kind = "VALUE"  # integers and enums other than the status
        else:
            continue  # not a declaration
        names.setdefault(name, kind)
    return names


def main():
    include = sys.argv[1] if len(sys.argv) > 1 else "/usr/local/cuda/include"
    out_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "simgpu", "stubs")
    chosen = sys.argv[2:]
    unknown = [name for name in chosen if name not in LIBRARIES and name not in EXTRA_LIBRARIES]
    if unknown:
        sys.exit("gen_simgpu_stubs.py: unknown library " + ", ".join(unknown))
    every = dict(LIBRARIES, **EXTRA_LIBRARIES)
    for library, (headers, prefixes, status_type) in every.items():
        if (chosen and library not in chosen) or (not chosen and library in EXTRA_LIBRARIES):
            continue
        names = {}
        for header in headers:
            with open(os.path.join(include, header)) as f:
                for name, kind in declarations(strip(f.read()), prefixes, status_type).items():
                    names.setdefault(name, kind)
        path = os.path.join(out_dir, library + ".inc")
        with open(path, "w") as out:
            out.write("// Generated by scripts/gen_simgpu_stubs.py from " + ", ".join(headers) + ". Do not edit.\n")
            for name in sorted(names):
                out.write("TBDSIM_STUB_%s(%s)\n" % (names[name], name))
        print("%s: %d functions" % (path, len(names)))


if __name__ == "__main__":
    main()
