#!/usr/bin/env bash
# scripts/timed.sh FILE STEP CMD [ARGS...]: run CMD and append one line,
# "STEP<TAB>wall seconds<TAB>exit status", to FILE (make test's timing table,
# printed by scripts/test-times.sh). Exits with CMD's status.
set -uo pipefail
file=$1 step=$2
shift 2
start=$(date +%s%N)
"$@"
rc=$?
end=$(date +%s%N)
ms=$(( (end - start) / 1000000 ))
printf '%s\t%d.%01d\t%d\n' "$step" $((ms / 1000)) $(((ms % 1000) / 100)) "$rc" >> "$file"
exit "$rc"
