#!/usr/bin/env bash
# ctest wrapper of score.py: finds a python with PyTorch, then runs score.py with the given arguments.
# The python: $TBDPROF_TORCH_PYTHON when set, else what scripts/torch-venv.sh (the project's PyTorch
# environment) prints; none: skipped (exit 77) with the reason.
#
#   run_test.sh SOURCE_DIR score.py-arguments...
#   run_test.sh SOURCE_DIR --unseen-report unseen_report_test.py-arguments...
#   run_test.sh SOURCE_DIR --phases phases_test.py-arguments...
#   run_test.sh SOURCE_DIR --recompute recompute_test.py-arguments...
set -u
source_dir=${1:?usage: run_test.sh SOURCE_DIR ARGS...}
shift
python=${TBDPROF_TORCH_PYTHON:-}
if [[ -z $python ]]; then
    if [[ ! -x $source_dir/scripts/torch-venv.sh ]]; then
        echo "skipped: no PyTorch (set TBDPROF_TORCH_PYTHON to a python that imports torch)"
        exit 77
    fi
    python=$("$source_dir/scripts/torch-venv.sh")
    status=$?
    if ((status != 0)); then
        echo "skipped: scripts/torch-venv.sh could not provide PyTorch (exit $status)"
        exit 77
    fi
fi
if [[ ${1:-} == --phases ]]; then
    shift
    exec "$python" "$source_dir/samples/pytorch/oracle/phases_test.py" --python "$python" "$@"
fi
if [[ ${1:-} == --recompute ]]; then
    shift
    exec "$python" "$source_dir/samples/pytorch/oracle/recompute_test.py" "$@"
fi
if [[ ${1:-} == --unseen-report ]]; then
    shift
    exec "$python" "$source_dir/samples/pytorch/oracle/unseen_report_test.py" --python "$python" "$@"
fi
exec "$python" "$source_dir/samples/pytorch/oracle/score.py" --python "$python" "$@"
