"""Claude Code (`claude -p`, the npm package's native binary) with qore serve as its
Anthropic API: a task that needs one of its own tools, answered by the scripted Chat
Completions upstream; and the local model, whose context Claude Code's system prompt
overflows, which must come back as the Messages API's context-length error, not a hang.

Claude Code runs with a temp HOME, telemetry, autoupdate and nonessential traffic off, and
only qore's URL and key: nothing leaves the loopback."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess

import pytest

from upstream import Reply, text, tool_call

REPO = pathlib.Path(__file__).resolve().parents[2]
SECRET = "periwinkle-42"
CLAUDE_TIMEOUT = 120


def claude_bin() -> str:
    """CLAUDE_BIN (set by crates/qore-cli/tests/serve_clients.rs), else serve-env.sh's."""
    path = os.environ.get("CLAUDE_BIN")
    if not path:
        done = subprocess.run(
            ["bash", str(REPO / "scripts" / "serve-env.sh"), "claude"],
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, f"scripts/serve-env.sh claude failed:\n{done.stderr}"
        path = done.stdout.strip()
    if not pathlib.Path(path).is_file():
        pytest.fail(f"Claude Code not found at {path!r}")
    return path


def run_claude(qore, tmp_path: pathlib.Path, model: str, prompt: str) -> tuple[int, dict, str]:
    """`claude -p PROMPT --output-format json --model MODEL` in tmp_path/project against
    qore: (exit code, the JSON result, stderr)."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "TMPDIR": str(tmp_path),
        "LANG": "C.UTF-8",
        "ANTHROPIC_BASE_URL": qore.url,
        "ANTHROPIC_API_KEY": qore.keys["claude-code"],
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "NO_PROXY": "127.0.0.1,localhost",
    }
    try:
        done = subprocess.run(
            [claude_bin(), "-p", prompt, "--output-format", "json", "--model", model],
            cwd=project,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=CLAUDE_TIMEOUT,
        )
    except subprocess.TimeoutExpired as err:
        raise AssertionError(
            f"claude -p did not finish within {CLAUDE_TIMEOUT} s (a hang):\n"
            f"stdout: {err.stdout!r}\nstderr: {err.stderr!r}"
        ) from None
    try:
        result = json.loads(done.stdout)
    except ValueError:
        raise AssertionError(
            f"claude -p printed no JSON result (exit {done.returncode}):\n"
            f"stdout: {done.stdout}\nstderr: {done.stderr}"
        ) from None
    return done.returncode, result, done.stderr


def tool_names(body: dict) -> list[str]:
    return [t.get("function", {}).get("name") for t in body.get("tools") or []]


def test_claude_code_uses_its_read_tool_through_qore(qore, upstream, tmp_path):
    secret_file = tmp_path / "project" / "x.txt"
    secret_file.parent.mkdir(parents=True)
    secret_file.write_text(f"The secret word is {SECRET}.\n")

    def answer(body: dict) -> Reply:
        """Read the file first; answer once the tool result is in. Requests without the
        Read tool (Claude Code's side requests, if any) get a plain answer."""
        if any(m.get("role") == "tool" for m in body.get("messages", [])):
            return text(f"The secret word is {SECRET}.")
        if "Read" in tool_names(body):
            return tool_call("Read", {"file_path": str(secret_file)}, call_id="call_read_1")
        return text("ok")

    upstream.standing = answer
    code, result, stderr = run_claude(
        qore, tmp_path, "scripted/claude-test", "Read the file x.txt and tell me its secret word."
    )
    assert code == 0 and not result.get("is_error"), (result, stderr)
    assert SECRET in result["result"], result

    with_tools = [s for s in upstream.chats() if "Read" in tool_names(s.body)]
    assert with_tools, [s.body for s in upstream.chats()]
    results = [
        m
        for s in with_tools
        for m in s.body["messages"]
        if m.get("role") == "tool" and m.get("tool_call_id") == "call_read_1"
    ]
    assert results, "no upstream request carried the Read result for call_read_1"
    content = results[0]["content"]
    if isinstance(content, list):
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    assert SECRET in content, results[0]


def test_claude_code_on_the_local_model_gets_prompt_too_long(qore, tmp_path):
    """Claude Code's system prompt and tools (~12k tokens) overflow SmolLM2's 4096-token
    context: the answer is the Messages API's 400 `prompt is too long`, which Claude Code
    recognises, within the timeout."""
    code, result, stderr = run_claude(qore, tmp_path, "local/default", "Say hello.")
    assert code != 0 and result.get("is_error"), (result, stderr)
    assert result.get("api_error_status") == 400, result
    assert "prompt is too long" in result.get("result", "").lower(), result
