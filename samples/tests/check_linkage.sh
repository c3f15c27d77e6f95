#!/usr/bin/env bash
# usage: check_linkage.sh BINARY LIBRARY...
# Passes when BINARY lists every LIBRARY (a soname) as DT_NEEDED: the runtime and cuBLAS must be
# dynamic so that the simulated libraries can stand in for them through LD_LIBRARY_PATH.
set -u
binary=$1
shift
needed=$(readelf -d "$binary" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
status=0
for library in "$@"; do
    grep -qx "$library" <<<"$needed" || { echo "check_linkage: $binary does not need $library" >&2; status=1; }
done
grep -q '^libcudart_static' <<<"$needed" && { echo "check_linkage: static cudart" >&2; status=1; }
((status == 0)) && echo "check_linkage: $binary needs $*"
exit $status
