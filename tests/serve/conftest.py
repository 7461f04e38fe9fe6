"""Fixtures of qore serve's client tests: the built `qore` binary serving on loopback, a
scripted upstream wired into it as the provider `scripted`, keys, and SDK clients.

Promises: one `qore serve --listen 127.0.0.1:0` for the session, with its own
QORE_CONFIG_DIR and QORE_DATA_DIR (temp dirs) and the keys of `KEYS` created before it
starts; its base URL is the first line of its stdout; it is stopped at the end (SIGTERM,
then kill after 10 s). The upstream's script and record are cleared before each test. A
failing test shows the last lines of the server's log.
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
import signal
import subprocess
import threading
import time
import urllib.request

import anthropic
import openai
import pytest

from upstream import Upstream

REPO = pathlib.Path(__file__).resolve().parents[2]
os.environ["NO_PROXY"] = os.environ["no_proxy"] = "127.0.0.1,localhost"

# Keys created before the server starts: name -> `qore serve keys create NAME` options.
KEYS = {
    "main": [],
    "other": [],
    "claude-only": ["--models", "claude-*"],
    "rpm-openai": ["--rpm", "1"],
    "rpm-anthropic": ["--rpm", "1"],
    "claude-code": [],
    "usage": [],
    "to-revoke": [],
}

# Agents served by name: the scripted provider with their own models. The second one is
# what a key limited to `claude-*` may use.
AGENT = "scripted-agent"
AGENT_MODEL = "gpt-agent"
CLAUDE_AGENT = "claude-scripted"
CLAUDE_AGENT_MODEL = "claude-test"

# Per request: send no Authorization header with an OpenAI SDK client.
NO_OPENAI_KEY = {"Authorization": openai.Omit()}

START_TIMEOUT = 30.0
STOP_TIMEOUT = 10.0


def qore_bin() -> str:
    """QORE_BIN (set by crates/qore-cli/tests/serve_clients.rs), else the debug build."""
    env = os.environ.get("QORE_BIN")
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR") or REPO / "target")
    path = pathlib.Path(env) if env else target / "debug" / "qore"
    if not path.is_file():
        pytest.fail(f"qore binary not found at {path} (set QORE_BIN or build qore-cli)")
    return str(path)


@dataclasses.dataclass
class Qore:
    url: str  # http://127.0.0.1:PORT
    keys: dict[str, str]
    config: pathlib.Path
    data: pathlib.Path
    log: pathlib.Path
    env: dict[str, str]
    process: subprocess.Popen

    def openai(self, key: str | None = "main", **kw) -> openai.OpenAI:
        """An OpenAI SDK client on qore with the named key (None: no key sent)."""
        kw.setdefault("timeout", 60.0)
        # The SDK insists on a key: with None, pass `extra_headers=NO_OPENAI_KEY` per request.
        api_key = self.keys[key] if key else "unused"
        return openai.OpenAI(base_url=self.url + "/v1", api_key=api_key, max_retries=0, **kw)

    def anthropic(self, key: str | None = "main", **kw) -> anthropic.Anthropic:
        kw.setdefault("timeout", 60.0)
        if key is None:  # no key at all: no Authorization header, no X-Api-Key
            kw["default_headers"] = {"Authorization": anthropic.Omit()}
        api_key = self.keys[key] if key else None
        return anthropic.Anthropic(base_url=self.url, api_key=api_key, max_retries=0, **kw)

    def get(self, path: str, key: str | None = None) -> tuple[int, str]:
        """GET `path` (status, body), with the key as a bearer token if given."""
        request = urllib.request.Request(self.url + path)
        if key:
            request.add_header("Authorization", f"Bearer {self.keys[key]}")
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        try:
            with opener.open(request, timeout=10) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as err:
            return err.code, err.read().decode()

    def log_tail(self, lines: int = 60) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"


def qore_env(config: pathlib.Path, data: pathlib.Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("QORE_URL", "QORE_MODEL")}
    env.update(QORE_CONFIG_DIR=str(config), QORE_DATA_DIR=str(data))
    env.setdefault("RUST_BACKTRACE", "1")
    return env


def run_qore(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    """`qore ARGS` to its end (30 s at most); fails the test unless it exits 0."""
    done = subprocess.run(
        [qore_bin(), *args],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, (
        f"`qore {' '.join(args)}` failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    )
    return done


def create_key(env: dict[str, str], name: str, options: list[str]) -> str:
    done = run_qore(env, "serve", "keys", "create", name, *options)
    key = done.stdout.strip()
    assert key and len(key.split()) == 1, f"keys create printed {done.stdout!r}, not one key"
    return key


def start(env: dict[str, str], log: pathlib.Path, *args: str) -> tuple[subprocess.Popen, str]:
    """`qore serve --listen 127.0.0.1:0 ARGS`: the process and the base URL it printed."""
    log_file = open(log, "w", encoding="utf-8")
    process = subprocess.Popen(
        [qore_bin(), "serve", "--listen", "127.0.0.1:0", *args],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=log_file,
        text=True,
    )
    first: list[str] = []
    got = threading.Event()

    def read() -> None:  # the first line, then the rest into the log
        assert process.stdout is not None
        first.append(process.stdout.readline())
        got.set()
        for line in process.stdout:
            log_file.write("[stdout] " + line)
            log_file.flush()

    threading.Thread(target=read, daemon=True).start()
    if not got.wait(START_TIMEOUT):
        stop(process)
        pytest.fail(f"qore serve printed nothing within {START_TIMEOUT} s:\n{log.read_text()}")
    url = first[0].strip()
    if not url.startswith(("http://127.0.0.1:", "https://127.0.0.1:")):
        stop(process)
        pytest.fail(
            f"qore serve's first stdout line is {first[0]!r}, not its base URL "
            f"(exit {process.returncode}):\n{log.read_text()}"
        )
    return process, url.rstrip("/")


def stop(process: subprocess.Popen) -> bool:
    """SIGTERM, then kill after STOP_TIMEOUT: whether it ended on SIGTERM."""
    if process.poll() is not None:
        return True
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(STOP_TIMEOUT)
        return True
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(STOP_TIMEOUT)
        return False


@pytest.fixture(scope="session")
def upstream():
    server = Upstream()
    yield server
    server.close()


@pytest.fixture(scope="session")
def qore(tmp_path_factory, upstream: Upstream):
    root = tmp_path_factory.mktemp("qore")
    config, data = root / "config", root / "data"
    (config / "providers").mkdir(parents=True)
    (config / "agents").mkdir()
    data.mkdir()
    (config / "providers" / "scripted.toml").write_text(
        f'name = "scripted"\nprotocol = "openai-chat"\nurl = "{upstream.url}/v1"\n'
    )
    for name, model in ((AGENT, AGENT_MODEL), (CLAUDE_AGENT, CLAUDE_AGENT_MODEL)):
        (config / "agents" / f"{name}.toml").write_text(
            f'name = "{name}"\nextends = "openai-chat"\nprovider = "scripted"\n'
            f'model = "{model}"\n'
        )
    env = qore_env(config, data)
    keys = {name: create_key(env, name, options) for name, options in KEYS.items()}
    log = root / "serve.log"
    process, url = start(env, log)
    server = Qore(url, keys, config, data, log, env, process)
    yield server
    alive = process.poll() is None
    assert stop(process), f"qore serve did not end within {STOP_TIMEOUT} s of SIGTERM"
    assert alive, f"qore serve died during the tests (exit {process.returncode})"


@pytest.fixture(autouse=True)
def fresh_upstream(upstream: Upstream):
    upstream.reset()
    yield


_SERVER: list[Qore] = []


@pytest.fixture(autouse=True)
def _remember(request):
    if "qore" in request.fixturenames:
        _SERVER[:] = [request.getfixturevalue("qore")]
    yield


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.when == "call" and report.failed and _SERVER:
        report.sections.append(("qore serve log (last lines)", _SERVER[0].log_tail()))
    return report


def wait_until(condition, what: str, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"never happened: {what}")
        time.sleep(0.05)
