#!/usr/bin/env bash
# What the console's browser tests (tests/console) need: Debian's `chromium` (never a
# browser download) and, in $CACHE/console-venv, Python Playwright pinned to the release
# whose bundled driver expects the same Chromium major (1.60.0 bundles Chromium 148, the
# major of Debian bookworm-security here; its browsers.json says so), and
# pytest.
#
#   console-env.sh install   apt-get install chromium, make the venv (idempotent)
#   console-env.sh python    install if needed, print the venv's python (only thing on stdout)
#   console-env.sh check     exit 0 when both are there (a chromium of another major than
#                            $CHROMIUM_MAJOR is a warning on install)
#
# Used by .ci/run.
set -euo pipefail

NAME=console-env
CHROMIUM_MAJOR=148
PY_PINS="playwright==1.60.0 pytest==9.2.0"
CACHE="${QORE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/qore}"
VENV="$CACHE/console-venv"
STAMP="$VENV/.qore-pins"
PYTHON="${QORE_PYTHON:-python3}"
say() { echo "$NAME: $*" >&2; }
die() { say "$*"; exit 1; }
# shellcheck source=apt-lib.sh
. "$(dirname "$0")/apt-lib.sh"

chromium_major() { chromium --version 2>/dev/null | sed -n 's/^Chromium \([0-9]*\)\..*/\1/p'; }

cmd_install() {
  command -v chromium >/dev/null 2>&1 || apt_install chromium
  local major
  major="$(chromium_major)"
  # Debian's security updates move chromium's major every few weeks; Playwright drives a
  # newer Chromium over CDP as a rule, so a drift is said, not fatal (a failing browser
  # test then names the cause).
  [ "$major" = "$CHROMIUM_MAJOR" ] ||
    say "warning: chromium is major '$major', Playwright ${PY_PINS%% *} was made for $CHROMIUM_MAJOR: if the browser tests fail, move the pin"
  if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$STAMP" 2>/dev/null)" != "$PY_PINS" ]; then
    mkdir -p "$CACHE"
    "$PYTHON" -m venv "$VENV" >&2
    # shellcheck disable=SC2086
    "$VENV/bin/pip" install --quiet $PY_PINS >&2
    echo "$PY_PINS" > "$STAMP"
  fi
}

case "${1:-}" in
  install) cmd_install ;;
  python) cmd_install; echo "$VENV/bin/python" ;;
  check) command -v chromium >/dev/null 2>&1 && [ -x "$VENV/bin/python" ] || die "not installed" ;;
  *) die "usage: console-env.sh install|python|check" ;;
esac
