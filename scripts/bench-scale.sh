#!/usr/bin/env bash
# `qore serve` scaled out, measured against one process on SQLite in the same run. By hand
# (a few minutes; not part of CI):
#
#   scripts/bench-scale.sh [--out FILE]      Markdown tables on stdout (and into FILE)
#
# What runs, all on 127.0.0.1:
# - upstream: `bench_upstream` (crates/qore-serve/examples): 20 content deltas per stream
#   (and a second one with BENCH_LONG deltas, default 200, for the "per delta" row);
# - sqlite-1: one `target/release/qore serve` on a SQLite store in a temporary data dir;
# - pg-3: `scripts/scale.sh up` (the script docs/deploy.md gives users): PostgreSQL (Debian's,
#   via pg.sh), three `qore serve --store postgres://…` processes and HAProxy in front;
# - load: `bench_load run` (crates/qore-serve/examples/bench_load), BENCH_STREAMS (1000)
#   concurrent streaming Chat Completions requests. Scenario "rpm key, session": each with an
#   API key that has an rpm limit (so each request is admitted by the store) and
#   `x-qore-session: bench-N` (N the worker: each request appends one turn to its worker's
#   session); "key without limits, no session": nothing asked of the store per request but
#   usage (batched); and (BENCH_SPLIT=1, the default) each of the two alone: "rpm key, no
#   session" and "key without limits, session". Warm-up, then a window.
#
# Measured per target: ok/errors/unfinished, requests/s, time to first byte and to the last
# byte (p50, p99), and the ratios pg-3 / sqlite-1. Database work, as deltas over the run:
# statements and transactions from each process's /metrics (qore_store_statements_total,
# qore_store_transactions_total, summed over processes), requests from qore_requests_total,
# turns from `qore sessions list --all-projects --json`; on PostgreSQL also pg_stat_database
# (xact_commit, tup_inserted, tup_updated, active_time) and pg_stat_user_tables (n_tup_ins per
# table). The run fails (exit 1, after the tables) unless every target had zero errors and
# zero unfinished requests.
#
# Pinning (BENCH_PIN=1, the default, with taskset and 2+ cores): what serves (qore, HAProxy,
# PostgreSQL) on CPU 1; the upstream and the load generator on CPU 0. Both targets get the
# same one core.
#
# Environment: BENCH_SECONDS (10), BENCH_WARMUP (2), BENCH_STREAMS (1000), BENCH_PROCESSES (3),
# BENCH_LONG (200; 0 skips the long-stream row), BENCH_PIN (1), BENCH_PG_SETTINGS (settings
# the benchmark's cluster gets by ALTER SYSTEM, e.g. "synchronous_commit=off", named in the
# report; default none), BENCH_NO_BUILD=1 (use the
# binaries in target/release), BENCH_QORE_BIN (another qore binary).
# Everything the script starts is stopped on exit (trap), and every wait is bounded.
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
SECS="${BENCH_SECONDS:-10}"
WARMUP="${BENCH_WARMUP:-2}"
STREAMS="${BENCH_STREAMS:-1000}"
PROCS="${BENCH_PROCESSES:-3}"
LONG="${BENCH_LONG:-200}"
PIN="${BENCH_PIN:-1}"
CHUNKS=20
OUT=""

say() { echo "bench-scale: $*" >&2; }
die() { say "$*"; exit 1; }

while [ $# -gt 0 ]; do
  case "$1" in
    --out) OUT="${2:?--out FILE}"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument $1 (see --help)" ;;
  esac
done

WORK="$(mktemp -d "${TMPDIR:-/tmp}/bench-scale.XXXXXX")"
chmod 755 "$WORK"  # as root, pg.sh runs PostgreSQL as another user, who must reach WORK/scale/pg
STARTED=()
LOAD_PID=""
cleanup() {
  [ -n "$LOAD_PID" ] && kill -TERM "$LOAD_PID" 2>/dev/null
  [ -d "$WORK/scale" ] && QORE_SCALE_STOP_WAIT=5 bash "$HERE/scale.sh" down "$WORK/scale" >/dev/null 2>&1
  local pid
  for pid in "${STARTED[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  sleep 1
  for pid in "${STARTED[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# 1,000 streams: a connection each to HAProxy, one each from it to a process.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
[ "$(ulimit -n)" = unlimited ] || [ "$(ulimit -n)" -ge $((STREAMS * 3 + 256)) ] \
  || die "ulimit -n is $(ulimit -n); $((STREAMS * 3 + 256)) or more is needed for $STREAMS streams"

SRV=() LOAD=() CORES="$(nproc 2>/dev/null || echo 1)" PINNING="none (all share the $CORES cores)"
if [ "$PIN" = 1 ] && command -v taskset >/dev/null 2>&1 && [ "$CORES" -ge 2 ]; then
  SRV=(taskset -c 1) LOAD=(taskset -c 0)
  PINNING="qore, HAProxy and PostgreSQL on CPU 1; upstream and load generator on CPU 0 (of $CORES)"
fi

cd "$ROOT"
bash "$HERE/scale-env.sh" install
if [ "${BENCH_NO_BUILD:-0}" != 1 ]; then
  say "building (release)"
  cargo build --release -q -p qore-serve --example bench_upstream --example bench_load >&2
  cargo build --release -q -p qore-cli >&2
fi
EX="$ROOT/target/release/examples"
QORE="${BENCH_QORE_BIN:-$ROOT/target/release/qore}"

first_line() {  # FILE PID SECONDS
  local i
  for i in $(seq $(($3 * 10))); do
    if [ -s "$1" ] && head -n 1 "$1" | grep -q .; then head -n 1 "$1"; return 0; fi
    kill -0 "$2" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

upstream() {  # NAME CHUNKS: start one, print its URL
  "${LOAD[@]}" "$EX/bench_upstream" --listen 127.0.0.1:0 --chunks "$2" --max-seconds 7200 \
    >"$WORK/$1.out" 2>"$WORK/$1.err" &
  STARTED+=("$!")
  first_line "$WORK/$1.out" "$!" 10 || die "the upstream $1 did not start"
}
mkdir -p "$WORK/config/providers" "$WORK/single"
printf 'name = "bench"\nprotocol = "openai-chat"\nurl = "%s"\n' "$(upstream up $CHUNKS)" \
  >"$WORK/config/providers/bench.toml"
if [ "$LONG" -gt 0 ]; then
  printf 'name = "long"\nprotocol = "openai-chat"\nurl = "%s"\n' "$(upstream long "$LONG")" \
    >"$WORK/config/providers/long.toml"
fi
export QORE_CONFIG_DIR="$WORK/config"
unset QORE_STORE_URL QORE_LOG

key_for() {  # STORE [ARGS]: a key (with --rpm, admitted by the store on every request)
  local store="$1"; shift
  "$QORE" serve keys create "bench-$RANDOM" "$@" --store "$store" 2>/dev/null
}

wait_ok() {  # URL KEY: until a request with KEY is answered 200 (keys reach processes within 1 s)
  local i
  for i in $(seq 100); do
    [ "$(curl -sS --noproxy '*' -m 10 -o /dev/null -w '%{http_code}' "$1/v1/chat/completions" \
      -H "x-api-key: $2" -H 'content-type: application/json' \
      -d '{"model": "bench/fixed", "messages": [{"role": "user", "content": "hi"}]}' 2>/dev/null)" = 200 ] && return 0
    sleep 0.2
  done
  return 1
}

# --- sqlite-1: one process, SQLite
SQLITE_DB="$WORK/single/qore.db"
SQLITE_KEY="$(key_for "$SQLITE_DB" --rpm 100000000)"
SQLITE_PLAIN="$(key_for "$SQLITE_DB")"
QORE_DATA_DIR="$WORK/single" "${SRV[@]}" "$QORE" serve --store "$SQLITE_DB" --listen 127.0.0.1:0 \
  --drain-timeout 2 >"$WORK/single.out" 2>"$WORK/single.err" &
SINGLE_PID=$!
STARTED+=("$SINGLE_PID")
SINGLE_URL="$(first_line "$WORK/single.out" "$SINGLE_PID" 30)" \
  || { tail -n 20 "$WORK/single.err" >&2; die "qore serve (SQLite) did not start"; }
SINGLE_URL="${SINGLE_URL%/}"; SINGLE_URL="${SINGLE_URL%/v1}"
wait_ok "$SINGLE_URL" "$SQLITE_KEY" || die "qore serve (SQLite) does not answer"
say "sqlite-1 at $SINGLE_URL"

# --- pg-3: scale.sh
LB="$(QORE_BIN="$QORE" QORE_DATA_DIR="$WORK/scale-data" "${SRV[@]}" bash "$HERE/scale.sh" up "$WORK/scale" \
  --processes "$PROCS" -- --drain-timeout 2)" || die "scale.sh up failed"
PG_STORE="$(cat "$WORK/scale/store")"
for setting in ${BENCH_PG_SETTINGS:-}; do  # e.g. synchronous_commit=off, to compare
  bash "$HERE/pg.sh" psql "$WORK/scale/pg" -qtAc "ALTER SYSTEM SET ${setting%%=*} = '${setting#*=}'" >&2
  bash "$HERE/pg.sh" psql "$WORK/scale/pg" -qtAc "SELECT pg_reload_conf()" >/dev/null
done
PG_KEY="$(key_for "$PG_STORE" --rpm 100000000)"
PG_PLAIN="$(key_for "$PG_STORE")"
wait_ok "$LB" "$PG_KEY" || die "the load balancer does not answer with the new key"
say "pg-3 at $LB"

psql_q() { bash "$HERE/pg.sh" psql "$WORK/scale/pg" -tAF, -c "$1"; }

snapshot() {  # TARGET LABEL: one JSON line of counters
  local target="$1" urls=() u m
  if [ "$target" = sqlite-1 ]; then urls=("$SINGLE_URL"); else
    for u in "$WORK"/scale/qore-*.url; do urls+=("$(cat "$u")"); done
  fi
  : >"$WORK/metrics.txt"
  for u in "${urls[@]}"; do curl -sS --noproxy '*' -m 10 "$u/metrics" >>"$WORK/metrics.txt"; done
  local store turns pg="null" tables="null"
  if [ "$target" = sqlite-1 ]; then store="$SQLITE_DB"; else store="$PG_STORE"; fi
  turns="$("$QORE" sessions list --all-projects --json --store "$store" \
    | python3 -c 'import json,sys; print(sum(s.get("turns", 0) for s in json.load(sys.stdin)))')"
  if [ "$target" = pg-3 ]; then
    sleep 1.5  # statistics reach pg_stat_* within a second of a transaction's end
    pg="$(psql_q "SELECT json_build_object('xact_commit', xact_commit, 'tup_inserted', tup_inserted,
      'tup_updated', tup_updated, 'tup_deleted', tup_deleted, 'active_ms', active_time)
      FROM pg_stat_database WHERE datname = current_database()")"
    tables="$(psql_q "SELECT coalesce(json_object_agg(relname, n_tup_ins), '{}') FROM pg_stat_user_tables")"
  fi
  python3 - "$WORK/metrics.txt" "$target" "$2" "$turns" "$pg" "$tables" <<'EOF'
import json, sys
path, target, label, turns, pg, tables = sys.argv[1:]
sums = {}
for line in open(path):
    if line.startswith('#') or not line.strip():
        continue
    name = line.split('{')[0].split()[0]
    sums[name] = sums.get(name, 0) + float(line.split()[-1])
print(json.dumps({"snapshot": label, "target": target, "turns": int(turns),
    "requests": sums.get("qore_requests_total", 0),
    "statements": sums.get("qore_store_statements_total", 0),
    "transactions": sums.get("qore_store_transactions_total", 0),
    "pg": json.loads(pg), "tables": json.loads(tables)}))
EOF
}

RAW="$WORK/raw.jsonl"
: >"$RAW"
measure() {  # TARGET URL KEY MODEL DELTAS SCENARIO [HEADER...]
  say "$6 -> $1"
  local target="$1" url="$2" key="$3" model="$4" deltas="$5" scenario="$6" h headers=()
  shift 6
  for h in "$@"; do headers+=(--header "$h"); done
  snapshot "$target" before >>"$RAW"
  "${LOAD[@]}" "$EX/bench_load" run --target "$target" --scenario "$scenario" --url "$url/v1" \
    --model "$model" --mode stream --concurrency "$STREAMS" --seconds "$SECS" \
    --warmup "$WARMUP" --grace 30 --timeout 120 --expect-deltas "$deltas" --threads 1 \
    --header "x-api-key: $key" "${headers[@]}" >>"$RAW" &
  LOAD_PID=$!
  wait "$LOAD_PID" || die "bench_load failed"
  LOAD_PID=""
  sleep 1  # usage rows are written in batches: let the last ones land
  snapshot "$target" after >>"$RAW"
}

SESSION="x-qore-session: bench-{worker}"
MAIN="streams x$STREAMS, rpm key, session"
PLAIN="streams x$STREAMS, key without limits, no session"
RPM="streams x$STREAMS, rpm key, no session"
TURN="streams x$STREAMS, key without limits, session"
measure sqlite-1 "$SINGLE_URL" "$SQLITE_KEY" bench/fixed "$CHUNKS" "$MAIN" "$SESSION"
measure pg-3 "$LB" "$PG_KEY" bench/fixed "$CHUNKS" "$MAIN" "$SESSION"
measure sqlite-1 "$SINGLE_URL" "$SQLITE_PLAIN" bench/fixed "$CHUNKS" "$PLAIN"
measure pg-3 "$LB" "$PG_PLAIN" bench/fixed "$CHUNKS" "$PLAIN"
if [ "${BENCH_SPLIT:-1}" = 1 ]; then  # the store's two per-request parts, one at a time
  measure sqlite-1 "$SINGLE_URL" "$SQLITE_KEY" bench/fixed "$CHUNKS" "$RPM"
  measure pg-3 "$LB" "$PG_KEY" bench/fixed "$CHUNKS" "$RPM"
  measure sqlite-1 "$SINGLE_URL" "$SQLITE_PLAIN" bench/fixed "$CHUNKS" "$TURN" "x-qore-session: turn-{worker}"
  measure pg-3 "$LB" "$PG_PLAIN" bench/fixed "$CHUNKS" "$TURN" "x-qore-session: turn-{worker}"
fi
if [ "$LONG" -gt 0 ]; then
  measure pg-3 "$LB" "$PG_KEY" long/fixed "$LONG" "$MAIN, $LONG deltas" "$SESSION"
fi

{
  echo "## qore serve scaled out: $PROCS processes on PostgreSQL behind HAProxy, against one on SQLite"
  echo
  echo "- Command: \`BENCH_SECONDS=$SECS BENCH_WARMUP=$WARMUP BENCH_STREAMS=$STREAMS BENCH_PIN=$PIN scripts/bench-scale.sh\`"
  echo "- Commit: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$ROOT" diff --quiet HEAD 2>/dev/null || echo ' (work tree with changes)'), $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "- Machine: $CORES cores ($(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | sed 's/^ //')), $(uname -sr)"
  echo "- Pinning: $PINNING"
  echo "- qore: \`${QORE#"$ROOT/"}\`; PostgreSQL $(psql_q 'SHOW server_version' | cut -d' ' -f1) (pg.sh's settings${BENCH_PG_SETTINGS:+, and $BENCH_PG_SETTINGS}: synchronous_commit $(psql_q 'SHOW synchronous_commit'), fsync $(psql_q 'SHOW fsync')); $(haproxy -v 2>/dev/null | head -n 1 | cut -d' ' -f1-3)"
  echo "- Load: $STREAMS concurrent streams; \"rpm key, session\": each request with a key that has an rpm limit (admitted by the store) and \`x-qore-session: bench-N\` (N the worker: one turn appended per request); \"key without limits, no session\": the store is asked for nothing per request but usage; window ${SECS} s after ${WARMUP} s of warm-up, per scenario and target"
  echo
  "$EX/bench_load" scale-report "$RAW"
} >"$WORK/report.md"
cat "$WORK/report.md"
if [ -n "$OUT" ]; then cp "$WORK/report.md" "$OUT"; say "written to $OUT"; fi
python3 - "$RAW" <<'EOF'
import json, sys
bad = [r for r in map(json.loads, open(sys.argv[1])) if "ok" in r and (r["errors"] or r["unfinished"])]
for r in bad:
    print(f"bench-scale: {r['target']} {r['scenario']}: {r['errors']} errors, {r['unfinished']} unfinished: {r['first_error']}", file=sys.stderr)
sys.exit(1 if bad else 0)
EOF
