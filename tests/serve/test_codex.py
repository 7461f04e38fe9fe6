"""OpenAI's Codex CLI (`codex exec`, the npm package's native binary, from
scripts/agents-env.sh) with qore serve as a Responses API provider: a task that needs
codex's own shell tool, answered by the scripted Chat Completions upstream, so the tool
call and its output cross qore's Responses <-> Chat translation both ways; and a wrong key,
which must come back as qore's 401, not a hang.

Codex runs with a temp HOME and CODEX_HOME holding only the config below (no update check,
no analytics, no feedback, no retries) and a proxy on a dead loopback port for anything but
127.0.0.1: nothing leaves the loopback.

Codex's own sandbox is off (`sandbox_mode = "danger-full-access"`): what is tested is qore's
translation, and the only command is the test's own `cat` in a temp directory. With it on,
the run depended on the machine: with Debian's bubblewrap (0.8, no `--argv0`) installed,
codex prefers the system `bwrap` and re-enters itself as `codex-linux-sandbox` by name,
which is not on PATH when the vendored binary is started directly ("bwrap: execvp
codex-linux-sandbox: No such file or directory"); without it, codex uses its bundled bwrap,
which needs user namespaces. Checked both ways, with and without bubblewrap installed."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess

import pytest

from upstream import Reply, text, tool_call

REPO = pathlib.Path(__file__).resolve().parents[2]
SECRET = "periwinkle-42"
MODEL = "scripted/gpt-test"
CODEX_TIMEOUT = 120
INSTALL_TIMEOUT = 900
# codex's shell tools over the versions: `exec_command` (unified exec, {"cmd": "..."}),
# `shell_command` ({"command": "..."}) and `shell` ({"command": ["argv", ...]}).
SHELL_TOOLS = ("exec_command", "shell_command", "shell")


@pytest.fixture(scope="session")
def codex_bin() -> str:
    """CODEX_BIN, else scripts/agents-env.sh's (installed if needed). Skips, saying why,
    only when agents-env.sh could not install codex; anything else fails."""
    path = os.environ.get("CODEX_BIN")
    if not path:
        try:
            done = subprocess.run(
                ["bash", str(REPO / "scripts" / "agents-env.sh"), "codex"],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=INSTALL_TIMEOUT,
            )
        except subprocess.TimeoutExpired:
            pytest.fail(f"scripts/agents-env.sh codex did not finish within {INSTALL_TIMEOUT} s")
        if done.returncode != 0:
            reason = f"scripts/agents-env.sh could not install codex:\n{done.stderr.strip()}"
            print(reason)
            pytest.skip(reason)
        path = done.stdout.strip()
    if not pathlib.Path(path).is_file():
        pytest.fail(f"codex not found at {path!r}")
    return path


def codex_config(base_url: str) -> str:
    return f"""\
model = "{MODEL}"
model_provider = "qore"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[analytics]
enabled = false

[feedback]
enabled = false

[model_providers.qore]
name = "qore"
base_url = "{base_url}/v1"
env_key = "QORE_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
stream_idle_timeout_ms = 60000
"""


def run_codex(
    codex: str, qore, tmp_path: pathlib.Path, key: str, prompt: str
) -> subprocess.CompletedProcess:
    """`codex exec --skip-git-repo-check PROMPT` in tmp_path/work against qore."""
    home = tmp_path / "home"
    codex_home = tmp_path / "codex-home"
    work = tmp_path / "work"
    for d in (home, codex_home, work):
        d.mkdir(exist_ok=True)
    (codex_home / "config.toml").write_text(codex_config(qore.url))
    dead = "http://127.0.0.1:9"  # any request not to the loopback fails at once
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "CODEX_HOME": str(codex_home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "TMPDIR": str(tmp_path),
        "LANG": "C.UTF-8",
        "QORE_KEY": key,
        "HTTPS_PROXY": dead,
        "HTTP_PROXY": dead,
        "ALL_PROXY": dead,
        "NO_PROXY": "127.0.0.1,localhost",
    }
    try:
        return subprocess.run(
            [codex, "exec", "--skip-git-repo-check", "--strict-config", "--ephemeral",
             "--color", "never", prompt],
            cwd=work,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=CODEX_TIMEOUT,
        )
    except subprocess.TimeoutExpired as err:
        raise AssertionError(
            f"codex exec did not finish within {CODEX_TIMEOUT} s (a hang):\n"
            f"stdout: {err.stdout!r}\nstderr: {err.stderr!r}"
        ) from None


def tools(body: dict) -> dict[str, dict]:
    """The request's function tools: name -> JSON schema of the parameters."""
    out = {}
    for t in body.get("tools") or []:
        fn = t.get("function") or {}
        if fn.get("name"):
            out[fn["name"]] = fn.get("parameters") or {}
    return out


def shell_call(body: dict, command: str, call_id: str) -> Reply | None:
    """A call of the request's shell tool running `command`, in the arguments its schema
    asks for; None without one."""
    offered = tools(body)
    for name in SHELL_TOOLS:
        if name not in offered:
            continue
        props = offered[name].get("properties") or {}
        if "cmd" in props:
            args = {"cmd": command}
        elif (props.get("command") or {}).get("type") == "array":
            args = {"command": ["bash", "-lc", command]}
        else:
            args = {"command": command}
        return tool_call(name, args, call_id=call_id)
    return None


def content_text(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content or ""


def test_codex_runs_its_shell_tool_through_qore(qore, upstream, codex_bin, tmp_path):
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "secret.txt").write_text(f"The secret word is {SECRET}.\n")
    unanswered: list[str] = []

    def answer(body: dict) -> Reply:
        """Run `cat secret.txt` first; answer once the tool's output is in."""
        if any(m.get("role") == "tool" for m in body.get("messages", [])):
            return text(f"The secret word is {SECRET}.")
        call = shell_call(body, "cat secret.txt", "call_cat_1")
        if call is None:
            unanswered.append(", ".join(tools(body)) or "(no tools)")
            return text("no shell tool offered")
        return call

    upstream.standing = answer
    done = run_codex(
        codex_bin, qore, tmp_path, qore.keys["main"],
        "Run `cat secret.txt` and tell me the secret word.",
    )
    assert not unanswered, f"codex offered none of {SHELL_TOOLS}; its tools: {unanswered}"
    assert done.returncode == 0, f"codex exec failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    assert f"The secret word is {SECRET}." in done.stdout, (done.stdout, done.stderr)

    chats = upstream.chats()
    assert len(chats) >= 2, [s.body for s in chats]
    first = chats[0].body
    assert first.get("model") == "gpt-test", first.get("model")
    assert first.get("stream") is True, "codex streams; qore should stream from the upstream too"
    results = [
        m
        for s in chats[1:]
        for m in s.body.get("messages", [])
        if m.get("role") == "tool" and m.get("tool_call_id") == "call_cat_1"
    ]
    assert results, "no upstream request carried the tool's output for call_cat_1:\n" + json.dumps(
        chats[1].body.get("messages", [])[-2:], indent=1
    )
    assert SECRET in content_text(results[0]), results[0]
    # The call itself comes back too, as the assistant turn before its output.
    calls = [
        c
        for m in chats[1].body.get("messages", [])
        if m.get("role") == "assistant"
        for c in m.get("tool_calls") or []
    ]
    assert [c["id"] for c in calls] == ["call_cat_1"], calls


def test_codex_with_a_wrong_key_gets_qores_401(qore, upstream, codex_bin, tmp_path):
    upstream.standing = text("should not be reached")
    done = run_codex(codex_bin, qore, tmp_path, "qore-not-a-key", "Say hello.")
    assert done.returncode != 0, (done.stdout, done.stderr)
    assert "401 Unauthorized" in done.stderr and "/v1/responses" in done.stderr, done.stderr
    assert upstream.chats() == [], "a request with a wrong key reached the upstream"
