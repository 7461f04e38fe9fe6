#!/usr/bin/env bash
# The soak of `qore serve`: mixed load onto three processes behind HAProxy while PostgreSQL is
# stopped and frozen and processes are SIGKILLed, then the check that nothing acknowledged
# was lost. By hand (ten minutes) and in short form in CI (crates/qore-cli/tests/cli_soak.rs):
#
#   scripts/soak-serve.sh [--minutes 10 | --seconds S] [--chaos-every 30] [--outage 4]
#                         [--concurrency 12] [--interval-ms 40] [--dir DIR]
#
# What runs, all on 127.0.0.1:
# - upstream: `soak_load upstream` (crates/qore-serve/examples/soak_load): a Chat Completions
#   server answering `re: ` + the request's last user text, one word per delta, --interval-ms
#   apart, so every stored turn names its request;
# - `scripts/scale.sh up`: PostgreSQL (pg.sh), 3 `qore serve --no-auth` processes, HAProxy;
# - load: `soak_load run`, --concurrency workers for the duration: Chat Completions, Messages
#   and Responses, streamed and not, `x-qore-session: soak-W` and `store: true` (new and
#   continuing with previous_response_id), and a ledger (DIR/ledger.jsonl) of every write
#   the server acknowledged (a 200 with the dialect's answer, or a stream's success event);
# - chaos, every --chaos-every seconds, in turn: SIGKILL a random process (restarted
#   --outage/2 s later with `scale.sh restart`), `pg.sh stop` (started again after --outage
#   s), `pg.sh freeze` (thawed after --outage s). DIR/chaos.log has each with its time.
# Then the load stops, everything is brought back and must be healthy (`scale.sh status`),
# and `soak_load check` resolves every ledger entry through the load balancer and in the
# store, and checks that no stored turn is half (also counted by SQL: a turn not `finished`,
# not opened by a user message or not ended by an assistant one).
#
# Prints `soak: requests=N acknowledged=N plain=N refused=N failed=N other=N lost=N
# half_turns=N` and a table per request kind (also in DIR/summary.txt). Exit 0 when nothing
# was lost and no turn is half, 1 when something was, 2 on a usage error, 3 when the set
# could not be started or made healthy again.
#
# Environment: QORE_BIN (the qore binary; default: build and use target/release/qore),
# SOAK_LOAD_BIN (the soak_load example; default: build target/release/examples/soak_load).
# Both must come from one tree: the check opens the store with qore-store, which refuses a
# database migrated by a newer qore ("migration … is missing").
# Without --dir the work directory is a temporary one, removed on success and kept (its
# path printed) on failure; with --dir it is kept. Everything started is stopped on exit
# (trap), and every wait is bounded.
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
say() { echo "soak: $*" >&2; }
die() { say "$*"; exit "${2:-3}"; }

DURATION=600 CHAOS=30 OUTAGE=4 CONCURRENCY=12 INTERVAL=40 DIR=""
number() { case "$2" in ''|*[!0-9]*) say "$1 wants a whole number"; exit 2 ;; esac; echo "$2"; }
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) DURATION=$(( $(number "$1" "${2:-}") * 60 )); shift 2 ;;
    --seconds) DURATION="$(number "$1" "${2:-}")"; shift 2 ;;
    --chaos-every) CHAOS="$(number "$1" "${2:-}")"; shift 2 ;;
    --outage) OUTAGE="$(number "$1" "${2:-}")"; shift 2 ;;
    --concurrency) CONCURRENCY="$(number "$1" "${2:-}")"; shift 2 ;;
    --interval-ms) INTERVAL="$(number "$1" "${2:-}")"; shift 2 ;;
    --dir) DIR="${2:?--dir DIR}"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) say "unknown argument $1 (see --help)"; exit 2 ;;
  esac
done
[ "$DURATION" -ge 10 ] && [ "$CHAOS" -ge 2 ] && [ "$OUTAGE" -ge 1 ] && [ "$CONCURRENCY" -ge 1 ] \
  || { say "--seconds from 10, --chaos-every from 2, --outage and --concurrency from 1"; exit 2; }

KEEP=1
if [ -z "$DIR" ]; then DIR="$(mktemp -d "${TMPDIR:-/tmp}/soak-serve.XXXXXX")"; KEEP=0; fi
mkdir -p "$DIR"
DIR="$(cd "$DIR" && pwd)"
chmod 755 "$DIR"  # as root, pg.sh runs PostgreSQL as another user, who must reach DIR/scale/pg
SCALE="$DIR/scale" PG="$DIR/scale/pg"
UPSTREAM_PID="" LOAD_PID="" FROZEN=0 OK=0
cleanup() {
  [ -n "$LOAD_PID" ] && kill -TERM "$LOAD_PID" 2>/dev/null
  if [ "$FROZEN" = 1 ]; then bash "$HERE/pg.sh" thaw "$PG" >/dev/null 2>&1 || true; fi
  [ -d "$SCALE" ] && QORE_SCALE_STOP_WAIT=5 bash "$HERE/scale.sh" down "$SCALE" >/dev/null 2>&1
  [ -n "$UPSTREAM_PID" ] && kill -TERM "$UPSTREAM_PID" 2>/dev/null
  if [ "$KEEP" = 0 ] && [ "$OK" = 1 ]; then rm -rf "$DIR"
  elif [ "$OK" != 1 ]; then say "logs kept in $DIR"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

bash "$HERE/scale-env.sh" install
cd "$ROOT"
QORE="${QORE_BIN:-}" LOAD="${SOAK_LOAD_BIN:-}"
if [ -z "$QORE" ]; then
  say "building qore (release)"
  cargo build --release -q -p qore-cli >&2
  QORE="$ROOT/target/release/qore"
fi
if [ -z "$LOAD" ]; then
  say "building soak_load (release)"
  cargo build --release -q -p qore-serve --example soak_load >&2
  LOAD="$ROOT/target/release/examples/soak_load"
fi
[ -x "$QORE" ] || die "no qore binary at $QORE"
[ -x "$LOAD" ] || die "no soak_load binary at $LOAD"

ms() { date +%s%3N; }
log_chaos() { echo "$(ms) $*" >>"$DIR/chaos.log"; say "chaos: $*"; }

# --- the upstream and the set
"$LOAD" upstream --interval-ms "$INTERVAL" --max-seconds $((DURATION + 900)) \
  >"$DIR/upstream.out" 2>"$DIR/upstream.log" &
UPSTREAM_PID=$!
UP=""
for _ in $(seq 100); do
  UP="$(head -n 1 "$DIR/upstream.out" 2>/dev/null || true)"
  [ -n "$UP" ] && break
  kill -0 "$UPSTREAM_PID" 2>/dev/null || break
  sleep 0.1
done
[ -n "$UP" ] || die "the upstream did not start: $(cat "$DIR/upstream.log")"
mkdir -p "$DIR/config/providers" "$DIR/data"
printf 'name = "soak"\nprotocol = "openai-chat"\nurl = "%s"\n' "$UP" >"$DIR/config/providers/soak.toml"
export QORE_CONFIG_DIR="$DIR/config" QORE_DATA_DIR="$DIR/data"
unset QORE_STORE_URL QORE_LOG
: >"$DIR/chaos.log"
LB="$(QORE_BIN="$QORE" QORE_SCALE_OWNER_PID=$$ bash "$HERE/scale.sh" up "$SCALE" --processes 3 \
  -- --no-auth --drain-timeout 2)" || die "scale.sh up failed"
STORE="$(cat "$SCALE/store")"
PG_PORT="$(cat "$PG/port")"
say "load balancer $LB, store ${STORE%%\?*}, upstream $UP; ${DURATION} s of load, chaos every ${CHAOS} s"

# --- load and chaos
timeout -k 5 $((DURATION + 150)) "$LOAD" run --url "$LB" --ledger "$DIR/ledger.jsonl" \
  --seconds "$DURATION" --concurrency "$CONCURRENCY" --timeout 60 \
  >"$DIR/load.json" 2>"$DIR/load.log" &
LOAD_PID=$!

restart() {  # I: start process I again (bounded)
  QORE_SCALE_STOP_WAIT=5 timeout -k 5 90 bash "$HERE/scale.sh" restart "$SCALE" "$1" \
    >>"$DIR/chaos.out" 2>&1 || log_chaos "restart of q$1 failed (see chaos.out)"
}
chaos() {  # N: the N-th fault
  case $(($1 % 3)) in
    0) local i=$((RANDOM % 3 + 1)) pid
       pid="$(cat "$SCALE/qore-$i.pid")"
       log_chaos "SIGKILL q$i (pid $pid)"
       kill -KILL "$pid" 2>/dev/null || true
       sleep "$(( (OUTAGE + 1) / 2 ))"
       restart "$i"
       log_chaos "q$i back (pid $(cat "$SCALE/qore-$i.pid"))" ;;
    1) log_chaos "PostgreSQL stop"
       bash "$HERE/pg.sh" stop "$PG" >>"$DIR/chaos.out" 2>&1 || log_chaos "pg.sh stop failed"
       sleep "$OUTAGE"
       bash "$HERE/pg.sh" start "$PG" "$PG_PORT" >>"$DIR/chaos.out" 2>&1 || log_chaos "pg.sh start failed"
       log_chaos "PostgreSQL started" ;;
    2) log_chaos "PostgreSQL freeze"
       FROZEN=1
       bash "$HERE/pg.sh" freeze "$PG" >>"$DIR/chaos.out" 2>&1 || log_chaos "pg.sh freeze failed"
       sleep "$OUTAGE"
       bash "$HERE/pg.sh" thaw "$PG" >>"$DIR/chaos.out" 2>&1 || log_chaos "pg.sh thaw failed"
       FROZEN=0
       log_chaos "PostgreSQL thawed" ;;
  esac
}
START=$(date +%s) N=$((RANDOM % 3)) FAULTS=0
NEXT=$((START + CHAOS))
while kill -0 "$LOAD_PID" 2>/dev/null; do
  NOW=$(date +%s)
  [ "$NOW" -lt $((START + DURATION)) ] || break
  if [ "$NOW" -ge "$NEXT" ]; then
    chaos "$N"; N=$((N + 1)); FAULTS=$((FAULTS + 1))
    NEXT=$(( $(date +%s) + CHAOS ))
  fi
  sleep 1
done
LOAD_RC=0
wait "$LOAD_PID" || LOAD_RC=$?
LOAD_PID=""
[ "$LOAD_RC" = 0 ] || { tail -n 20 "$DIR/load.log" >&2; die "the load generator failed ($LOAD_RC)"; }
say "load done after $FAULTS faults; bringing everything back"

# --- everything healthy again (bounded)
bash "$HERE/pg.sh" start "$PG" "$PG_PORT" >>"$DIR/chaos.out" 2>&1 || true
for i in 1 2 3; do
  pid="$(cat "$SCALE/qore-$i.pid" 2>/dev/null || true)"
  if [ -z "$pid" ] || ! kill -0 "$pid" 2>/dev/null; then restart "$i"; fi
done
HEALTHY=0
for _ in $(seq 60); do
  if bash "$HERE/scale.sh" status "$SCALE" >"$DIR/status.txt" 2>&1 \
      && [ "$(grep -c 'readyz 200' "$DIR/status.txt")" = 3 ] \
      && [ "$(curl -sS --noproxy '*' -m 5 -o /dev/null -w '%{http_code}' "$LB/readyz" 2>/dev/null)" = 200 ]; then
    HEALTHY=1; break
  fi
  sleep 1
done
[ "$HEALTHY" = 1 ] || { cat "$DIR/status.txt" >&2; die "the set did not come back healthy"; }

# --- the ledger check, and half turns counted by SQL too
CHECK_RC=0
timeout -k 5 600 "$LOAD" check --url "$LB" --store "$STORE" --ledger "$DIR/ledger.jsonl" \
  --seconds 120 >"$DIR/check.json" 2>"$DIR/check.log" || CHECK_RC=$?
[ "$CHECK_RC" -le 1 ] || { tail -n 20 "$DIR/check.log" >&2; die "the check did not run ($CHECK_RC)"; }
SQL_HALF="$(bash "$HERE/pg.sh" psql "$PG" -tAc "
  SELECT count(*) FROM turns t WHERE t.status <> 'finished'
    OR (SELECT m.role FROM messages m WHERE m.turn_id = t.id ORDER BY m.seq LIMIT 1) IS DISTINCT FROM 'user'
    OR (SELECT m.role FROM messages m WHERE m.turn_id = t.id ORDER BY m.seq DESC LIMIT 1) IS DISTINCT FROM 'assistant'")" \
  || die "the SQL count of half turns failed"
{
  "$LOAD" summary "$DIR/load.json" "$DIR/check.json"
  echo "  faults: $FAULTS ($(grep -c SIGKILL "$DIR/chaos.log") SIGKILL, $(grep -c 'PostgreSQL stop' "$DIR/chaos.log") PostgreSQL stop, $(grep -c 'PostgreSQL freeze' "$DIR/chaos.log") freeze); half turns by SQL: $SQL_HALF"
} | tee "$DIR/summary.txt"
if [ "$CHECK_RC" = 0 ] && [ "$SQL_HALF" = 0 ]; then OK=1; exit 0; fi
say "something acknowledged was lost or a turn is half: see $DIR/check.json and $DIR/chaos.log"
exit 1
