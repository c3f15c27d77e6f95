#!/usr/bin/env bash
# The dlsym/dlvsym stubs of an architecture this machine does not run: assemble them with clang for
# that target and check that both entry points come out global, and that each one's fall-back path
# ends in a tail branch to our C++ hook (never a call: the caller's return address must survive).
# Skips (exit 77) when clang cannot target the architecture.
set -euo pipefail
stub=${1:?usage: assemble_dl_stubs.sh STUB.S TARGET_TRIPLE}
triple=${2:?}
command -v clang > /dev/null || { echo "SKIP: clang not installed"; exit 77; }
command -v llvm-objdump > /dev/null || { echo "SKIP: llvm-objdump not installed"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if ! clang --target="$triple" -fPIC -c "$stub" -o "$work/stubs.o" 2> "$work/err"; then
    if grep -q 'unknown target\|No available targets' "$work/err"; then echo "SKIP: clang has no $triple target"; exit 77; fi
    cat "$work/err" >&2
    exit 1
fi
llvm-objdump -t "$work/stubs.o" > "$work/symbols"
for fn in dlsym dlvsym; do
    grep -qE "^[0-9a-f]+ g +F \.text.* $fn\$" "$work/symbols" || { echo "FAIL: $fn is not a global function" >&2; exit 1; }
done
llvm-objdump -dr "$work/stubs.o" > "$work/disassembly"
for hook in tbdprof_dlsym_hook tbdprof_dlvsym_hook; do
    grep -qE "R_AARCH64_JUMP26[[:space:]]+$hook\$" "$work/disassembly" ||
        { echo "FAIL: no tail branch to $hook" >&2; cat "$work/disassembly" >&2; exit 1; }
done
if grep -qE '\b(bl|blr)\b' "$work/disassembly"; then echo "FAIL: a stub calls instead of branching" >&2; exit 1; fi
echo "ok: $stub assembles for $triple; dlsym and dlvsym tail-branch"
