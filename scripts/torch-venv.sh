#!/usr/bin/env bash
# Installs PyTorch from PyPI into a virtual environment outside the repository, for the PyTorch
# tests (tests/pytorch/). torch goes in with --no-deps: its NVIDIA dependencies (runtime, cuBLAS,
# cuDNN, NCCL...) are what the simulated GPU replaces, so only its pure-Python dependencies are
# installed next to it. Safe to run again: an environment that already holds the pinned version is
# kept as it is.
#
#   scripts/torch-venv.sh          installs (or checks) the environment, prints its python on stdout
#   TBDPROF_TORCH_VENV=DIR         the environment's folder (default ~/.cache/tbdprof/torch-venv)
#   TBDPROF_TORCH_VERSION=X.Y.Z    another torch version than the pinned one
#
# Exit status: 0 ready; 77 the package index cannot be reached (tests skip on it); 1 anything else.
set -euo pipefail

# The one place the tested PyTorch version is pinned.
TBDPROF_TORCH_PINNED=2.15.0
# torch's own Requires-Dist, less the NVIDIA packages and Triton (the simulated GPU stands in for the
# first; torch.compile is not supported on it, docs/simgpu.md). numpy is optional for torch but
# silences its warning and is what training scripts use.
TBDPROF_TORCH_PURE_DEPS=(filelock typing-extensions setuptools sympy networkx jinja2 fsspec numpy)

version=${TBDPROF_TORCH_VERSION:-$TBDPROF_TORCH_PINNED}
venv=${TBDPROF_TORCH_VENV:-${HOME:-/tmp}/.cache/tbdprof/torch-venv}
python=$venv/bin/python

installed_version() {
    "$python" - <<'EOF' 2>/dev/null
import importlib.metadata as m
print(m.version("torch"))
EOF
}

if [ -x "$python" ] && [ "$(installed_version)" = "$version" ]; then
    echo "$python"
    exit 0
fi

host_python=${TBDPROF_TORCH_HOST_PYTHON:-python3}
if ! command -v "$host_python" >/dev/null; then
    echo "torch-venv: $host_python not found; PyTorch needs a Python 3 interpreter" >&2
    exit 1
fi
mkdir -p "$(dirname "$venv")"
if [ ! -x "$python" ]; then
    "$host_python" -m venv "$venv" >&2 || { echo "torch-venv: could not create a venv in $venv" >&2; exit 1; }
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
echo "torch-venv: installing torch==$version (--no-deps) and its pure-Python dependencies into $venv" >&2
if ! "$python" -m pip install --quiet --disable-pip-version-check --no-deps "torch==$version" >"$log" 2>&1 ||
   ! "$python" -m pip install --quiet --disable-pip-version-check "${TBDPROF_TORCH_PURE_DEPS[@]}" >>"$log" 2>&1; then
    # A machine without network access: the tests that need PyTorch skip, with this reason.
    if grep -qiE "Could not find a version|No matching distribution|connection|resolve|network is unreachable|timed out" "$log"; then
        echo "torch-venv: the Python package index cannot be reached; PyTorch tests are skipped" >&2
        tail -n 3 "$log" >&2
        exit 77
    fi
    echo "torch-venv: pip failed:" >&2
    tail -n 20 "$log" >&2
    exit 1
fi
if [ "$(installed_version)" != "$version" ]; then
    echo "torch-venv: torch $version is not what $python imports after installing" >&2
    exit 1
fi
echo "$python"
