#!/bin/sh
# The autoresearch evaluator of the Ray recipe: it measures the candidate as a Ray job and
# prints the job's metric line last. The working directory (the candidate's worktree) is
# shipped to the cluster; AUTORESEARCH_SLOT goes with it, so a job can pin a GPU or a port.
set -eu
address=${RAY_ADDRESS:-http://127.0.0.1:8265}
slot=${AUTORESEARCH_SLOT:-0}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
ray job submit --address "$address" --working-dir . \
  --runtime-env-json "{\"env_vars\": {\"AUTORESEARCH_SLOT\": \"$slot\"}}" \
  --entrypoint-num-cpus 1 -- python measure.py >"$log" 2>&1 || status=$?
cat "$log" >&2
[ "$status" -eq 0 ] || exit "$status"
# The job's own output is inside Ray's log lines; its metric line is the last JSON object.
grep '^{' "$log" | tail -n 1
