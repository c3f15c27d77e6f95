#!/usr/bin/env python3
"""Generates the entry points of cuBLAS's generic routine families (routine.h) from the toolkit's
headers, so that each signature is exactly the header's.

Every function of cublas_api.h and cublasXt.h whose name FAMILIES classifies becomes a strong
definition that copies its parameters, by their documented names (PARAMETERS), into a RoutineArgs
and calls run_routine (run_xt_routine for cublasXt) with its family and element type. A parameter
name the table does not know stops the generator, so a new toolkit cannot silently drop an
argument.

usage: gen_routines.py INCLUDE_DIRS OUT_CPP  (INCLUDE_DIRS: ';'-separated)
"""
import os
import re
import sys

# (regex on the name without "cublas", "_v2" and "_64", family, element type: a group number of the
# regex giving the type letter, or a fixed letter, or "Ex" for the cudaDataType argument).
L2 = "gbmv|sbmv|hbmv|symv|hemv|spmv|hpmv|syr2|her2|spr2|hpr2|syr|her|spr|hpr|tbmv|tbsv|tpmv|tpsv|trmv|trsv"
FAMILIES = [
    (r"([SDCZ])swap", "Swap", 1), (r"SwapEx", "Swap", "Ex"),
    (r"([SD])rot", "Rot", 1), (r"([CZ])rot", "Rot", 1), (r"Csrot", "Rot", "C"), (r"Zdrot", "Rot", "Z"),
    (r"RotEx", "Rot", "Ex"),
    (r"([SD])rotm", "Rotm", 1), (r"RotmEx", "Rotm", "Ex"),
    (r"([SDCZ])rotg", "Rotg", 1), (r"RotgEx", "Rotg", "Ex"),
    (r"([SD])rotmg", "Rotmg", 1), (r"RotmgEx", "Rotmg", "Ex"),
    (r"I([sdcz])amax", "Iamax", 1), (r"IamaxEx", "Iamax", "Ex"),
    (r"I([sdcz])amin", "Iamin", 1), (r"IaminEx", "Iamin", "Ex"),
    (r"AxpyEx", "AxpyEx", "Ex"), (r"DotEx", "DotEx", "Ex"), (r"DotcEx", "DotcEx", "Ex"),
    (r"ScalEx", "ScalEx", "Ex"), (r"Nrm2Ex", "Nrm2Ex", "Ex"), (r"AsumEx", "AsumEx", "Ex"),
    (r"CopyEx", "CopyEx", "Ex"),
    (r"([SDCZ])(" + L2 + ")", None, 1),
    (r"([SDCZ])gemv(Strided)?Batched", "GemvBatched", 1),
    (r"HSHgemv(Strided)?Batched", "GemvBatched", "H"), (r"HSSgemv(Strided)?Batched", "GemvBatched", "H"),
    (r"TSTgemv(Strided)?Batched", "GemvBatched", "T"), (r"TSSgemv(Strided)?Batched", "GemvBatched", "T"),
    (r"([CZ])gemm((Strided)?Batched)?", "Gemm", 1), (r"CgemmEx", "Gemm", "Ex"),
    (r"([CZ])gemm3m((Strided)?Batched)?", "Gemm3m", 1), (r"Cgemm3mEx", "Gemm3m", "Ex"),
    (r"Uint8gemmBias", "Gemm", "I"),
    (r"([SDCZ])symm", "Symm", 1), (r"([CZ])hemm", "Hemm", 1),
    (r"([SDCZ])syrk", "Syrk", 1), (r"([CZ])herk", "Herk", 1), (r"Csyrk(3m)?Ex", "Syrk", "Ex"),
    (r"Cherk(3m)?Ex", "Herk", "Ex"),
    (r"([SDCZ])syr2k", "Syr2k", 1), (r"([CZ])her2k", "Her2k", 1),
    (r"([SDCZ])syrkx", "Syrkx", 1), (r"([CZ])herkx", "Herkx", 1),
    (r"([SDCZ])trmm", "Trmm", 1), (r"([SDCZ])trsm", "Trsm", 1), (r"([SDCZ])trsmBatched", "TrsmBatched", 1),
    (r"([SDCZ])geam", "Geam", 1), (r"([SDCZ])dgmm", "Dgmm", 1),
    (r"([SDCZ])getrfBatched", "Getrf", 1), (r"([SDCZ])getriBatched", "Getri", 1),
    (r"([SDCZ])getrsBatched", "Getrs", 1), (r"([SDCZ])matinvBatched", "Matinv", 1),
    (r"([SDCZ])geqrfBatched", "Geqrf", 1), (r"([SDCZ])gelsBatched", "Gels", 1),
    (r"([SDCZ])tpttr", "Tpttr", 1), (r"([SDCZ])trttp", "Trttp", 1),
    # cublasXt: host-or-device operands, run on the handle's first device.
    (r"Xt([SDCZ])gemm", "Gemm", 1), (r"Xt([SDCZ])symm", "Symm", 1), (r"Xt([CZ])hemm", "Hemm", 1),
    (r"Xt([SDCZ])syrk", "Syrk", 1), (r"Xt([CZ])herk", "Herk", 1), (r"Xt([SDCZ])syr2k", "Syr2k", 1),
    (r"Xt([CZ])her2k", "Her2k", 1), (r"Xt([SDCZ])syrkx", "Syrkx", 1), (r"Xt([CZ])herkx", "Herkx", 1),
    (r"Xt([SDCZ])trmm", "Trmm", 1), (r"Xt([SDCZ])trsm", "Trsm", 1), (r"Xt([SDCZ])spmm", "Spmm", 1),
]

# Parameter name -> (RoutineArgs field, how it is stored: int (an enum), i64 (a size), ptr, or
# None: not needed by the model (its value is still part of the exact signature)).
PARAMETERS = {
    "side": ("side", "int"), "mode": ("side", "int"), "uplo": ("uplo", "int"), "trans": ("trans", "int"), "transa": ("transa", "int"),
    "transb": ("transb", "int"), "diag": ("diag", "int"),
    "m": ("m", "i64"), "n": ("n", "i64"), "k": ("k", "i64"), "kl": ("kl", "i64"), "ku": ("ku", "i64"),
    "nrhs": ("nrhs", "i64"), "lda": ("lda", "i64"), "ldb": ("ldb", "i64"), "ldc": ("ldc", "i64"),
    "lda_inv": ("ldc", "i64"), "incx": ("incx", "i64"), "incy": ("incy", "i64"),
    "batchCount": ("batch", "i64"), "batchSize": ("batch", "i64"),
    "alpha": ("alpha", "ptr"), "beta": ("beta", "ptr"),
    "A": ("a", "ptr"), "Aarray": ("a", "ptr"), "AP": ("a", "ptr"), "B": ("b", "ptr"), "Barray": ("b", "ptr"),
    "C": ("c", "ptr"), "Carray": ("c", "ptr"), "Ainv": ("c", "ptr"),
    "x": ("x", "ptr"), "xarray": ("x", "ptr"), "y": ("y", "ptr"), "yarray": ("y", "ptr"),
    "result": ("result", "ptr"), "info": ("host_info", "intptr"), "devInfoArray": ("device_info", "intptr"),
    "a": ("rot_a", "ptr"), "b": ("rot_b", "ptr"), "c": ("rot_c", "ptr"), "s": ("rot_s", "ptr"),
    "d1": ("d1", "ptr"), "d2": ("d2", "ptr"), "x1": ("x1", "ptr"), "y1": ("y1", "ptr"), "param": ("param", "ptr"),
    "xType": ("data_type", "int"), "Atype": ("data_type", "int"), "abType": ("data_type", "int"),
    "d1Type": ("data_type", "int"), "resultType": ("result_type", "int"),
    "strideA": (None, None), "strideB": (None, None), "strideC": (None, None), "stridex": (None, None),
    "stridey": (None, None), "yType": (None, None), "Btype": (None, None), "Ctype": (None, None),
    "alphaType": (None, None), "csType": (None, None), "paramType": (None, None), "x1Type": (None, None),
    "y1Type": (None, None), "d2Type": (None, None), "executiontype": (None, None),
    "executionType": (None, None), "computeType": (None, None), "algo": (None, None),
    "P": (None, None), "devIpiv": (None, None), "TauArray": (None, None), "transc": (None, None),
    "A_bias": (None, None), "B_bias": (None, None), "C_bias": (None, None), "C_mult": (None, None),
    "C_shift": (None, None),
}

HEADERS = ["cublas_api.h", "cublasXt.h"]
# Families whose "info" is an array in device memory (one int per matrix), not a host int.
DEVICE_INFO_FAMILIES = {"Getrf", "Getri", "Matinv"}


def declarations(include_dir):
    for header in HEADERS:
        paths = [os.path.join(d, header) for d in include_dir.split(";") if d]
        path = next((p for p in paths if os.path.exists(p)), None)
        if path is None:
            sys.exit(f"gen_routines.py: {header} not found in {include_dir}")
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        text = re.sub(r"/\*.*?\*/|//[^\n]*", " ", text, flags=re.S)
        for m in re.finditer(r"cublasStatus_t\s+CUBLASWINAPI\s+(cublas\w+)\s*\(([^;{]*?)\)\s*;", text):
            yield m.group(1), " ".join(m.group(2).split())


def classify(name):
    base = re.sub(r"(_v2)?(_64)?$", "", name[len("cublas"):])
    for pattern, family, elem in FAMILIES:
        m = re.fullmatch(pattern, base)
        if not m:
            continue
        if family is None:  # level 2: the family is the routine's name
            family = m.group(2).capitalize()
        letter = m.group(elem).upper() if isinstance(elem, int) else elem
        return family, letter
    return None


def body(name, params, family, letter):
    xt = name.startswith("cublasXt")
    lines = ["    tbdsim::cublas::RoutineArgs args_;"]
    if name.endswith("_64"):
        lines.append("    args_.index64 = true;")
    for param in params.split(","):
        param = param.strip()
        pname = re.search(r"(\w+)\s*(\[\s*\])?$", param).group(1)
        if pname == "handle":
            if not xt:
                lines.append("    args_.handle = handle;")
            continue
        if pname not in PARAMETERS:
            sys.exit(f"gen_routines.py: {name}: unknown parameter {pname!r}; add it to PARAMETERS")
        field, kind = PARAMETERS[pname]
        if pname == "info" and family in DEVICE_INFO_FAMILIES:
            field = "device_info"
        if field is None:
            lines.append(f"    (void){pname};")
        elif kind == "int":
            lines.append(f"    args_.{field} = static_cast<int>({pname});")
        elif kind == "i64":
            lines.append(f"    args_.{field} = static_cast<int64_t>({pname});")
        elif kind == "intptr":
            lines.append(f"    args_.{field} = {pname};")
        else:
            lines.append(f"    args_.{field} = const_cast<void*>(static_cast<const void*>({pname}));"
                         if field in ("result", "rot_a", "rot_b", "rot_c", "rot_s", "d1", "d2", "x1", "param")
                         else f"    args_.{field} = {pname};")
    call = (f"tbdsim::cublas::run_xt_routine(handle, tbdsim::cublas::Family::{family}, "
            f"tbdsim::cublas::Elem::{letter}, args_)" if xt else
            f"tbdsim::cublas::run_routine(tbdsim::cublas::Family::{family}, tbdsim::cublas::Elem::{letter}, args_)")
    lines.append(f"    return {call};")
    return "\n".join(lines)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    include_dir, out_cpp = sys.argv[1:]
    out = ["// Generated by simgpu/cublas/gen_routines.py from the toolkit's headers; do not edit.",
           "#include <cublasXt.h>", "#include <cublas_api.h>", "", "#include <cstdint>", "",
           '#include "routine.h"', "",
           "#pragma GCC diagnostic ignored \"-Wunused-parameter\"", ""]
    count = 0
    for name, params in declarations(include_dir):
        kind = classify(name)
        if kind is None:
            continue
        family, letter = kind
        out.append(f'extern "C" __attribute__((visibility("default"))) cublasStatus_t {name}({params}) {{')
        out.append(body(name, params, family, letter))
        out.append("}")
        out.append("")
        count += 1
    with open(out_cpp, "w") as f:
        f.write("\n".join(out))
    print(f"gen_routines.py: {count} entry points")


if __name__ == "__main__":
    main()
