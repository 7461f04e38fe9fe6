"""The Anthropic Python SDK against qore serve's Messages API, with the scripted Chat
Completions upstream behind it: text, streaming, a tool round trip, token counting, and
errors raised as the SDK's own classes."""

from __future__ import annotations

import anthropic
import pytest

from conftest import CLAUDE_AGENT
from upstream import context_overflow, rate_limited, text, tool_call

MODEL = "scripted/claude-test"
HELLO = [{"role": "user", "content": "Say hello."}]
WEATHER_TOOL = {
    "name": "get_weather",
    "description": "The weather in a city now.",
    "input_schema": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
}


def contents(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content or ""


def by_role(body: dict, role: str) -> list[dict]:
    return [m for m in body["messages"] if m["role"] == role]


def test_messages_create(qore, upstream):
    upstream.script(text("Hello from Messages."))
    message = qore.anthropic().messages.create(
        model=MODEL, max_tokens=100, system="Be brief.", messages=HELLO
    )
    assert [b.type for b in message.content] == ["text"]
    assert message.content[0].text == "Hello from Messages."
    assert message.stop_reason == "end_turn"
    assert message.role == "assistant" and message.model == MODEL
    assert (message.usage.input_tokens, message.usage.output_tokens) == (11, 7)
    (seen,) = upstream.wait_for(1)
    assert seen.body["model"] == "claude-test"
    assert contents(by_role(seen.body, "system")[0]) == "Be brief."
    assert contents(by_role(seen.body, "user")[-1]) == "Say hello."


def test_messages_stream(qore, upstream):
    upstream.script(text("Streamed from Messages."))
    with qore.anthropic().messages.stream(model=MODEL, max_tokens=100, messages=HELLO) as stream:
        said = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert said == "Streamed from Messages."
    assert final.content[0].text == "Streamed from Messages."
    assert final.stop_reason == "end_turn"
    assert final.usage.output_tokens == 7
    assert final.usage.input_tokens == 11


def test_tool_round_trip(qore, upstream):
    upstream.script(
        tool_call("get_weather", {"city": "Paris"}, call_id="call_weather_9"),
        text("It is sunny in Paris, 21 C."),
    )
    client = qore.anthropic()
    messages: list[dict] = [{"role": "user", "content": "What is the weather in Paris?"}]
    first = client.messages.create(
        model=MODEL, max_tokens=200, tools=[WEATHER_TOOL], messages=messages
    )
    assert first.stop_reason == "tool_use"
    (use,) = [b for b in first.content if b.type == "tool_use"]
    assert use.id and use.name == "get_weather" and use.input == {"city": "Paris"}

    blocks = [b.model_dump(exclude_none=True) for b in first.content]
    messages.append({"role": "assistant", "content": blocks})
    messages.append(
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "sunny, 21 C"}],
        }
    )
    final = client.messages.create(
        model=MODEL, max_tokens=200, tools=[WEATHER_TOOL], messages=messages
    )
    assert final.content[0].text == "It is sunny in Paris, 21 C."
    assert final.stop_reason == "end_turn"

    first_seen, second = upstream.wait_for(2)
    assert [t["function"]["name"] for t in first_seen.body["tools"]] == ["get_weather"]
    (asked,) = by_role(second.body, "assistant")[-1]["tool_calls"]
    (result,) = by_role(second.body, "tool")
    assert asked["id"] == result["tool_call_id"]
    assert asked["function"]["name"] == "get_weather"
    assert "sunny, 21 C" in contents(result)


def test_count_tokens(qore):
    client = qore.anthropic()
    short = client.messages.count_tokens(model=MODEL, messages=HELLO)
    long = client.messages.count_tokens(
        model=MODEL, messages=[{"role": "user", "content": "Say hello. " * 200}]
    )
    assert 0 < short.input_tokens < long.input_tokens


def test_x_api_key_header_is_accepted(qore, upstream):
    """Claude Code and older SDKs send the key as `x-api-key`."""
    upstream.script(text("Keyed by x-api-key."))
    client = anthropic.Anthropic(
        base_url=qore.url,
        api_key=None,
        default_headers={"X-Api-Key": qore.keys["main"], "Authorization": anthropic.Omit()},
        max_retries=0,
        timeout=60,
    )
    message = client.messages.create(model=MODEL, max_tokens=50, messages=HELLO)
    assert message.content[0].text == "Keyed by x-api-key."


def test_no_key_or_wrong_key_is_authentication_error(qore, upstream):
    with pytest.raises(anthropic.AuthenticationError):
        qore.anthropic(None).messages.create(model=MODEL, max_tokens=50, messages=HELLO)
    wrong = anthropic.Anthropic(
        base_url=qore.url, api_key="sk-ant-not-a-key", max_retries=0, timeout=30
    )
    with pytest.raises(anthropic.AuthenticationError):
        wrong.messages.create(model=MODEL, max_tokens=50, messages=HELLO)
    assert upstream.chats() == []


def test_key_limited_to_other_models_is_permission_denied(qore, upstream):
    client = qore.anthropic("claude-only")
    with pytest.raises(anthropic.PermissionDeniedError):
        client.messages.create(model="scripted/x", max_tokens=50, messages=HELLO)
    assert upstream.chats() == []
    upstream.script(text("Allowed."))
    message = client.messages.create(model=CLAUDE_AGENT, max_tokens=50, messages=HELLO)
    assert message.content[0].text == "Allowed."


def test_key_over_its_rpm_is_rate_limited(qore, upstream):
    upstream.standing = text("Within the limit.")
    client = qore.anthropic("rpm-anthropic")
    assert client.messages.create(model=MODEL, max_tokens=50, messages=HELLO).content
    with pytest.raises(anthropic.RateLimitError):
        client.messages.create(model=MODEL, max_tokens=50, messages=HELLO)
    assert len(upstream.chats()) == 1


def test_upstream_429_is_rate_limit_error(qore, upstream):
    upstream.standing = rate_limited(retry_after=60)
    with pytest.raises(anthropic.RateLimitError) as caught:
        qore.anthropic().messages.create(model=MODEL, max_tokens=50, messages=HELLO)
    assert caught.value.response.headers.get("retry-after") == "60"


def test_upstream_context_overflow_is_prompt_too_long(qore, upstream):
    upstream.standing = context_overflow()
    with pytest.raises(anthropic.BadRequestError) as caught:
        qore.anthropic().messages.create(model=MODEL, max_tokens=50, messages=HELLO)
    # Anthropic's own wording, which Claude Code and others recognise to compact.
    assert "prompt is too long" in str(caught.value).lower(), caught.value.body


def test_malformed_and_unknown_model_are_refused(qore, upstream):
    client = qore.anthropic()
    with pytest.raises(anthropic.BadRequestError):
        client.messages.create(
            model=MODEL, max_tokens=50, messages=[{"role": "wizard", "content": "hi"}]  # type: ignore[list-item]
        )
    with pytest.raises(anthropic.BadRequestError):
        client.post("/v1/messages", body={"model": MODEL, "max_tokens": 5}, cast_to=object)
    with pytest.raises((anthropic.NotFoundError, anthropic.BadRequestError)):
        client.messages.create(model="no-such-agent-or-model", max_tokens=50, messages=HELLO)
    assert upstream.chats() == []
