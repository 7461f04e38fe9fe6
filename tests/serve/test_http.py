"""Plain HTTP against qore serve, as curl or a load balancer meets it: the health and
readiness probes need no key, the API does; and the legacy Completions endpoint with the
OpenAI SDK."""

from __future__ import annotations

from upstream import text


def test_probes_need_no_key_and_the_api_does(qore):
    assert qore.get("/healthz")[0] == 200
    assert qore.get("/readyz")[0] == 200
    status, body = qore.get("/v1/models")
    assert status == 401, body
    assert qore.get("/v1/models", key="main")[0] == 200


def test_metrics_count_requests(qore, upstream):
    upstream.script(text("Counted."))
    qore.openai().chat.completions.create(
        model="scripted/gpt-test", messages=[{"role": "user", "content": "Count me."}]
    )
    status, body = qore.get("/metrics", key="main")
    assert status == 200, body
    assert "# TYPE" in body, body[:2000]


def test_legacy_completions(qore, upstream):
    upstream.script(text(" world."))
    reply = qore.openai().completions.create(
        model="scripted/gpt-test", prompt="Hello", max_tokens=10
    )
    assert reply.choices[0].text == " world."
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (11, 7)
    (seen,) = upstream.wait_for(1)
    assert "Hello" in str(seen.body.get("messages") or seen.body.get("prompt"))
