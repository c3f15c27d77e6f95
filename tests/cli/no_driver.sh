#!/usr/bin/env bash
# Without --sim on a machine with no NVIDIA driver: say so, suggest --sim, run nothing.
source "$(dirname "$0")/common.sh"
if [ -e /dev/nvidiactl ]; then
    echo "SKIP: this machine has an NVIDIA driver, so the no-driver path cannot be tested here"
    exit 77
fi
cd "$WORK" || exit 1
expect_status 1 "no driver" -- "$TBDPROF" -o t.sqlite -- touch ran && stderr_has "no NVIDIA driver found" && stderr_has "--sim"
[ -e ran ] && fail "the command ran without a driver"
[ -e t.sqlite ] && fail "a trace was written"
finish
