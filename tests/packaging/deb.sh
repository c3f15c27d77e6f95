#!/usr/bin/env bash
# The .deb: `cpack -G DEB` builds it; unpacked into a temporary root it holds only /usr/bin/tbdprof,
# /usr/lib/tbdprof/... and /usr/share/...; every shared library its binaries load comes from a
# package its Depends names; and the unpacked tbdprof records a sample on its own simulated GPU.
source "$(dirname "$0")/../cli/common.sh"
build_dir=$1
command -v cpack >/dev/null && command -v dpkg-deb >/dev/null || { echo "SKIP: cpack or dpkg-deb missing"; exit 77; }
(cd "$WORK" && cpack -G DEB --config "$build_dir/CPackConfig.cmake" -B "$WORK/pkg") >"$WORK/cpack.log" 2>&1 \
    || { cat "$WORK/cpack.log"; fail "cpack failed"; finish; }
deb=$(ls "$WORK"/pkg/*.deb 2>/dev/null | head -1)
[ -n "$deb" ] || { fail "no .deb produced"; finish; }
pass "built $(basename "$deb") ($(du -k "$deb" | cut -f1) KiB)"

dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|' >"$WORK/contents"
stray=$(grep -v -E '^/$|^/usr/$|^/usr/bin/|^/usr/lib/$|^/usr/lib/tbdprof/|^/usr/share/' "$WORK/contents")
[ -z "$stray" ] && pass "files only in /usr/bin, /usr/lib/tbdprof, /usr/share" || fail "stray files: $stray"
for f in /usr/bin/tbdprof /usr/lib/tbdprof/libtbdprof_preload.so /usr/lib/tbdprof/simgpu/libcuda.so.1 \
         /usr/share/bash-completion/completions/tbdprof; do
    grep -qx -- "$f" "$WORK/contents" && pass "packaged $f" || fail "not packaged: $f"
done

root="$WORK/root"
dpkg-deb -x "$deb" "$root" || { fail "dpkg-deb -x"; finish; }
depends=$(dpkg-deb -f "$deb" Depends)
# Package names alone, one a line ("libc6 (>= 2.34), zlib1g" -> libc6, zlib1g).
depends_names=$(sed 's/([^)]*)//g; s/,/\n/g' <<<"$depends" | tr -d ' ')
# Every library a packaged binary loads from the system belongs to a package in Depends.
while IFS= read -r elf; do
    while read -r path; do
        case "$path" in "$root"/*) continue ;; esac
        owner=$(dpkg -S "$(realpath "$path")" 2>/dev/null | head -1 | cut -d: -f1)
        [ -z "$owner" ] && owner=$(dpkg -S "$path" 2>/dev/null | head -1 | cut -d: -f1)
        if [ -z "$owner" ]; then fail "$(basename "$elf") loads $path, which no package owns"
        elif ! grep -qxF -- "$owner" <<<"$depends_names"; then fail "$(basename "$elf") needs $owner, missing from Depends: $depends"
        fi
    done < <(LD_LIBRARY_PATH="$root/usr/lib/tbdprof/simgpu" ldd "$elf" 2>/dev/null | awk '/=> \// {print $3}')
done < <(find "$root/usr" -type f \( -name '*.so*' -o -perm -u+x \) -exec sh -c 'head -c4 "$1" | grep -q ELF && echo "$1"' _ {} \;)
pass "Depends covers every loaded library ($depends)"

cd "$WORK" || exit 1
TBDSIM_TRUTH="$WORK/truth.tsv" "$root/usr/bin/tbdprof" --sim -o "$WORK/t.sqlite" -- "$TBDPROF_BIN_DIR/hello_copy" \
    >"$WORK/out" 2>"$WORK/err" || fail "the packaged tbdprof could not record: $(cat "$WORK/err")"
"$TRACE_VS_TRUTH" "$WORK/t.sqlite" "$WORK/truth.tsv" >/dev/null && pass "packaged tbdprof's trace matches the truth" \
    || fail "packaged tbdprof's trace differs from the truth"
"$root/usr/bin/tbdprof" report "$WORK/t.sqlite" >/dev/null && pass "packaged tbdprof reports" || fail "report"

# The completion offers the subcommands and the record options.
if [ -r /usr/share/bash-completion/bash_completion ]; then
    got=$(bash -c 'source /usr/share/bash-completion/bash_completion; source "$1"
                   COMP_WORDS=(tbdprof rep); COMP_CWORD=1; COMP_LINE="tbdprof rep"; COMP_POINT=${#COMP_LINE}; _tbdprof
                   echo "${COMPREPLY[*]}"
                   COMP_WORDS=(tbdprof --fo); COMP_CWORD=1; COMP_LINE="tbdprof --fo"; COMP_POINT=${#COMP_LINE}; _tbdprof
                   echo "${COMPREPLY[*]}"' _ "$root/usr/share/bash-completion/completions/tbdprof")
    [ "$got" = $'report\n--force' ] && pass "completion: subcommands and options" || fail "completion gave: $got"
else
    echo "bash-completion not installed: completion not exercised"
fi
finish
