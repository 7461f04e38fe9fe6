"""Keys as their owner manages them with the CLI while the server runs: a revoked key is
refused at once, and `qore serve usage` shows what a key did."""

from __future__ import annotations

import json

import openai

from conftest import run_qore, wait_until
from upstream import text

MODEL = "scripted/gpt-test"
HELLO = [{"role": "user", "content": "Say hello."}]


def test_revoked_key_is_refused_within_a_second(qore, upstream):
    upstream.standing = text("Still here.")
    client = qore.openai("to-revoke")
    assert client.chat.completions.create(model=MODEL, messages=HELLO).choices[0].message.content
    run_qore(qore.env, "serve", "keys", "revoke", "to-revoke")

    def refused() -> bool:
        try:
            client.chat.completions.create(model=MODEL, messages=HELLO)
            return False
        except openai.AuthenticationError:
            return True

    wait_until(refused, "the revoked key is refused", seconds=3)


def test_usage_per_key(qore, upstream):
    upstream.script(text("Use me."))
    qore.openai("usage").chat.completions.create(model=MODEL, messages=HELLO)

    def rows() -> list:
        done = run_qore(qore.env, "serve", "usage", "--key", "usage", "--json")
        return json.loads(done.stdout)

    wait_until(lambda: rows() != [], "a usage row for the key", seconds=10)
    (row,) = rows()
    assert MODEL in json.dumps(row), row
    counts = {k: v for k, v in row.items() if isinstance(v, int)}
    assert 1 in counts.values() and 11 in counts.values() and 7 in counts.values(), row
