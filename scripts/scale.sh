#!/usr/bin/env bash
# Several `qore serve` processes on one PostgreSQL behind HAProxy, all on loopback, all kept
# in one directory of your choosing.
#
#   scale.sh up DIR [--processes N] [--port PORT] [--config FILE] [--store URL]
#                   [--pg-port PORT] [-- SERVE_ARGS...]
#       PostgreSQL via scripts/pg.sh in DIR/pg (unless --store names one), N (default 3)
#       `qore serve --store URL --listen 127.0.0.1:0 [--config FILE] SERVE_ARGS...`
#       started together (logs DIR/qore-I.log, pid DIR/qore-I.pid, URL DIR/qore-I.url), and
#       HAProxy with the config it writes to DIR/haproxy.cfg on 127.0.0.1:PORT (default a
#       free port). Waits until the load balancer answers, then prints its URL (the only
#       thing on stdout). On any failure it stops what it started and exits 1.
#   scale.sh down DIR      SIGTERM to HAProxy and every process (SIGKILL after
#                          QORE_SCALE_STOP_WAIT seconds, default 40), then stops PostgreSQL
#   scale.sh status DIR    each part: pid, alive or not, /readyz; exit 1 unless all are up
#   scale.sh restart DIR I process I (as in DIR/qore-I.pid) stopped if it runs (SIGTERM, its
#                          drain) and started again on its address, as `up` started it
#
# The load balancer (HAProxy from Debian, installed by scripts/scale-env.sh):
# - round robin over the processes that are ready (GET /readyz 200: the process runs, is not
#   draining and its store answers), checked every 500 ms (2 s to answer), down after two
#   failed checks, up after one good one; a refused connection marks a process down at once,
#   and the request is sent to another one (`retries 3`, `option redispatch 1`);
# - when no process is ready (the database is down), requests still go to every process
#   (unchecked: a dead one refuses and the request moves on), which answer 503 with
#   Retry-After in the caller's dialect;
# - timeouts for long streams: connect 1 s, client and server 10 min between bytes;
# - each answer says which process served it: `x-qore-backend: qI` (I as in DIR/qore-I.pid).
#
# Environment: QORE_BIN (the qore binary; default `qore` on PATH), QORE_CONFIG_DIR and
# QORE_DATA_DIR (passed on to the processes), QORE_SCALE_MAXCONN (HAProxy's maxconn, 4096),
# QORE_SCALE_OWNER_PID (tests: stop everything once that process has exited; also given to
# pg.sh as QORE_PG_OWNER_PID).
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
NAME=scale
say() { echo "$NAME: $*" >&2; }
die() { say "$*"; exit 1; }

free_port() {
  local p
  if command -v python3 >/dev/null 2>&1; then
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' && return 0
  fi
  for _ in $(seq 50); do
    p=$((20000 + RANDOM % 40000))
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return 0; }
  done
  die "no free port found"
}

alive_as() {  # PIDFILE WORD: the pid in PIDFILE when it lives and its command line has WORD
  local pid
  pid="$(cat "$1" 2>/dev/null)" || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$2" || return 1
  echo "$pid"
}

http_code() {  # URL: the status of GET URL (000 when nothing answers)
  curl -sS --noproxy '*' -m 2 -o /dev/null -w '%{http_code}' "$1" 2>/dev/null || true
}

wait_code() {  # URL CODE SECONDS PIDFILE WORD: wait until GET URL answers CODE, while it lives
  local i
  for i in $(seq $(($3 * 5))); do
    [ "$(http_code "$1")" = "$2" ] && return 0
    alive_as "$4" "$5" >/dev/null || return 1
    sleep 0.2
  done
  return 1
}

haproxy_bin() { command -v haproxy 2>/dev/null || { [ -x /usr/sbin/haproxy ] && echo /usr/sbin/haproxy; }; }

write_haproxy_cfg() {  # DIR PORT N
  local dir="$1" port="$2" n="$3" i url maxconn="${QORE_SCALE_MAXCONN:-4096}"
  {
    cat <<EOF
# Written by scripts/scale.sh for $dir: $n qore serve processes behind 127.0.0.1:$port.
global
    maxconn $maxconn
    log stderr format raw local0 notice

defaults
    mode http
    log global
    option dontlognull
    option redispatch 1
    retries 3
    timeout connect 1s
    timeout client 10m
    timeout server 10m
    timeout http-request 30s
    timeout http-keep-alive 30s
    timeout queue 10s
    timeout check 2s
    default-server inter 500ms fastinter 250ms downinter 500ms fall 2 rise 1 observe layer4 error-limit 1 on-error mark-down

frontend qore
    bind 127.0.0.1:$port
    maxconn $maxconn
    http-response set-header x-qore-backend %s
    use_backend ready if { nbsrv(ready) gt 0 }
    default_backend live

# The processes that can answer fully (their store too).
backend ready
    balance roundrobin
    option httpchk GET /readyz
    http-check expect status 200
EOF
    for i in $(seq "$n"); do
      url="$(cat "$dir/qore-$i.url")"
      echo "    server q$i ${url#http://} check maxconn $maxconn"
    done
    cat <<EOF

# When none is ready (the database is down, or checks time out under overload): every
# process, unchecked; a dead one refuses the connection and the request is sent to another.
# They answer 503 and Retry-After in the caller's dialect rather than HAProxy's own page.
backend live
    balance roundrobin
EOF
    for i in $(seq "$n"); do
      url="$(cat "$dir/qore-$i.url")"
      echo "    server q$i ${url#http://} maxconn $maxconn"
    done
  } >"$dir/haproxy.cfg"
}

start_watcher() {  # DIR: stop everything once $QORE_SCALE_OWNER_PID has exited
  local owner="${QORE_SCALE_OWNER_PID:-}" dir="$1"
  [ -n "$owner" ] || return 0
  ( trap '' HUP
    while kill -0 "$owner" 2>/dev/null && [ -e "$dir/url" -o -e "$dir/starting" ]; do sleep 1; done
    kill -0 "$owner" 2>/dev/null || QORE_SCALE_STOP_WAIT=3 bash "$HERE/scale.sh" down "$dir"
  ) </dev/null >/dev/null 2>&1 &
  disown
}

start_one() {  # DIR I LISTEN: start process I (after `. DIR/serve.env`, or in cmd_up)
  local dir="$1" i="$2"
  rm -f "$dir/qore-$i.url"
  setsid "$qore" serve --store "$store" --listen "$3" "${cfg[@]}" "${serve_args[@]}" \
    </dev/null >"$dir/qore-$i.out" 2>>"$dir/qore-$i.log" &
  echo $! >"$dir/qore-$i.pid"
}

ready_one() {  # DIR I: wait for process I's URL and its /readyz 200; record the URL
  local dir="$1" i="$2" url="" t
  for t in $(seq 600); do  # 60 s
    url="$(head -n 1 "$dir/qore-$i.out" 2>/dev/null || true)"
    [ -n "$url" ] && break
    alive_as "$dir/qore-$i.pid" serve >/dev/null || break
    sleep 0.1
  done
  url="${url%/}"; url="${url%/v1}"
  case "$url" in
    http://127.0.0.1:*) ;;
    *) tail -n 20 "$dir/qore-$i.log" >&2; die "process $i did not start" ;;
  esac
  echo "$url" >"$dir/qore-$i.url"
  wait_code "$url/readyz" 200 60 "$dir/qore-$i.pid" serve \
    || { tail -n 20 "$dir/qore-$i.log" >&2; die "process $i at $url is not ready"; }
  say "process $i: $url (pid $(cat "$dir/qore-$i.pid"))"
}

cmd_restart() {  # DIR I: stop process I (SIGTERM, drain) and start it again on its address
  local dir="${1:?usage: scale.sh restart DIR I}" i="${2:?usage: scale.sh restart DIR I}" pid url
  dir="$(cd "$dir" && pwd)"
  [ -e "$dir/serve.env" ] && [ -e "$dir/qore-$i.url" ] || die "no process $i in $dir"
  local qore store cfg serve_args
  # shellcheck disable=SC1091
  . "$dir/serve.env"
  url="$(cat "$dir/qore-$i.url")"
  if pid="$(alive_as "$dir/qore-$i.pid" serve)"; then stop_pids "${QORE_SCALE_STOP_WAIT:-40}" "$pid"; fi
  start_one "$dir" "$i" "${url#http://}"
  ready_one "$dir" "$i"
}

cmd_up() {
  local dir="${1:?usage: scale.sh up DIR [--processes N] [--port PORT] [--config FILE] [--store URL] [--pg-port PORT] [-- ARGS...]}"
  shift
  local n=3 port="" config="" store="" pg_port="" serve_args=()
  while [ $# -gt 0 ]; do
    case "$1" in
      --processes) n="${2:?--processes N}"; shift 2 ;;
      --port) port="${2:?--port PORT}"; shift 2 ;;
      --config) config="${2:?--config FILE}"; shift 2 ;;
      --store) store="${2:?--store URL}"; shift 2 ;;
      --pg-port) pg_port="${2:?--pg-port PORT}"; shift 2 ;;
      --) shift; serve_args=("$@"); break ;;
      *) die "unknown argument $1 (see: scale.sh --help)" ;;
    esac
  done
  case "$n" in ''|*[!0-9]*|0) die "--processes wants a number from 1" ;; esac
  local qore="${QORE_BIN:-$(command -v qore || true)}"
  [ -n "$qore" ] && [ -x "$qore" ] || die "no qore binary (set QORE_BIN or put qore on PATH)"
  bash "$HERE/scale-env.sh" install
  local haproxy; haproxy="$(haproxy_bin)" || die "no haproxy"

  mkdir -p "$dir"
  dir="$(cd "$dir" && pwd)"
  if [ -e "$dir/url" ]; then die "$dir is already up (scale.sh down $dir first)"; fi
  rm -f "$dir"/qore-*.pid "$dir"/qore-*.url "$dir"/qore-*.log "$dir"/haproxy.pid
  : >"$dir/starting"
  UP_DIR="$dir"
  trap 'st=$?; if [ "$st" -ne 0 ]; then say "failed; stopping what was started"; cmd_down "$UP_DIR" >/dev/null 2>&1 || true; fi; rm -f "$UP_DIR/starting"' EXIT
  start_watcher "$dir"

  if [ -z "$store" ]; then
    [ -n "$pg_port" ] || pg_port="$(free_port)"
    store="$(QORE_PG_OWNER_PID="${QORE_SCALE_OWNER_PID:-}" bash "$HERE/pg.sh" start "$dir/pg" "$pg_port")" \
      || die "PostgreSQL did not start"
  fi
  echo "$store" >"$dir/store"
  say "store: ${store%%\?*}"

  local i cfg=()
  [ -z "$config" ] || cfg=(--config "$config")
  # What `restart` needs to start process I again as it was.
  { declare -p qore store cfg serve_args
    local var; for var in QORE_CONFIG_DIR QORE_DATA_DIR QORE_LOG; do
      if [ -n "${!var+x}" ]; then printf 'export %s=%q\n' "$var" "${!var}"; fi
    done
  } >"$dir/serve.env"
  for i in $(seq "$n"); do  # together: several processes may migrate one new database at once
    start_one "$dir" "$i" 127.0.0.1:0
  done
  for i in $(seq "$n"); do
    ready_one "$dir" "$i"
  done

  [ -n "$port" ] || port="$(free_port)"
  write_haproxy_cfg "$dir" "$port" "$n"
  "$haproxy" -c -q -f "$dir/haproxy.cfg" >&2 || die "HAProxy refuses $dir/haproxy.cfg"
  setsid "$haproxy" -db -f "$dir/haproxy.cfg" </dev/null >"$dir/haproxy.log" 2>&1 &
  echo $! >"$dir/haproxy.pid"
  local lb="http://127.0.0.1:$port"
  wait_code "$lb/readyz" 200 30 "$dir/haproxy.pid" haproxy \
    || { tail -n 20 "$dir/haproxy.log" >&2; die "the load balancer at $lb does not answer"; }
  echo "$lb" >"$dir/url"
  say "load balancer: $lb (HAProxy pid $(cat "$dir/haproxy.pid"))"
  echo "$lb"
}

stop_pids() {  # WAIT PID...: SIGTERM, then SIGKILL what still runs after WAIT seconds
  local wait="$1" pid i left; shift
  [ $# -gt 0 ] || return 0
  kill -TERM "$@" 2>/dev/null || true
  for i in $(seq $((wait * 5))); do
    left=0
    for pid in "$@"; do kill -0 "$pid" 2>/dev/null && left=1; done
    [ "$left" = 0 ] && return 0
    sleep 0.2
  done
  kill -KILL "$@" 2>/dev/null || true
}

cmd_down() {
  local dir="${1:?usage: scale.sh down DIR}"
  [ -d "$dir" ] || return 0
  dir="$(cd "$dir" && pwd)"
  rm -f "$dir/url" "$dir/starting"
  local pid pids=() f
  pid="$(alive_as "$dir/haproxy.pid" haproxy)" && stop_pids 5 "$pid"
  for f in "$dir"/qore-*.pid; do
    [ -e "$f" ] || continue
    pid="$(alive_as "$f" serve)" && pids+=("$pid")
  done
  stop_pids "${QORE_SCALE_STOP_WAIT:-40}" "${pids[@]}"
  if [ -d "$dir/pg/data" ]; then bash "$HERE/pg.sh" stop "$dir/pg" || true; fi
  say "stopped $dir"
}

cmd_status() {
  local dir="${1:?usage: scale.sh status DIR}" bad=0 f i pid url
  [ -d "$dir" ] || die "no such directory: $dir"
  if [ -d "$dir/pg/data" ]; then
    if bash "$HERE/pg.sh" psql "$dir/pg" -tAc 'SELECT 1' >/dev/null 2>&1; then
      echo "postgres  $(bash "$HERE/pg.sh" url "$dir/pg")  up"
    else echo "postgres  $(bash "$HERE/pg.sh" url "$dir/pg")  down"; bad=1; fi
  fi
  for f in "$dir"/qore-*.pid; do
    [ -e "$f" ] || continue
    i="${f##*/qore-}"; i="${i%.pid}"
    url="$(cat "$dir/qore-$i.url" 2>/dev/null || echo '?')"
    if pid="$(alive_as "$f" serve)"; then
      echo "q$i  pid $pid  $url  readyz $(http_code "$url/readyz")"
    else echo "q$i  $url  not running"; bad=1; fi
  done
  if pid="$(alive_as "$dir/haproxy.pid" haproxy)"; then
    echo "haproxy  pid $pid  $(cat "$dir/url" 2>/dev/null || echo 'starting')"
  else echo "haproxy  not running"; bad=1; fi
  return "$bad"
}

case "${1:-}" in
  up) shift; cmd_up "$@" ;;
  down) shift; cmd_down "$@" ;;
  status) shift; cmd_status "$@" ;;
  restart) shift; cmd_restart "$@" ;;
  *) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
esac
