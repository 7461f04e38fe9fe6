#!/usr/bin/env bash
# Speed and memory of `qore serve` against the same upstream reached directly and through
# LiteLLM's proxy, in one run. Run by hand (minutes; not part of CI):
#
#   scripts/bench-serve.sh [--out FILE]      Markdown tables on stdout (and into FILE)
#
# What runs, all on 127.0.0.1:
# - upstream: `bench_upstream` (crates/qore-serve/examples), a fixed Chat Completions answer:
#   20 content deltas as `chat.completion.chunk` events then `data: [DONE]`, or one short
#   JSON answer;
# - qore: `target/release/qore serve` with one provider, providers/bench.toml, pointing at
#   the upstream (config and store in a temporary directory, no keys);
# - LiteLLM: its proxy (pip `litellm` and the proxy's modules, pinned, in
#   $CACHE/litellm-venv), one worker, `bench/fixed` = `openai/fixed` at the upstream;
# - load: `bench_load run` against each target in turn, scenario by scenario (direct, qore,
#   litellm for one scenario, then the next), and `bench_load report` for the tables.
#
# Scenarios: streams at concurrency 1, 100 and 1000; short non-streaming requests at
# concurrency 1 and 50. Each: warm-up, then a window of BENCH_SECONDS.
#
# Pinning (BENCH_PIN=1, the default, with taskset and 2+ cores): the gateway under test
# (qore or LiteLLM) on CPU 1; the upstream and the load generator on CPU 0. Each gateway
# then has one core of its own and the client+upstream pair the other: a gateway's ratio
# to direct says whether one core of it keeps up with that pair. BENCH_PIN=0: no pinning.
#
# Environment: BENCH_SECONDS (5), BENCH_WARMUP (1), BENCH_GRACE (10), BENCH_PIN (1),
# BENCH_TARGETS ("direct qore litellm"), BENCH_SCENARIOS ("stream:1 stream:100
# stream:1000 short:1 short:50"), BENCH_RAW (keep the JSON lines there), QORE_CACHE_DIR
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
PIN="${BENCH_PIN:-1}"
TARGETS="${BENCH_TARGETS:-direct qore litellm}"
SCENARIOS="${BENCH_SCENARIOS:-stream:1 stream:100 stream:1000 short:1 short:50}"
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

# --- upstream
"${LOAD[@]}" "$EX/bench_upstream" --listen 127.0.0.1:0 --chunks "$CHUNKS" --max-seconds 7200 \
  >"$WORK/upstream.out" 2>"$WORK/upstream.err" &
UP_PID=$!
STARTED+=("$UP_PID")
UP_URL="$(first_line "$WORK/upstream.out" "$UP_PID" 10)" || die "the upstream did not start"
say "upstream at $UP_URL"

# --- qore serve
QORE_URL="" QORE_PID=""
case " $TARGETS " in *" qore "*)
  mkdir -p "$WORK/qore/config/providers" "$WORK/qore/data"
  printf 'name = "bench"\nprotocol = "openai-chat"\nurl = "%s"\n' "$UP_URL" \
    >"$WORK/qore/config/providers/bench.toml"
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

RAW="${BENCH_RAW:-$WORK/raw.jsonl}"
: >"$RAW"
for sc in $SCENARIOS; do
  mode="${sc%%:*}" conc="${sc#*:}"
  for t in $TARGETS; do
    args=(--target "$t" --mode "$mode" --concurrency "$conc" --seconds "$SECS"
          --warmup "$WARMUP" --grace "$GRACE" --timeout 120 --max-requests 10000000)
    [ "$mode" = stream ] && args+=(--expect-deltas "$CHUNKS")
    case "$t" in
      direct) args+=(--url "$UP_URL" --model fixed) ;;
      qore) args+=(--url "$QORE_URL" --model bench/fixed --watch-pids "$(tree_pids "$QORE_PID")") ;;
      litellm) args+=(--url "$LL_URL" --model bench/fixed --watch-pids "$(tree_pids "$LL_PID")") ;;
      *) die "unknown target $t" ;;
    esac
    say "$mode x$conc -> $t"
    # In the background and waited for, so a signal reaches the trap at once.
    "${LOAD[@]}" "$EX/bench_load" run "${args[@]}" >>"$RAW" &
    LOAD_PID=$!
    wait "$LOAD_PID" || die "bench_load failed"
    LOAD_PID=""
    sleep 1
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
  echo "- Upstream: $CHUNKS deltas per stream, no pause between events; window ${SECS} s after ${WARMUP} s of warm-up, per scenario and target"
  echo
  "$EX/bench_load" report "$RAW"
} >"$WORK/report.md"
cat "$WORK/report.md"
if [ -n "$OUT" ]; then cp "$WORK/report.md" "$OUT"; say "written to $OUT"; fi
