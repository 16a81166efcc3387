#!/usr/bin/env bash
# Several `eagle2 serve` replicas behind nginx (Debian's package), for users who outgrow one
# machine's worth of slots: each replica is a whole server (its own model copy, scheduler and KV
# memory), nginx spreads requests over them (least_conn: the replica with the fewest open
# requests, which for long streaming completions is the least loaded one) and stops sending to a
# replica that fails (a refused connection or a 503 of a full replica sends the request to the next
# one; below: why that is safe). Replicas are only added to the pool
# once their /health answers 200, and a watchdog keeps polling /health and restarts a replica
# that stops answering. Not a CI test: a starting point for a real deployment (on several
# machines, list their addresses in the upstream block instead of the local ports).
#
#   scripts/serve-replicas.sh [REPLICAS] [PORT] [-- eagle2 serve flags...]
#   e.g. scripts/serve-replicas.sh 2 8080 -- --parallel 4 -t 1
#
# Stop with Ctrl-C or SIGTERM (every replica gets SIGTERM, finishes its in-flight requests and
# exits). EAGLE2_BIN: the eagle2 binary (default build/bin/eagle2); the test
# tests/replicas/test_replicas.sh runs this script as it is.
set -euo pipefail
cd "$(dirname "$0")/.."
replicas=${1:-2}
port=${2:-8080}
shift $(( $# >= 2 ? 2 : $# ))
[[ ${1:-} == "--" ]] && shift
serve_flags=("$@")
eagle2=${EAGLE2_BIN:-build/bin/eagle2}
[[ -x $eagle2 ]] || { echo "error: $eagle2 not built (run the README's first command)" >&2; exit 1; }
if ! command -v nginx >/dev/null; then
  echo "error: nginx is not installed (apt-get install nginx)" >&2
  exit 1
fi
work=$(mktemp -d /tmp/eagle2-replicas.XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  [[ -f $work/nginx.pid ]] && nginx -c "$work/nginx.conf" -p "$work" -s quit 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
# A signal ends the script (the watchdog loop must not go on restarting replicas); the EXIT trap
# then stops everything.
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

start_replica() {  # $1: index
  local p=$((port + 1 + $1))
  "$eagle2" serve --host 127.0.0.1 --port "$p" "${serve_flags[@]}" >"$work/replica$1.log" 2>&1 &
  pids[$1]=$!
}
healthy() { curl -fsS -m 2 "http://127.0.0.1:$1/health" >/dev/null 2>&1; }

upstream=""
for ((i = 0; i < replicas; i++)); do
  start_replica "$i"
  # max_fails=0: nginx never marks a replica down. A full replica's 503s would count as failures
  # and take a healthy replica out for fail_timeout; a dead one refuses the connection at once,
  # the request goes to the next, and the watchdog below restarts it.
  upstream+="    server 127.0.0.1:$((port + 1 + i)) max_fails=0;"$'\n'
done
for ((i = 0; i < replicas; i++)); do
  for _ in $(seq 1 600); do healthy $((port + 1 + i)) && break; sleep 0.2; done
  healthy $((port + 1 + i)) || { echo "error: replica $i did not start:" >&2; cat "$work/replica$i.log" >&2; exit 1; }
done

cat >"$work/nginx.conf" <<CONF
pid $work/nginx.pid;
error_log $work/nginx-error.log;
events { worker_connections 1024; }
http {
  access_log off;
  upstream eagle2 {
    least_conn;
$upstream  }
  server {
    listen 127.0.0.1:$port;
    client_max_body_size 1m;
    location / {
      proxy_pass http://eagle2;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host \$http_host;  # the client's Host: the replicas check it (403 otherwise)
      proxy_buffering off;          # server-sent events stream through as they come
      proxy_read_timeout 600s;
      # A full replica's 503: try another. nginx retries a POST (every completion is one) only
      # with non_idempotent. That is safe here: a completion changes nothing on the server, so
      # sending it again can only cost compute, and the client has received nothing of it. A
      # replica answers 503 when its queue is full (before decoding anything) or when it is
      # shutting down (possibly after decoding part of a non-streamed request that it then
      # drops). Once a response has started (a stream's first chunk), nginx never retries it.
      proxy_next_upstream error timeout http_503 non_idempotent;
      proxy_next_upstream_tries $replicas;  # each replica once
    }
  }
}
CONF
nginx -c "$work/nginx.conf" -p "$work"
echo "eagle2 serve: $replicas replicas behind http://127.0.0.1:$port (nginx, least_conn); Ctrl-C stops"

# Watchdog: a replica that stops answering /health is restarted.
while true; do
  sleep 5
  for ((i = 0; i < replicas; i++)); do
    if ! healthy $((port + 1 + i)); then
      echo "replica $i is not healthy: restarting it" >&2
      kill -TERM "${pids[$i]}" 2>/dev/null || true
      wait "${pids[$i]}" 2>/dev/null || true
      start_replica "$i"
    fi
  done
done
