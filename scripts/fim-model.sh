#!/usr/bin/env bash
# A local model with fill-in-the-middle tokens, for qore's real /infill tests: the SmolLM2
# GGUF that scripts/local-model.sh installs, copied with FIM token ids written into its
# metadata (gguf-new-metadata from the `gguf` package), served by the same launcher
# (llama_server.py --model) on its own port. SmolLM2's vocabulary has no `<fim_prefix>`,
# `<fim_suffix>`, `<fim_middle>` tokens (checked: its special tokens are StarCoder's minus
# those), so the FIM ids are three special tokens it has and chat never uses
# (`<jupyter_start>`, `<jupyter_text>`, `<jupyter_code>`), plus `<file_sep>` and
# `<repo_name>` as the file and repository separators of `input_extra`; the ids are read by
# name from the GGUF's tokenizer. The model was not trained for FIM: the text it infills is
# nonsense, but llama.cpp's /infill (streaming, input_extra) is the real one.
#
#   fim-model.sh install   local-model.sh install, then a venv with the pinned `gguf`
#                          package and the patched GGUF in $CACHE/fim/ (idempotent)
#   fim-model.sh start     install if needed, start detached, wait until healthy
#   fim-model.sh stop      stop the server started by `start` (idempotent)
#   fim-model.sh status    exit 0 if the server answers /health with 200
#   fim-model.sh url       print the OpenAI base URL (only thing on stdout)
#
# Environment: QORE_CACHE_DIR (default ${XDG_CACHE_HOME:-$HOME/.cache}/qore),
# QORE_FIM_PORT (default 18082), QORE_PYTHON (default python3),
# QORE_FIM_START_TIMEOUT (120). Files in $CACHE: fim-venv/ (with the GGUF in
# fim-venv/smollm2-fim.gguf), fim-model.lock, fim-server.log, fim-server.pid (the last two
# are fim-server-PORT.log/.pid for a port other than 18082).
set -euo pipefail

GGUF_VERSION=0.19.0

CACHE="${QORE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/qore}"
HERE="$(cd "$(dirname "$0")" && pwd)"
HOST=127.0.0.1
PORT="${QORE_FIM_PORT:-18082}"
VENV="$CACHE/fim-venv"
STAMP="$VENV/.qore-pins"
MODEL="$VENV/smollm2-fim.gguf"
LOCK="$CACHE/fim-model.lock"
SUFFIX="$([ "$PORT" = 18082 ] || echo "-$PORT")"  # other ports get their own files
LOG="$CACHE/fim-server$SUFFIX.log"
PIDFILE="$CACHE/fim-server$SUFFIX.pid"
PYTHON="${QORE_PYTHON:-python3}"
TIMEOUT="${QORE_FIM_START_TIMEOUT:-120}"
PINS="gguf==$GGUF_VERSION fim_pre fim_suf fim_mid fim_sep fim_rep"

NAME=fim-model
LOCK_WAIT=600
HEALTH_PATH=/health            # 503 while the model is loading
CMDLINE_MARK="llama_server.py --host $HOST --port $PORT "
# shellcheck source=server-lib.sh
. "$HERE/server-lib.sh"

# Prints `--special-token-by-id KIND ID` for each FIM kind (see the top of this file);
# fails when the GGUF's vocabulary lacks one of the tokens.
FIM_IDS_PY='
import sys
from gguf import GGUFReader
reader = GGUFReader(sys.argv[1])
field = reader.fields["tokenizer.ggml.tokens"]
tokens = [bytes(field.parts[i]).decode("utf-8") for i in field.data]
kinds = {"fim_pre": "<jupyter_start>", "fim_suf": "<jupyter_text>",
         "fim_mid": "<jupyter_code>", "fim_sep": "<file_sep>", "fim_rep": "<repo_name>"}
missing = [t for t in kinds.values() if t not in tokens]
if missing:
    sys.exit("fim-model: the GGUF has no " + ", ".join(missing) + " token")
for kind, text in kinds.items():
    print("--special-token-by-id", kind, tokens.index(text))
'

install_locked() {
  installed && [ -f "$MODEL" ] && return 0
  local source
  source="$(smollm2_gguf)"
  say "installing gguf==$GGUF_VERSION into $VENV and writing $MODEL"
  rm -rf "$VENV"
  "$PYTHON" -m venv "$VENV" >&2 || die "'$PYTHON -m venv' failed (Debian: apt-get install python3-venv)"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-input \
    "gguf==$GGUF_VERSION" >&2 || die "installing gguf==$GGUF_VERSION failed"
  local args
  args="$("$VENV/bin/python" -c "$FIM_IDS_PY" "$source")" || die "cannot read the FIM token ids"
  say "FIM tokens: $(echo $args | sed 's/--special-token-by-id //g')"
  # shellcheck disable=SC2086  # args is a list of words
  "$VENV/bin/gguf-new-metadata" $args --force "$source" "$MODEL.tmp" >&2 \
    || die "gguf-new-metadata failed"
  mv "$MODEL.tmp" "$MODEL"
  printf '%s\n' "$PINS" >"$STAMP"   # written last: a partial install is redone
  say "installed"
}

run_server() {
  exec setsid nohup "$CACHE/venv/bin/python" "$HERE/llama_server.py" --host "$HOST" \
    --port "$PORT" --model "$MODEL"
}

cmd_install() {
  installed && [ -f "$MODEL" ] && return 0
  take_lock
  install_locked
}

cmd_start() {
  take_lock
  install_locked
  start_server
}

dispatch "$@"
