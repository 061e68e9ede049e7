#!/usr/bin/env bash
# Record scenarios against a real Apache Kafka 4.4.0 KRaft cluster on loopback.
#   kafka-differential/run.sh [scenario.json ...]   (default: every name in kafka-differential/scenarios.txt)
#   FLAB_GROUP_MODE=subscribe kafka-differential/run.sh ...   group consumers join through subscribe()
#                                                (static membership) instead of assign() (the default,
#                                                the simulator's model: the group's only member, no rebalance)
#   A consumer the scenario itself marks "subscribe": true always joins through subscribe() (dynamic
#   membership unless its config names a group.instance.id), with its config's group.protocol
#   (classic or consumer); its rebalance callbacks are recorded (consumers[].rebalances).
#   RUNS=1 kafka-differential/run.sh ...          record each scenario once (default: RUNS=3; issue 60)
# Writes tests/kafka-recorded/<scenario>.json: the first run, with the others under "repeats" (the
# comparison, tests/kafka_recorded.rs merge_runs, holds the simulator to Kafka's spread across them).
# A scenario's file is replaced only when all its runs succeeded. Needs root (cgroups + nftables for isolate/slow),
# Java 17 and Maven; Maven resolves the Kafka jars from Maven Central into ~/.m2.
# Bounded: every JVM the driver starts is written to a pid file and killed by pid by the
# trap below (and by the driver's own shutdown hook); each run has a time limit.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
out_dir="$repo/tests/kafka-recorded"
mkdir -p "$out_dir"

# What this needs beyond the build (nftables; Java and Maven checked).
"$repo/scripts/setup.sh" --kafka-differential

# One cluster at a time on this machine (fixed loopback ports): wait for any other run.
exec 9>/tmp/flab-kdiff.lock
flock 9

cd "$here"
mvn -q -B compile dependency:build-classpath -Dmdep.outputFile=target/classpath.txt

if [[ $# -eq 0 ]]; then
  mapfile -t scenarios < <(grep -v '^#' "$here/scenarios.txt" | sed '/^\s*$/d' | awk '{print $1}')
else
  scenarios=("$@")
fi

work=""
pidfile=""
cleanup() {
  if [[ -n "$pidfile" && -f "$pidfile" ]]; then
    # Only our own JVMs: a pid whose command line names this run's work directory
    # (a crashed broker's pid may have been reused by now).
    while read -r pid; do
      if [[ -n "$pid" ]] && { tr '\0' ' ' < "/proc/$pid/cmdline"; } 2>/dev/null | grep -qF "$work/"; then
        kill -9 "$pid" 2>/dev/null || true
      fi
    done < "$pidfile"
  fi
  if [[ -n "${driver_pid:-}" ]]; then kill -9 "$driver_pid" 2>/dev/null || true; fi
  nft delete table inet flab_kdiff 2>/dev/null || true
  for cg in /sys/fs/cgroup/unified/flab-kdiff-b*; do [[ -d "$cg" ]] && rmdir "$cg" 2>/dev/null || true; done
  if [[ -n "$work" && -d "$work" && -z "${KEEP_WORK:-}" ]]; then rm -rf "$work"; fi
}
trap cleanup EXIT INT TERM

# The partition assignment is an input, not a result: Kafka's KRaft placer is randomised, so
# the driver creates topics with the simulator's default placement (round-robin, or
# rack-aware when the scenario has racks), read from the simulator's CLI when it is built.
# Looked for before each run, not once: a recording queued while the simulator is still being
# built must not fall back to the driver's round-robin placement for the whole queue (rack-failure,
# 2026-12-06, recorded with Kafka's placement that way). A scenario with racks needs the simulator.
find_sim() {
  sim_bin="$repo/target/release/failover-lab"
  [[ -x "$sim_bin" ]] || sim_bin="$repo/target/debug/failover-lab"
}

runs="${RUNS:-3}"
runs_dir=$(mktemp -d /tmp/flab-kdiff-runs.XXXXXX)
failed=()
for s in "${scenarios[@]}"; do
  [[ "$s" == */* ]] || s="scenarios/$s"
  rel="${s#"$repo"/}"
  f="$repo/$rel"
  name=$(basename "$f" .json)
  until_ms=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run_until_ms"])' "$f")
  limit=$(( until_ms / 1000 + 240 ))
  ok=1
  for (( k = 1; k <= runs; k++ )); do
  work=$(mktemp -d /tmp/flab-kdiff.XXXXXX)
  pidfile="$work/pids"
  : > "$pidfile"
  echo "== $name run $k of $runs (run_until_ms $until_ms, time limit ${limit}s, work $work)"
  assignment_args=()
  find_sim
  if [[ ! -x "$sim_bin" ]] && grep -q '"rack' "$f"; then
    echo "   $name: no simulator binary (cargo build --release) for its rack-aware placement: not recorded"
    ok=0
    break
  fi
  if [[ -x "$sim_bin" ]]; then
    "$sim_bin" run "$f" --format json | python3 -c '
import json, sys
r = json.load(sys.stdin)
a = {}
for p in sorted(r["partitions"], key=lambda p: (p["topic"], p["partition"])):
    a.setdefault(p["topic"], []).append(p["replicas"])
json.dump(a, sys.stdout)' > "$work/assignment.json"
    assignment_args=(--assignment "$work/assignment.json")
  fi
  start=$(date +%s)
  timeout --signal=TERM --kill-after=20 "$limit" \
    java -Xms64m -Xmx384m -XX:+UseSerialGC \
      -Dlog4j2.configurationFile="$here/driver-log4j2.properties" -Dflab.clientLog="$work/driver-clients.log" \
      -cp "$here/target/classes:$(cat "$here/target/classpath.txt")" failoverlab.cluster.Driver \
      --scenario "$f" --scenario-name "$rel" "${assignment_args[@]}" --out "$runs_dir/$name.$k.json" --work "$work" \
      --classpath "$here/target/classpath.txt" --pidfile "$pidfile" --time-limit-s "$((limit - 10))" \
      --group-mode "${FLAB_GROUP_MODE:-assign}" \
    > "$work/driver.out" 2>&1 &
  driver_pid=$!
  rc=0; wait "$driver_pid" || rc=$?
  driver_pid=""
  echo "   $name run $k: exit $rc in $(( $(date +%s) - start ))s"
  if [[ $rc -ne 0 ]]; then tail -30 "$work/driver.out"; KEEP_WORK=1; ok=0; fi
  cleanup
  work=""; pidfile=""
  [[ $ok -eq 1 ]] || break
  done
  if [[ $ok -eq 1 ]]; then
    python3 - "$out_dir/$name.json" "$runs_dir/$name".*.json <<'PY'
import json, sys
out, files = sys.argv[1], sorted(sys.argv[2:], key=lambda f: int(f.rsplit(".", 2)[-2]))
runs = [json.load(open(f)) for f in files]
first = runs[0]
if len(runs) == 1:
    # One run: the driver's file as it wrote it.
    open(out, "w").write(open(files[0]).read())
else:
    first["repeats"] = runs[1:]
    with open(out, "w") as fh:
        json.dump(first, fh, indent=1, ensure_ascii=False)
        fh.write("\n")
PY
    echo "   $name: $runs run(s) written to tests/kafka-recorded/$name.json"
  else
    failed+=("$name")
    echo "   $name: a run failed; tests/kafka-recorded/$name.json left as it was"
  fi
  rm -f "$runs_dir/$name".*.json
done
rmdir "$runs_dir" 2>/dev/null || true
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "failed: ${failed[*]}"
  exit 1
fi
