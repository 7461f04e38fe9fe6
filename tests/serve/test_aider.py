"""aider (PyPI aider-chat, in its own venv from scripts/agents-env.sh) with qore serve as
its OpenAI-compatible API (`--model openai/scripted/gpt-test --openai-api-base <qore>/v1`):
the scripted Chat Completions upstream answers with an edit in aider's whole-file or
SEARCH/REPLACE (diff) format, and aider applies it to the file.

aider runs with a temp HOME, no git, no analytics, no update or release-notes check, no
lint, and a proxy on a dead loopback port for anything but 127.0.0.1 (aider's fetch of
litellm's model price list fails at once): nothing leaves the loopback."""

from __future__ import annotations

import os
import pathlib
import subprocess

import pytest

from upstream import text

REPO = pathlib.Path(__file__).resolve().parents[2]
AIDER_TIMEOUT = 180
INSTALL_TIMEOUT = 900
OLD = 'def greet():\n    return "hello"\n'
NEW = 'def greet():\n    return "hello from qore"\n'

# One reply per edit format: what a model following aider's prompt would write.
EDITS = {
    "whole": f"Here is the updated file:\n\nhello.py\n```python\n{NEW}```\n",
    "diff": (
        "hello.py\n```python\n<<<<<<< SEARCH\n"
        '    return "hello"\n'
        "=======\n"
        '    return "hello from qore"\n'
        ">>>>>>> REPLACE\n```\n"
    ),
}


@pytest.fixture(scope="session")
def aider_bin() -> str:
    """AIDER_BIN, else scripts/agents-env.sh's (installed if needed). Skips, saying why,
    only when agents-env.sh could not install aider; anything else fails."""
    path = os.environ.get("AIDER_BIN")
    if not path:
        try:
            done = subprocess.run(
                ["bash", str(REPO / "scripts" / "agents-env.sh"), "aider"],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=INSTALL_TIMEOUT,
            )
        except subprocess.TimeoutExpired:
            pytest.fail(f"scripts/agents-env.sh aider did not finish within {INSTALL_TIMEOUT} s")
        if done.returncode != 0:
            reason = f"scripts/agents-env.sh could not install aider:\n{done.stderr.strip()}"
            print(reason)
            pytest.skip(reason)
        path = done.stdout.strip()
    if not pathlib.Path(path).is_file():
        pytest.fail(f"aider not found at {path!r}")
    return path


@pytest.mark.parametrize("edit_format", sorted(EDITS))
def test_aider_applies_an_edit_through_qore(qore, upstream, aider_bin, tmp_path, edit_format):
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    target = work / "hello.py"
    target.write_text(OLD)
    upstream.standing = text(EDITS[edit_format])
    dead = "http://127.0.0.1:9"
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "TMPDIR": str(tmp_path),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "HTTPS_PROXY": dead,
        "HTTP_PROXY": dead,
        "ALL_PROXY": dead,
        "NO_PROXY": "127.0.0.1,localhost",
    }
    args = [
        aider_bin,
        "--model", "openai/scripted/gpt-test",
        "--openai-api-base", qore.url + "/v1",
        "--openai-api-key", qore.keys["main"],
        "--edit-format", edit_format,
        "--message", "Make greet() return 'hello from qore'.",
        "--yes-always", "--no-git", "--no-auto-lint", "--analytics-disable",
        "--no-check-update", "--no-show-release-notes", "--no-show-model-warnings",
        "--no-pretty",
        "hello.py",
    ]
    try:
        done = subprocess.run(
            args, cwd=work, env=env, stdin=subprocess.DEVNULL, capture_output=True,
            text=True, timeout=AIDER_TIMEOUT,
        )
    except subprocess.TimeoutExpired as err:
        raise AssertionError(
            f"aider did not finish within {AIDER_TIMEOUT} s (a hang):\n"
            f"stdout: {err.stdout!r}\nstderr: {err.stderr!r}"
        ) from None
    out = done.stdout + done.stderr
    assert done.returncode == 0, f"aider failed ({done.returncode}):\n{out}"
    assert target.read_text() == NEW, f"hello.py is now {target.read_text()!r}:\n{out}"
    assert "Applied edit to hello.py" in out, out

    chats = upstream.chats()
    assert len(chats) == 1, [s.body for s in chats]
    body = chats[0].body
    assert body.get("model") == "gpt-test", body.get("model")
    assert body.get("stream") is True, "aider streams by default; so should qore upstream"
    sent = "".join(
        m["content"] if isinstance(m.get("content"), str) else str(m.get("content"))
        for m in body["messages"]
    )
    assert 'return "hello"' in sent, "the file's content did not reach the upstream"
