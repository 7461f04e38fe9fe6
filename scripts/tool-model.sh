#!/usr/bin/env bash
# A local model that calls tools, for qore's tool-loop tests: SmolLM2-135M-Instruct (the
# GGUF that scripts/local-model.sh installs) served by llama-cpp-python's OpenAI-compatible
# server with `--chat_format chatml-function-calling` on loopback, under /v1.
#
#   tool-model.sh install   local-model.sh install (for the GGUF), then a venv with the
#                           pinned llama-cpp-python[server], built from source (idempotent)
#   tool-model.sh start     install if needed, start detached, wait until it answers
#   tool-model.sh stop      stop the server started by `start` (idempotent)
#   tool-model.sh status    exit 0 if the server answers GET /v1/models with 200
#   tool-model.sh url       print the OpenAI base URL (only thing on stdout)
#
# With a tool and tool_choice "auto" this server always answers with a tool call when not
# streaming; streamed, it answers 200 with an empty body. An assistant message with tool
# calls must carry `content` as a string (null or an absent `content` get a 500).
# Without `tool_choice` in the request it offers the model no tools at all.
#
# Environment: QORE_CACHE_DIR (default ${XDG_CACHE_HOME:-$HOME/.cache}/qore),
# QORE_TOOL_PORT (default 18081), QORE_PYTHON (default python3),
# QORE_TOOL_START_TIMEOUT (120), QORE_BUILD_JOBS (default: the number of cores).
# Files in $CACHE: tool-venv/, tool-model.lock, tool-server.log, tool-server.pid (the
# last two are tool-server-PORT.log/.pid for a port other than 18081). The cold install
# takes about 6 minutes on two idle cores (llama.cpp's CPU backend only: no multimodal
# library, no OpenMP, no tests or tools; its `common` library cannot be left out, the
# install step wants it); afterwards `install` returns at once.
set -euo pipefail

LLAMA_CPP_PYTHON_VERSION=0.3.36

CACHE="${QORE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/qore}"
HERE="$(cd "$(dirname "$0")" && pwd)"
HOST=127.0.0.1
PORT="${QORE_TOOL_PORT:-18081}"
VENV="$CACHE/tool-venv"
STAMP="$VENV/.qore-pins"
LOCK="$CACHE/tool-model.lock"
SUFFIX="$([ "$PORT" = 18081 ] || echo "-$PORT")"  # other ports get their own files
LOG="$CACHE/tool-server$SUFFIX.log"
PIDFILE="$CACHE/tool-server$SUFFIX.pid"
PYTHON="${QORE_PYTHON:-python3}"
TIMEOUT="${QORE_TOOL_START_TIMEOUT:-120}"
JOBS="${QORE_BUILD_JOBS:-$(nproc 2>/dev/null || echo 2)}"

# llama.cpp's CPU backend only. x86-64 machines with AVX2 get it explicitly rather than
# -march=native, so a cached venv keeps working on any such CPU.
CMAKE_FLAGS="-DLLAVA_BUILD=OFF -DGGML_OPENMP=OFF -DLLAMA_BUILD_TESTS=OFF"
CMAKE_FLAGS+=" -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF"
if [ "$(uname -m)" = x86_64 ]; then
  if grep -qw avx2 /proc/cpuinfo 2>/dev/null && grep -qw fma /proc/cpuinfo 2>/dev/null; then
    CMAKE_FLAGS+=" -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
  else
    CMAKE_FLAGS+=" -DGGML_NATIVE=OFF"
  fi
fi
PINS="llama-cpp-python[server]==$LLAMA_CPP_PYTHON_VERSION $CMAKE_FLAGS"

NAME=tool-model
LOCK_WAIT=1200
HEALTH_PATH=/v1/models
CMDLINE_MARK="llama_cpp.server --host $HOST --port $PORT "
# shellcheck source=server-lib.sh
. "$HERE/server-lib.sh"

install_locked() {
  installed && return 0
  command -v cc >/dev/null 2>&1 && command -v c++ >/dev/null 2>&1 \
    || die "a C/C++ compiler is needed to build llama-cpp-python (Debian: apt-get install build-essential)"
  say "building llama-cpp-python[server]==$LLAMA_CPP_PYTHON_VERSION into $VENV ($JOBS jobs; about 6 minutes on 2 idle cores)"
  local start=$SECONDS
  rm -rf "$VENV"
  "$PYTHON" -m venv "$VENV" >&2 || die "'$PYTHON -m venv' failed (Debian: apt-get install python3-venv)"
  # pip brings cmake and ninja as build dependencies when the machine has none.
  CMAKE_ARGS="$CMAKE_FLAGS" CMAKE_BUILD_PARALLEL_LEVEL="$JOBS" FORCE_CMAKE=1 \
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-input \
      --no-cache-dir "llama-cpp-python[server]==$LLAMA_CPP_PYTHON_VERSION" >&2 \
    || die "building llama-cpp-python failed (see the pip output above)"
  printf '%s\n' "$PINS" >"$STAMP"   # written last: a partial install is redone
  say "installed in $((SECONDS - start))s"
}

cmd_install() {
  smollm2_gguf >/dev/null
  installed && return 0
  take_lock
  install_locked
}

run_server() {
  exec setsid nohup "$VENV/bin/python" -m llama_cpp.server --host "$HOST" --port "$PORT" \
    --model "$MODEL" --model_alias smollm2-135m-instruct \
    --chat_format chatml-function-calling --n_threads 1 --n_threads_batch 1 \
    --n_ctx 4096 --verbose false
}

cmd_start() {
  MODEL="$(smollm2_gguf)"
  take_lock
  install_locked
  start_server
}

dispatch "$@"
