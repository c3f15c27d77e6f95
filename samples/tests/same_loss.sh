#!/usr/bin/env bash
# usage: same_loss.sh BINARY [common options...] -- [options of run 2] -- [options of run 3] ...
# Runs the sample once per option set (the common options plus that set) and passes when every run
# prints a final_loss and all print the same one: options that must not change the numerics
# (checkpointing recomputes exactly what it freed).
set -u
binary=$1
shift
common=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do common+=("$1"); shift; done
sets=("")
while [ $# -gt 0 ]; do
    shift  # the "--"
    set_options=""
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do set_options+=" $1"; shift; done
    sets+=("$set_options")
done
first=""
for options in "${sets[@]}"; do
    # shellcheck disable=SC2086
    loss=$("$binary" "${common[@]}" $options | grep -o 'final_loss=[^ ]*') || { echo "same_loss: $binary ${common[*]} $options failed"; exit 1; }
    echo "${common[*]}$options: $loss"
    [ -z "$first" ] && first=$loss
    [ "$loss" = "$first" ] || { echo "same_loss: $loss differs from $first"; exit 1; }
done
