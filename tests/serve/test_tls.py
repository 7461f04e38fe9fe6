"""The OpenAI Python SDK against qore serve over HTTPS (`--tls-cert`/`--tls-key`), with a
test CA made by `openssl`: the SDK trusting that CA gets whole and streamed answers; one
trusting only the usual roots is refused before anything reaches the upstream."""

from __future__ import annotations

import pathlib
import ssl
import subprocess

import openai
import pytest

from conftest import qore_env, start, stop
from upstream import text

MODEL = "scripted/gpt-test"
HELLO = [{"role": "user", "content": "Say hello."}]


def openssl(cwd: pathlib.Path, *args: str) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=30)


def make_ca_and_leaf(dir: pathlib.Path) -> tuple[pathlib.Path, pathlib.Path, pathlib.Path]:
    """A CA and a certificate it signed for 127.0.0.1: (ca.crt, leaf.crt, leaf.key)."""
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    openssl(dir, "req", "-x509", *ec, "-days", "2", "-subj", "/CN=qore test CA",
            "-keyout", "ca.key", "-out", "ca.crt")
    openssl(dir, "req", *ec, "-subj", "/CN=localhost", "-keyout", "leaf.key", "-out", "leaf.csr")
    (dir / "san.ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    openssl(dir, "x509", "-req", "-in", "leaf.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
            "-CAcreateserial", "-days", "2", "-extfile", "san.ext", "-out", "leaf.crt")
    return dir / "ca.crt", dir / "leaf.crt", dir / "leaf.key"


@pytest.fixture(scope="module")
def https_qore(tmp_path_factory, upstream):
    """(base URL, CA file) of a `qore serve` on HTTPS with no keys (loopback: any caller)."""
    root = tmp_path_factory.mktemp("qore-tls")
    config, data = root / "config", root / "data"
    (config / "providers").mkdir(parents=True)
    data.mkdir()
    (config / "providers" / "scripted.toml").write_text(
        f'name = "scripted"\nprotocol = "openai-chat"\nurl = "{upstream.url}/v1"\n'
    )
    ca, cert, key = make_ca_and_leaf(root)
    process, url = start(qore_env(config, data), root / "serve.log",
                         "--tls-cert", str(cert), "--tls-key", str(key))
    yield url, ca
    assert stop(process), "qore serve (TLS) did not end on SIGTERM"


def client(url: str, verify) -> openai.OpenAI:
    http = openai.DefaultHttpx2Client(verify=verify, timeout=60.0)
    return openai.OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0,
                         http_client=http)


def test_the_url_is_https(https_qore):
    url, _ = https_qore
    assert url.startswith("https://127.0.0.1:")


def test_openai_sdk_whole_and_streamed_over_https(https_qore, upstream):
    url, ca = https_qore
    sdk = client(url, ssl.create_default_context(cafile=str(ca)))
    upstream.script(text("Hello over TLS."), text("Streamed over TLS."))
    reply = sdk.chat.completions.create(model=MODEL, messages=HELLO)
    assert reply.choices[0].message.content == "Hello over TLS."
    stream = sdk.chat.completions.create(model=MODEL, messages=HELLO, stream=True)
    parts = [c.choices[0].delta.content or "" for c in stream if c.choices]
    assert "".join(parts) == "Streamed over TLS."
    assert len(upstream.wait_for(2)) == 2


def test_a_client_not_trusting_the_ca_is_refused(https_qore, upstream):
    url, _ = https_qore
    sdk = client(url, ssl.create_default_context())
    with pytest.raises(openai.APIConnectionError):
        sdk.chat.completions.create(model=MODEL, messages=HELLO)
    assert upstream.chats() == []
