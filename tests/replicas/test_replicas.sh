#!/usr/bin/env bash
# scripts/serve-replicas.sh as a user runs it: two replicas of `eagle2 serve` behind nginx, each
# with one slot and no queue (--parallel 1 --max-queue 0). A long request sent straight to
# replica 0 fills it, so replica 0 answers 503 to anything else; requests sent through nginx must
# all get their text anyway: those nginx gives to replica 0 are refused there (its /metrics counts
# the 503s) and retried on replica 1. Without `non_idempotent` in proxy_next_upstream nginx hands
# the client the 503 of a POST instead (the bug this test guards).
#   tests/replicas/test_replicas.sh SOURCE_DIR EAGLE2_BIN
# Exit 77 (skipped) when nginx or curl is not installed. Loopback only; bounded in time.
# KEEP_WORK=1 keeps its temporary folder (the script's output) for a look after a failure.
set -uo pipefail
src=$1
bin=$2
for tool in nginx curl ss; do
  if ! command -v "$tool" >/dev/null; then
    echo "SKIP: $tool is not installed (scripts/install-test-deps.sh installs nginx-light)"
    exit 77
  fi
done
work=$(mktemp -d /tmp/eagle2-replicas-test.XXXXXX)
script_pid=""
hold_pid=""
finish() {
  [[ -n $hold_pid ]] && kill "$hold_pid" 2>/dev/null
  if [[ -n $script_pid ]]; then
    kill -TERM "$script_pid" 2>/dev/null
    # The script's own trap stops nginx and the replicas; bounded.
    for _ in $(seq 1 100); do kill -0 "$script_pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$script_pid" 2>/dev/null
  fi
  [[ -n ${KEEP_WORK:-} ]] || rm -rf "$work"
}
trap finish EXIT
fail() {
  echo "FAIL: $*"
  echo "--- serve-replicas.sh output:"
  cat "$work/script.log" 2>/dev/null
  exit 1
}

# Three free consecutive loopback ports: nginx on the first, the replicas on the next two. Below
# Linux's ephemeral range (32768-60999), where other tests' `--port 0` servers and clients get
# theirs and could take one between this check and the bind.
port=""
for _ in $(seq 1 50); do
  p=$((20000 + RANDOM % 12000))
  if ! ss -ltnH | awk '{print $4}' | grep -qE ":($p|$((p + 1))|$((p + 2)))\$"; then
    port=$p
    break
  fi
done
[[ -n $port ]] || fail "no free ports"
front=http://127.0.0.1:$port
replica0=http://127.0.0.1:$((port + 1))

EAGLE2_BIN=$bin setsid bash "$src/scripts/serve-replicas.sh" 2 "$port" -- \
  --parallel 1 --max-queue 0 -t 1 >"$work/script.log" 2>&1 &
script_pid=$!
# The replicas load the model and measure the verify cost (seconds); the script itself gives up
# on a replica after 2 minutes and says why, which this waits for.
for _ in $(seq 1 900); do
  grep -q "replicas behind" "$work/script.log" && break
  kill -0 "$script_pid" 2>/dev/null || fail "serve-replicas.sh exited"
  sleep 0.2
done
grep -q "replicas behind" "$work/script.log" || fail "the replicas did not start in 180 s"

complete() {  # $1: base URL; prints the HTTP status, the body in $work/body
  curl -s -m 60 -o "$work/body" -w "%{http_code}" "$1/v1/completions" \
    -H 'Content-Type: application/json' \
    -d '{"prompt": "def add(a, b):\n", "max_tokens": 4, "speculative": "none"}'
}
refused_503() {  # replica 0's count of requests it refused with 503
  curl -s -m 5 "$replica0/metrics" | awk '/^eagle2_requests_total\{status="503"\}/ {print $2}' |
    awk '{s += $1} END {print s + 0}'
}

# Fill replica 0: a greedy request of 1000 tokens (the bundled model's greedy continuation of this
# prompt runs to max_tokens; seconds of decoding), sent to it directly (not through nginx).
curl -s -m 120 -o /dev/null "$replica0/v1/completions" -H 'Content-Type: application/json' \
  -d '{"prompt": "def fib(n):\n", "max_tokens": 1000, "speculative": "none"}' &
hold_pid=$!
# Nothing else may reach replica 0 until the long request holds its slot (with no queue, a probe
# in flight would make it refuse the long request): wait for its KV blocks in /metrics.
held=""
for _ in $(seq 1 300); do
  used=$(curl -s -m 5 "$replica0/metrics" | awk '/^eagle2_kv_blocks_used / {print $2}')
  [[ -n $used && $used != 0 ]] && { held=1; break; }
  kill -0 "$hold_pid" 2>/dev/null || fail "the long request to replica 0 ended at once"
  sleep 0.1
done
[[ -n $held ]] || fail "the long request never took replica 0's slot"
status=$(complete "$replica0")
[[ $status == 503 ]] || fail "replica 0 answered $status, not 503, while its one slot was held"
before=$(refused_503)

# Through nginx: every request gets its text, whichever replica nginx picks first.
for i in 1 2 3 4 5 6; do
  status=$(complete "$front")
  [[ $status == 200 ]] || fail "request $i through nginx: HTTP $status: $(cat "$work/body")"
  grep -q '"text"' "$work/body" || fail "request $i: no text: $(cat "$work/body")"
done
after=$(refused_503)
# Each 503 replica 0 counted was a request nginx gave it while it was full, and every request got
# 200: nginx retried those on replica 1. That holds however fast the model decodes: the long
# request only has to outlast the probe above and nginx's first pick.
echo "replica 0 refused $((after - before)) of the 6 requests sent through nginx (503);" \
  "nginx served them on replica 1"
if ((after <= before)); then
  kill -0 "$hold_pid" 2>/dev/null || fail "the long request ended before nginx picked replica 0"
  fail "nginx never sent a request to the full replica: nothing was retried"
fi
echo PASS
