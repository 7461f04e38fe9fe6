#!/usr/bin/env bash
# Coding agents for qore serve's tests (tests/serve/test_codex.py, test_aider.py): OpenAI's
# Codex CLI from npm in $CACHE/codex (the platform package's native binary) and aider
# (PyPI aider-chat) in its own venv $CACHE/aider-venv, all pinned.
#
#   agents-env.sh install   both (idempotent; each redone if its pins change)
#   agents-env.sh codex     install codex if needed, print its native binary (only thing on stdout)
#   agents-env.sh aider     install aider if needed, print its `aider` script (only thing on stdout)
#
# Environment: QORE_CACHE_DIR (default ${XDG_CACHE_HOME:-$HOME/.cache}/qore), QORE_PYTHON
# (default python3). Files in $CACHE: codex/, aider-venv/, agents-env.lock.
# Cold, on 2 cores: codex ~20 s (npm, ~420 MB), aider ~90 s (pip, ~690 MB).
set -euo pipefail

CODEX_VERSION=0.171.0
CODEX_PINS="@openai/codex@$CODEX_VERSION"
AIDER_VERSION=0.86.2
# Every package pinned, dependencies included (pip freeze of one install of aider-chat), so
# a run here is a run anywhere; installed with --no-deps.
AIDER_PINS="aider-chat==$AIDER_VERSION
aiohappyeyeballs==2.6.1 aiohttp==3.13.3 aiosignal==1.4.0 annotated-doc==0.0.4
annotated-types==0.7.0 anyio==4.12.1 asgiref==3.11.1 attrs==25.4.0 backoff==2.2.1
beautifulsoup4==4.14.3 certifi==2026.1.4 cffi==2.0.0 charset-normalizer==3.4.4 click==8.3.1
ConfigArgParse==1.7.1 diff-match-patch==20241021 diskcache==5.6.3 distro==1.9.0
fastapi==0.128.8 fastuuid==0.14.0 filelock==3.20.3 flake8==7.3.0 frozenlist==1.8.0
fsspec==2026.2.0 gitdb==4.0.12 GitPython==3.1.46 grep-ast==0.9.0 h11==0.16.0 hf-xet==1.2.0
httpcore==1.0.9 httpx==0.28.1 huggingface_hub==1.4.1 idna==3.11 importlib_metadata==7.2.1
importlib_resources==6.5.2 Jinja2==3.1.6 jiter==0.13.0 json5==0.13.0 jsonschema==4.26.0
jsonschema-specifications==2025.9.1 litellm==1.81.10 markdown-it-py==4.0.0 MarkupSafe==3.0.3
mccabe==0.7.0 mdurl==0.1.2 mixpanel==5.0.0 mslex==1.3.0 multidict==6.7.1 networkx==3.4.2
numpy==1.26.4 openai==2.20.0 orjson==3.11.7 oslex==0.1.3 packaging==26.0 pathspec==1.0.4
pexpect==4.9.0 pillow==12.1.1 posthog==7.8.6 prompt_toolkit==3.0.52 propcache==0.4.1
psutil==7.2.2 ptyprocess==0.7.0 pycodestyle==2.14.0 pycparser==3.0 pydantic==2.12.5
pydantic_core==2.41.5 pydub==0.25.1 pyflakes==3.4.0 Pygments==2.19.2 pypandoc==1.16.2
pyperclip==1.11.0 python-dateutil==2.9.0.post0 python-dotenv==1.2.1 PyYAML==6.0.3
referencing==0.37.0 regex==2026.1.15 requests==2.32.5 rich==14.3.2 rpds-py==0.30.0
scipy==1.15.3 shellingham==1.5.4 shtab==1.8.0 six==1.17.0 smmap==5.0.2 sniffio==1.3.1
socksio==1.0.0 sounddevice==0.5.5 soundfile==0.13.1 soupsieve==2.8.3 starlette==0.52.1
tiktoken==0.12.0 tokenizers==0.22.2 tqdm==4.67.3 tree-sitter==0.25.2
tree-sitter-c-sharp==0.23.1 tree-sitter-embedded-template==0.25.0
tree-sitter-language-pack==0.13.0 tree-sitter-yaml==0.7.2 typer==0.23.0 typer-slim==0.23.0
typing-inspection==0.4.2 typing_extensions==4.15.0 urllib3==2.6.3 watchfiles==1.1.1
wcwidth==0.6.0 yarl==1.22.0 zipp==3.23.0"
AIDER_PINS="$(echo $AIDER_PINS)"  # one line, for the stamp

CACHE="${QORE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/qore}"
NPM_DIR="$CACHE/codex"
CODEX_STAMP="$NPM_DIR/.qore-pins"
VENV="$CACHE/aider-venv"
STAMP="$VENV/.qore-pins"
PINS="$AIDER_PINS"  # what server-lib.sh's `installed` compares $STAMP with
LOCK="$CACHE/agents-env.lock"
PYTHON="${QORE_PYTHON:-python3}"
NAME=agents-env
LOCK_WAIT=900
# say, die, take_lock (the lock on $LOCK) and installed (venv + $STAMP = $PINS), shared with
# the model server scripts.
# shellcheck source=server-lib.sh
. "$(dirname "$0")/server-lib.sh"

codex_path() {  # the native binary of the platform package (npm's optional dependency
                # @openai/codex-<os>-<arch>); bin/codex.js only finds and runs it
  local c
  for c in "$NPM_DIR"/node_modules/@openai/codex-*/vendor/*/bin/codex \
           "$NPM_DIR"/node_modules/@openai/codex/vendor/*/bin/codex; do  # older layout
    if [ -f "$c" ] && "$c" --version 2>/dev/null | grep -qF "$CODEX_VERSION"; then
      echo "$c"
      return 0
    fi
  done
  return 1
}

codex_installed() {
  [ "$(cat "$CODEX_STAMP" 2>/dev/null)" = "$CODEX_PINS" ] && codex_path >/dev/null
}

aider_path() { echo "$VENV/bin/aider"; }

aider_installed() { installed && [ -x "$(aider_path)" ]; }  # the stamp: it ran once

install_codex() {  # under the lock
  codex_installed && return 0
  command -v npm >/dev/null 2>&1 || die "npm not found (install Node.js 18 or newer)"
  say "installing $CODEX_PINS into $NPM_DIR"
  local start=$SECONDS
  rm -rf "$NPM_DIR"
  mkdir -p "$NPM_DIR"
  npm install --prefix "$NPM_DIR" --no-audit --no-fund --silent "$CODEX_PINS" >&2
  local codex
  codex="$(codex_path)" \
    || die "npm installed $CODEX_PINS, but no codex binary in $NPM_DIR runs (no package for $(uname -sm)?)"
  printf '%s\n' "$CODEX_PINS" >"$CODEX_STAMP"   # written last: a partial install is redone
  say "codex: $codex ($((SECONDS - start)) s)"
}

install_aider() {  # under the lock
  aider_installed && return 0
  say "installing aider-chat==$AIDER_VERSION and its pinned dependencies into $VENV"
  local start=$SECONDS
  rm -rf "$VENV"
  "$PYTHON" -m venv "$VENV" >&2 || die "'$PYTHON -m venv' failed (Debian: apt-get install python3-venv)"
  # shellcheck disable=SC2086
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-input --no-deps \
    $AIDER_PINS >&2
  "$(aider_path)" --version 2>/dev/null | grep -qF "$AIDER_VERSION" \
    || die "aider-chat installed, but '$(aider_path) --version' does not say $AIDER_VERSION"
  printf '%s\n' "$PINS" >"$STAMP"   # written last: a partial install is redone
  say "aider: $(aider_path) ($((SECONDS - start)) s)"
}

cmd_codex() {
  codex_installed && return 0
  take_lock
  install_codex
}

cmd_aider() {
  aider_installed && return 0
  take_lock
  install_aider
}

case "${1:-}" in
  install) cmd_codex; cmd_aider ;;
  codex) cmd_codex; codex_path ;;
  aider) cmd_aider; aider_path ;;
  *) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0" >&2; exit 2 ;;
esac
