#!/usr/bin/env bash
# scripts/test-times.sh FILE: the table of where make test's time went, from
# the lines scripts/timed.sh appended to FILE (one per step, in order).
set -euo pipefail
file=$1
[[ -s "$file" ]] || exit 0
awk -F'\t' '
  { step[NR] = $1; secs[NR] = $2; rc[NR] = $3; total += $2 }
  END {
    printf "\n== where the time went (wall seconds)\n"
    printf "%-20s %9s %6s  %s\n", "step", "seconds", "share", "result"
    for (i = 1; i <= NR; i++)
      printf "%-20s %9.1f %5.1f%%  %s\n", step[i], secs[i], total ? 100 * secs[i] / total : 0, rc[i] == 0 ? "ok" : "FAILED (exit " rc[i] ")"
    printf "%-20s %9.1f %5.1f%%  (%d min %d s)\n", "total", total, 100, int(total / 60), int(total) % 60
  }' "$file"
