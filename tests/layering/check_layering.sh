#!/usr/bin/env bash
# The stages' dependency rule (docs/architecture.md, "The libraries"): a folder includes public
# headers (tbdprof/<library>/...) of its own library and of lower stages only, and no folder but
# trace/ (and the trace library's own tests) includes sqlite3.h. Fails naming each include that breaks it.
set -euo pipefail
src=${1:?usage: check_layering.sh SOURCE_DIR}
cd "$src"

# folder -> the libraries whose headers it may include (besides collector/include's stage-0 headers,
# tbdprof/raw_format.h and tbdprof/step_names.h, which every stage may read).
declare -A allowed=(
    [collector]="collector"
    [preload]="collector"
    [trace]="trace"
    [cmdline]="cmdline trace"
    [tagger]="tagger trace cmdline"
    [analyzer]="analyzer trace cmdline"
    [interop]="interop trace tagger cmdline"
    [viewer]="viewer analyzer trace"
)
status=0
for folder in "${!allowed[@]}"; do
    while IFS= read -r line; do
        file=${line%%:*}
        library=$(sed -E 's/.*#include [<"]tbdprof\/([a-z_]+)\/.*/\1/' <<<"$line")
        if [[ " ${allowed[$folder]} " != *" $library "* ]]; then
            echo "layering: $file includes tbdprof/$library/ (stage above or beside $folder)"
            status=1
        fi
    done < <(grep -rnE '#include [<"]tbdprof/[a-z_]+/' "$folder" --include='*.cpp' --include='*.h' --include='*.cu' || true)
done
while IFS= read -r line; do
    echo "layering: $line includes sqlite3.h outside the trace library"
    status=1
done < <(grep -rlE '#include [<"]sqlite3\.h[>"]' --include='*.cpp' --include='*.h' --include='*.cu' . |
         grep -vE '^\./(trace|tests/trace|build[^/]*)/' || true)
[[ $status == 0 ]] && echo "layering: every include follows the stages"
exit $status
