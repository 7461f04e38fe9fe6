#!/usr/bin/env bash
# Speed and memory of `qore serve` against the same upstream reached directly and through
# LiteLLM's proxy, in one run. Run by hand (minutes; not part of CI):
#
#   scripts/bench-serve.sh [--out FILE]      Markdown tables on stdout (and into FILE)
#
# What runs, all on 127.0.0.1:
# - upstreams: two `bench_upstream`s (crates/qore-serve/examples), each answering Chat
#   Completions (`/v1/chat/completions`) and Anthropic Messages (`/v1/messages`) with a fixed
#   answer: 20 content deltas then the end event, or one short JSON answer. One sends its
#   deltas as fast as they are read, the other ("paced") one every BENCH_PACE_MS (20) ms;
# - qore: `target/release/qore serve` with four providers (config and store in a temporary
#   directory, no keys): `bench` and `bench-a` (Chat and Anthropic, unpaced upstream),
#   `paced` and `paced-a` (the same, paced upstream);
# - nginx (BENCH_TARGETS holding `nginx`; Debian's package, installed if missing): a plain
#   reverse proxy (one worker, no buffering, kept-alive upstream connections), one port per
#   upstream: the floor of a proxy that reads a chunk and writes it;
# - LiteLLM: its proxy (pip `litellm` and the proxy's modules, pinned, in
#   $CACHE/litellm-venv), one worker, `bench/fixed` = `openai/fixed` at the unpaced
#   upstream; run on the Chat dialect onto the Chat upstream only;
# - load: `bench_load run` against each target in turn, scenario by scenario, and
#   `bench_load report` for the tables.
#
# A scenario is KIND:LOAD[:DIALECTS[:UPSTREAM[:paced]]]: KIND stream|short; LOAD N (closed
# loop, N clients) or @R (open loop, R requests/s); DIALECTS the inbound dialects qore is
# asked in, `+`-separated (chat, responses, messages; default `all`, the three); UPSTREAM
# chat or anthropic (default chat). `direct` and `nginx` run once per scenario in the
# upstream's own protocol (the floor every dialect is compared with). Each run: warm-up,
# then a window of BENCH_SECONDS.
#
# Pinning (BENCH_PIN=1, the default, with taskset and 2+ cores): the gateway under test
# (qore or LiteLLM) on CPU 1; the upstream and the load generator on CPU 0. Each gateway
# then has one core of its own and the client+upstream pair the other: a gateway's ratio
# to direct says whether one core of it keeps up with that pair. BENCH_PIN=0: no pinning.
#
# After each run the script waits (at most BENCH_SETTLE, 180 s) until that gateway is idle,
# so one still working off a backlog does not share its core with the next run.
#
# Environment: BENCH_SECONDS (5), BENCH_WARMUP (1), BENCH_GRACE (10), BENCH_PIN (1),
# BENCH_TARGETS ("direct qore nginx litellm"), BENCH_SCENARIOS (see DEFAULT_SCENARIOS),
# BENCH_PACE_MS (20), BENCH_RAW (keep the JSON lines there), QORE_CACHE_DIR
# (default ${XDG_CACHE_HOME:-$HOME/.cache}/qore), QORE_PYTHON (python3), BENCH_NO_BUILD=1
# (use the binaries already in target/release), BENCH_QORE_BIN (another qore binary, e.g.
# a patched build to compare; the report names it).
# Everything the script starts is stopped on exit (trap), and every wait is bounded.
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
CACHE="${QORE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/qore}"
VENV="$CACHE/litellm-venv"
PYTHON="${QORE_PYTHON:-python3}"
SECS="${BENCH_SECONDS:-5}"
WARMUP="${BENCH_WARMUP:-1}"
GRACE="${BENCH_GRACE:-10}"
SETTLE="${BENCH_SETTLE:-180}"
PIN="${BENCH_PIN:-1}"
TARGETS="${BENCH_TARGETS:-direct qore nginx litellm}"
DEFAULT_SCENARIOS="short:50 short:50:all:anthropic stream:100 stream:100:all:anthropic
short:@2000 short:@2000:all:anthropic stream:1000:all:chat:paced
stream:1000:all:anthropic:paced stream:1:chat short:1:chat"
SCENARIOS="${BENCH_SCENARIOS:-$DEFAULT_SCENARIOS}"
PACE_MS="${BENCH_PACE_MS:-20}"
CHUNKS=20
OUT=""

# LiteLLM 1.110.2's `[proxy]` extra wants `litellm-proxy`, which PyPI lacks: these are the
# modules its proxy imports (found by importing litellm.proxy.proxy_server until it loaded).
LITELLM_PINS="litellm==1.110.2 fastapi==0.165.0 starlette==1.10.0 uvicorn==0.54.0
uvloop==0.23.0 orjson==3.13.0 backoff==2.2.1 APScheduler==3.11.3 PyYAML==6.0.4 rq==3.0.0
python-multipart==0.0.34 email-validator==2.4.0 cryptography==50.0.2 PyJWT==2.15.1
PyNaCl==1.6.2 websockets==15.0.1 semver==3.1.2 Expression==5.8.0 fastapi-sso==0.23.0
mcp==2.3.0 soundfile==0.14.0"
LITELLM_PINS="$(echo $LITELLM_PINS)"  # one line

say() { echo "bench-serve: $*" >&2; }
die() { say "$*"; exit 1; }

while [ $# -gt 0 ]; do
  case "$1" in
    --out) OUT="${2:?--out FILE}"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument $1 (see --help)" ;;
  esac
done

WORK="$(mktemp -d "${TMPDIR:-/tmp}/bench-serve.XXXXXX")"
STARTED=()  # pids of everything we started, stopped by cleanup
LOAD_PID=""  # the load generator while it runs
cleanup() {
  local pid i
  [ -n "$LOAD_PID" ] && kill -TERM "$LOAD_PID" 2>/dev/null
  for pid in "${STARTED[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for i in $(seq 50); do  # up to 10 s for them to go
    local alive=0
    for pid in "${STARTED[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ "$alive" = 0 ] && break
    sleep 0.2
  done
  for pid in "${STARTED[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
  "$PYTHON" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

first_line() {  # FILE PID SECONDS: wait for FILE's first line while PID lives; print it
  local i
  for i in $(seq $(($3 * 10))); do
    if [ -s "$1" ] && head -n 1 "$1" | grep -q .; then head -n 1 "$1"; return 0; fi
    kill -0 "$2" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

wait_http() {  # URL PID SECONDS: wait until GET URL answers 200 while PID lives
  local i
  for i in $(seq "$3"); do
    curl -fsS --noproxy '*' -m 2 -o /dev/null "$1" 2>/dev/null && return 0
    kill -0 "$2" 2>/dev/null || return 1
    sleep 1
  done
  return 1
}

install_litellm() {
  local stamp="$VENV/.qore-pins"
  [ -x "$VENV/bin/litellm" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$LITELLM_PINS" ] && return 0
  say "installing LiteLLM into $VENV"
  rm -rf "$VENV"
  "$PYTHON" -m venv "$VENV" >&2 || die "'$PYTHON -m venv' failed"
  # shellcheck disable=SC2086
  timeout 1200 "$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-input \
    $LITELLM_PINS >&2 || die "pip install failed"
  LITELLM_LOCAL_MODEL_COST_MAP=True "$VENV/bin/python" -c 'import litellm.proxy.proxy_server' \
    >/dev/null 2>"$WORK/import.err" \
    || { tail -n 5 "$WORK/import.err" >&2; die "LiteLLM's proxy does not import"; }
  echo "$LITELLM_PINS" >"$stamp"
}

GW=()    # prefix for the gateways
LOAD=()  # prefix for the upstream and the load generator
CORES="$(nproc 2>/dev/null || echo 1)"
PINNING="none (all processes share the $CORES cores)"
if [ "$PIN" = 1 ] && command -v taskset >/dev/null 2>&1 && [ "$CORES" -ge 2 ]; then
  GW=(taskset -c 1)
  LOAD=(taskset -c 0)
  PINNING="gateway on CPU 1; upstream and load generator on CPU 0 (of $CORES)"
fi

cd "$ROOT"
if [ "${BENCH_NO_BUILD:-0}" != 1 ]; then
  say "building (release)"
  cargo build --release -q -p qore-serve --example bench_upstream --example bench_load >&2
  case " $TARGETS " in *" qore "*) cargo build --release -q -p qore-cli >&2 ;; esac
fi
EX="$ROOT/target/release/examples"
QORE="${BENCH_QORE_BIN:-$ROOT/target/release/qore}"
case " $TARGETS " in *" litellm "*) install_litellm ;; esac

# --- upstreams: unpaced and paced (started here, not in $(...), so the trap sees them)
"${LOAD[@]}" "$EX/bench_upstream" --listen 127.0.0.1:0 --chunks "$CHUNKS" --interval-ms 0 \
  --max-seconds 7200 >"$WORK/upstream.out" 2>"$WORK/upstream.err" &
UP_PID=$!
STARTED+=("$UP_PID")
"${LOAD[@]}" "$EX/bench_upstream" --listen 127.0.0.1:0 --chunks "$CHUNKS" \
  --interval-ms "$PACE_MS" --max-seconds 7200 >"$WORK/paced.out" 2>"$WORK/paced.err" &
PACED_PID=$!
STARTED+=("$PACED_PID")
UP_URL="$(first_line "$WORK/upstream.out" "$UP_PID" 10)" || die "the upstream did not start"
PACED_URL="$(first_line "$WORK/paced.out" "$PACED_PID" 10)" || die "the paced upstream did not start"
say "upstreams at $UP_URL and $PACED_URL (paced, $PACE_MS ms)"

# --- qore serve
QORE_URL="" QORE_PID=""
case " $TARGETS " in *" qore "*)
  mkdir -p "$WORK/qore/config/providers" "$WORK/qore/data"
  provider() {  # NAME PROTOCOL URL
    printf 'name = "%s"\nprotocol = "%s"\nurl = "%s"\n' "$1" "$2" "$3" \
      >"$WORK/qore/config/providers/$1.toml"
  }
  provider bench openai-chat "$UP_URL"
  provider bench-a anthropic "${UP_URL%/v1}"
  provider paced openai-chat "$PACED_URL"
  provider paced-a anthropic "${PACED_URL%/v1}"
  port="$(free_port)"
  QORE_CONFIG_DIR="$WORK/qore/config" QORE_DATA_DIR="$WORK/qore/data" \
    "${GW[@]}" "$QORE" serve --listen "127.0.0.1:$port" --drain-timeout 2 \
    >"$WORK/qore.out" 2>"$WORK/qore.err" &
  QORE_PID=$!
  STARTED+=("$QORE_PID")
  base="$(first_line "$WORK/qore.out" "$QORE_PID" 30)" \
    || { tail -n 20 "$WORK/qore.err" >&2; die "qore serve did not start"; }
  base="${base%/}"; base="${base%/v1}"
  wait_http "$base/healthz" "$QORE_PID" 30 || die "qore serve: no /healthz"
  QORE_URL="$base/v1"
  say "qore serve at $QORE_URL (pid $QORE_PID)"
;; esac

# --- nginx: one port per upstream
NGINX_URL="" NGINX_PACED_URL="" NGINX_PID="" NGINX=""
case " $TARGETS " in *" nginx "*)
  if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then
    say "installing Debian's nginx"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends nginx >&2 \
      || die "apt-get install nginx failed"
  fi
  NGINX="$(command -v nginx || echo /usr/sbin/nginx)"
  mkdir -p "$WORK/nginx/logs"
  nport="$(free_port)" npaced="$(free_port)"
  site() {  # PORT UPSTREAM_URL
    local hostport="${2#http://}"
    hostport="${hostport%/v1}"
    printf '  upstream u%s { server %s; keepalive 1024; }\n' "$1" "$hostport"
    printf '  server {\n    listen 127.0.0.1:%s backlog=4096;\n    access_log off;\n' "$1"
    printf '    location / {\n      proxy_pass http://u%s;\n' "$1"
    printf '      proxy_http_version 1.1;\n      proxy_set_header Connection "";\n'
    printf '      proxy_buffering off;\n      proxy_request_buffering off;\n    }\n  }\n'
  }
  {
    printf 'worker_processes 1;\ndaemon off;\npid %s/nginx/nginx.pid;\n' "$WORK"
    printf 'error_log %s/nginx/logs/error.log warn;\n' "$WORK"
    printf 'events { worker_connections 8192; }\nhttp {\n  keepalive_requests 1000000;\n'
    site "$nport" "$UP_URL"
    site "$npaced" "$PACED_URL"
    printf '}\n'
  } >"$WORK/nginx/nginx.conf"
  "${GW[@]}" "$NGINX" -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" >"$WORK/nginx.out" 2>&1 &
  NGINX_PID=$!
  STARTED+=("$NGINX_PID")
  NGINX_URL="http://127.0.0.1:$nport/v1"
  NGINX_PACED_URL="http://127.0.0.1:$npaced/v1"
  wait_http "$NGINX_URL/models" "$NGINX_PID" 10 \
    || { cat "$WORK/nginx.out" "$WORK/nginx/logs/error.log" >&2; die "nginx did not start"; }
  say "nginx at $NGINX_URL and $NGINX_PACED_URL (pid $NGINX_PID)"
;; esac

# --- LiteLLM
LL_URL="" LL_PID=""
case " $TARGETS " in *" litellm "*)
  cat >"$WORK/litellm.yaml" <<EOF
model_list:
  - model_name: bench/fixed
    litellm_params:
      model: openai/fixed
      api_base: $UP_URL
      api_key: none
general_settings:
  dangerously_permit_weak_or_unset_master_key: true
EOF
  port="$(free_port)"
  LITELLM_LOCAL_MODEL_COST_MAP=True NO_PROXY='*' no_proxy='*' \
    "${GW[@]}" "$VENV/bin/litellm" --config "$WORK/litellm.yaml" --host 127.0.0.1 \
    --port "$port" --num_workers 1 >"$WORK/litellm.log" 2>&1 &
  LL_PID=$!
  STARTED+=("$LL_PID")
  wait_http "http://127.0.0.1:$port/health/liveliness" "$LL_PID" 180 \
    || { tail -n 20 "$WORK/litellm.log" >&2; die "LiteLLM did not start"; }
  LL_URL="http://127.0.0.1:$port/v1"
  say "LiteLLM at $LL_URL (pid $LL_PID)"
;; esac

tree_pids() {  # PID and its descendants, comma-separated
  local all="$1" p
  for p in $(pgrep -P "$1" 2>/dev/null || true); do all="$all,$(tree_pids "$p")"; done
  echo "$all"
}

cpu_ticks() {  # PIDS (comma-separated): their utime+stime so far, in clock ticks
  local p total=0 fields
  for p in ${1//,/ }; do
    fields="$(cut -d' ' -f14,15 "/proc/$p/stat" 2>/dev/null)" || continue
    [ -n "$fields" ] && total=$((total + ${fields% *} + ${fields#* }))
  done
  echo "$total"
}

# Wait until the gateway's processes are idle (under a tenth of a core over a second), at
# most SETTLE seconds: a gateway still working off the last run's backlog (LiteLLM after an
# open loop it could not keep up with) would otherwise share its core with the next one.
settle() {  # PIDS
  local i before after hz
  hz="$(getconf CLK_TCK 2>/dev/null || echo 100)"
  for i in $(seq "$SETTLE"); do
    before="$(cpu_ticks "$1")"
    sleep 1
    after="$(cpu_ticks "$1")"
    [ $((after - before)) -lt $((hz / 10)) ] && return 0
  done
  say "still busy after ${SETTLE} s: $1 (the next run shares its core)"
}

RAW="${BENCH_RAW:-$WORK/raw.jsonl}"
: >"$RAW"
measure() {  # TARGET DIALECT URL MODEL PIDS: one bench_load run of the current scenario
  local args=(--scenario "$name" --target "$1" --dialect "$2" --url "$3" --model "$4"
              --mode "$mode" --seconds "$SECS" --warmup "$WARMUP" --grace "$GRACE"
              --timeout 120 --max-requests 10000000)
  case "$load" in
    @*) args+=(--rate "${load#@}") ;;
    *) args+=(--concurrency "$load") ;;
  esac
  [ "$mode" = stream ] && args+=(--expect-deltas "$CHUNKS")
  [ -n "$5" ] && args+=(--watch-pids "$5")
  say "$name -> $1 ($2)"
  # In the background and waited for, so a signal reaches the trap at once.
  "${LOAD[@]}" "$EX/bench_load" run "${args[@]}" >>"$RAW" &
  LOAD_PID=$!
  wait "$LOAD_PID" || die "bench_load failed"
  LOAD_PID=""
  if [ -n "$5" ]; then settle "$5"; else sleep 1; fi
}
for sc in $SCENARIOS; do
  IFS=: read -r mode load dialects upstream pace <<<"$sc"
  case "$dialects" in "" | all) dialects="chat+responses+messages" ;; esac
  upstream="${upstream:-chat}"
  case "$load" in @*) lname="${load#@}/s open loop" ;; *) lname="x$load" ;; esac
  name="$mode $lname, $upstream upstream${pace:+, paced}"
  up="$UP_URL" nx="$NGINX_URL" model=bench own=chat
  if [ "$pace" = paced ]; then up="$PACED_URL" nx="$NGINX_PACED_URL" model=paced; fi
  if [ "$upstream" = anthropic ]; then own=messages model="$model-a"; fi
  for t in $TARGETS; do
    case "$t" in
      direct) measure direct "$own" "$up" fixed "" ;;
      nginx) measure nginx "$own" "$nx" fixed "$(tree_pids "$NGINX_PID")" ;;
      qore)
        for d in ${dialects//+/ }; do
          measure qore "$d" "$QORE_URL" "$model/fixed" "$(tree_pids "$QORE_PID")"
        done ;;
      litellm)
        if [ "$upstream" = chat ] && [ -z "$pace" ] && [[ "+$dialects+" == *+chat+* ]]; then
          measure litellm chat "$LL_URL" bench/fixed "$(tree_pids "$LL_PID")"
        fi ;;
      *) die "unknown target $t" ;;
    esac
  done
done

{
  echo "## qore serve: speed and memory"
  echo
  echo "- Command: \`BENCH_SECONDS=$SECS BENCH_WARMUP=$WARMUP BENCH_PIN=$PIN scripts/bench-serve.sh\`"
  echo "- Commit: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$ROOT" diff --quiet HEAD 2>/dev/null || echo ' (work tree with changes)'), $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "- Machine: $CORES cores ($(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | sed 's/^ //')), $(uname -sr)"
  echo "- Pinning: $PINNING"
  case " $TARGETS " in *" qore "*)
    echo "- qore: \`${QORE#"$ROOT/"}\`, built $(date -u -r "$QORE" +%Y-%m-%dT%H:%MZ), no keys" ;;
  esac
  case " $TARGETS " in *" litellm "*)
    echo "- LiteLLM $("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("litellm"))' 2>/dev/null), proxy with \`--num_workers 1\`, no master key, no database" ;;
  esac
  echo "- Upstreams: $CHUNKS deltas per stream, no pause between events (paced: one every $PACE_MS ms); window ${SECS} s after ${WARMUP} s of warm-up, per run"
  if [ -n "$NGINX" ]; then
    echo "- nginx $("$NGINX" -v 2>&1 | sed 's/^nginx version: nginx\///'), one worker, proxy_buffering off, kept-alive upstream connections"
  fi
  echo
  "$EX/bench_load" report "$RAW"
} >"$WORK/report.md"
cat "$WORK/report.md"
if [ -n "$OUT" ]; then cp "$WORK/report.md" "$OUT"; say "written to $OUT"; fi
