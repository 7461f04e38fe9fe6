"""The OpenAI Python SDK against qore serve: Chat Completions, Responses, models, and errors
raised as the SDK's own classes. The upstream is the scripted Chat Completions provider
(`scripted/...`), so the answers and what qore sent upstream are known exactly."""

from __future__ import annotations

import fnmatch
import json

import openai
import pytest

from conftest import AGENT, AGENT_MODEL, CLAUDE_AGENT, NO_OPENAI_KEY
from upstream import context_overflow, error, rate_limited, text, tool_call

MODEL = "scripted/gpt-test"
HELLO = [{"role": "user", "content": "Say hello."}]
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city now.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}


def contents(message: dict) -> str:
    """A Chat Completions message's text, whether a string or a list of parts."""
    content = message.get("content")
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content or ""


def by_role(body: dict, role: str) -> list[dict]:
    return [m for m in body["messages"] if m["role"] == role]


# -- Chat Completions ----------------------------------------------------------------------


def test_chat_non_streaming(qore, upstream):
    upstream.script(text("Hello there, friend."))
    reply = qore.openai().chat.completions.create(model=MODEL, messages=HELLO)
    assert reply.choices[0].message.content == "Hello there, friend."
    assert reply.choices[0].finish_reason == "stop"
    assert reply.model == MODEL
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (11, 7)
    (seen,) = upstream.wait_for(1)
    assert seen.body["model"] == "gpt-test"
    assert contents(by_role(seen.body, "user")[-1]) == "Say hello."


def test_chat_streaming_with_usage(qore, upstream):
    upstream.script(text("Streaming works over qore."))
    stream = qore.openai().chat.completions.create(
        model=MODEL, messages=HELLO, stream=True, stream_options={"include_usage": True}
    )
    chunks = list(stream)
    said = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert said == "Streaming works over qore."
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    assert finishes == ["stop"]
    usages = [c.usage for c in chunks if c.usage is not None]
    assert len(usages) == 1, chunks[-3:]
    assert (usages[0].prompt_tokens, usages[0].completion_tokens) == (11, 7)
    assert chunks[-1].usage is not None, "the usage chunk comes last"


def test_chat_tool_round_trip(qore, upstream):
    upstream.script(
        tool_call("get_weather", {"city": "Paris"}, call_id="call_weather_1"),
        text("It is sunny in Paris, 21 C."),
    )
    client = qore.openai()
    messages = [{"role": "user", "content": "What is the weather in Paris?"}]
    first = client.chat.completions.create(model=MODEL, messages=messages, tools=[WEATHER_TOOL])
    choice = first.choices[0]
    assert choice.finish_reason == "tool_calls"
    (call,) = choice.message.tool_calls
    assert call.id
    assert call.function.name == "get_weather"
    assert json.loads(call.function.arguments) == {"city": "Paris"}

    messages.append(choice.message.model_dump(exclude_none=True))
    messages.append({"role": "tool", "tool_call_id": call.id, "content": "sunny, 21 C"})
    final = client.chat.completions.create(model=MODEL, messages=messages, tools=[WEATHER_TOOL])
    assert final.choices[0].message.content == "It is sunny in Paris, 21 C."

    first_seen, second = upstream.wait_for(2)
    assert [t["function"]["name"] for t in first_seen.body["tools"]] == ["get_weather"]
    (asked,) = by_role(second.body, "assistant")[-1]["tool_calls"]
    (result,) = by_role(second.body, "tool")
    assert asked["id"] == result["tool_call_id"] == call.id
    assert asked["function"]["name"] == "get_weather"
    assert json.loads(asked["function"]["arguments"]) == {"city": "Paris"}
    assert contents(result) == "sunny, 21 C"


def test_chat_streaming_tool_call(qore, upstream):
    upstream.script(tool_call("get_weather", {"city": "Oslo"}, call_id="call_weather_2"))
    with qore.openai().chat.completions.stream(
        model=MODEL,
        messages=[{"role": "user", "content": "Weather in Oslo?"}],
        tools=[WEATHER_TOOL],
    ) as stream:
        final = stream.get_final_completion()
    (call,) = final.choices[0].message.tool_calls
    assert call.id and call.function.name == "get_weather"
    assert json.loads(call.function.arguments) == {"city": "Oslo"}
    assert final.choices[0].finish_reason == "tool_calls"


def test_agent_by_name(qore, upstream):
    upstream.script(text("The agent answers."))
    reply = qore.openai().chat.completions.create(model=AGENT, messages=HELLO)
    assert reply.choices[0].message.content == "The agent answers."
    assert reply.model == AGENT
    (seen,) = upstream.wait_for(1)
    assert seen.body["model"] == AGENT_MODEL


# -- Responses -----------------------------------------------------------------------------


def test_responses_non_streaming(qore, upstream):
    upstream.script(text("A response from Responses."))
    response = qore.openai().responses.create(model=MODEL, input="Say something.")
    assert response.output_text == "A response from Responses."
    assert response.status == "completed"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (11, 7)
    (seen,) = upstream.wait_for(1)
    assert contents(by_role(seen.body, "user")[-1]) == "Say something."


def test_responses_streaming(qore, upstream):
    upstream.script(text("Streamed through Responses."))
    with qore.openai().responses.stream(model=MODEL, input="Stream something.") as stream:
        deltas = [e.delta for e in stream if e.type == "response.output_text.delta"]
        final = stream.get_final_response()
    assert "".join(deltas) == "Streamed through Responses."
    assert final.output_text == "Streamed through Responses."
    assert final.usage is not None and final.usage.output_tokens == 7


def test_responses_previous_id_retrieve_delete(qore, upstream):
    upstream.script(text("My name is Qore."), text("You asked for my name."))
    client = qore.openai()
    first = client.responses.create(model=MODEL, input="What is your name?")
    second = client.responses.create(
        model=MODEL, input="What did I just ask?", previous_response_id=first.id
    )
    assert second.output_text == "You asked for my name."
    _, seen = upstream.wait_for(2)
    users = [contents(m) for m in by_role(seen.body, "user")]
    assistants = [contents(m) for m in by_role(seen.body, "assistant")]
    assert users == ["What is your name?", "What did I just ask?"], seen.body["messages"]
    assert assistants == ["My name is Qore."], seen.body["messages"]

    got = client.responses.retrieve(first.id)
    assert got.id == first.id and got.output_text == "My name is Qore."
    with pytest.raises(openai.NotFoundError):
        qore.openai("other").responses.retrieve(first.id)
    client.responses.delete(first.id)
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(first.id)
    assert len(upstream.chats()) == 2, "retrieve and delete never reach the upstream"


# -- Models --------------------------------------------------------------------------------


def test_models_list_what_the_key_may_use(qore):
    ids = [m.id for m in qore.openai().models.list()]
    assert AGENT in ids, ids
    limited = [m.id for m in qore.openai("claude-only").models.list()]
    assert CLAUDE_AGENT in limited, limited
    assert all(fnmatch.fnmatch(i, "claude-*") for i in limited), limited


# -- Errors, as the SDK's own classes ------------------------------------------------------


def test_no_key_or_wrong_key_is_authentication_error(qore, upstream):
    client = qore.openai(None)
    with pytest.raises(openai.AuthenticationError):
        client.chat.completions.create(model=MODEL, messages=HELLO, extra_headers=NO_OPENAI_KEY)
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(
            base_url=qore.url + "/v1", api_key="sk-qore-not-a-key", max_retries=0, timeout=30
        ).chat.completions.create(model=MODEL, messages=HELLO)
    assert upstream.chats() == [], "a refused request never reaches the upstream"


def test_key_limited_to_other_models_is_permission_denied(qore, upstream):
    client = qore.openai("claude-only")
    with pytest.raises(openai.PermissionDeniedError):
        client.chat.completions.create(model="scripted/x", messages=HELLO)
    assert upstream.chats() == []
    upstream.script(text("Allowed."))
    reply = client.chat.completions.create(model=CLAUDE_AGENT, messages=HELLO)
    assert reply.choices[0].message.content == "Allowed."


def test_key_over_its_rpm_is_rate_limited(qore, upstream):
    upstream.standing = text("Within the limit.")
    client = qore.openai("rpm-openai")
    assert client.chat.completions.create(model=MODEL, messages=HELLO).choices[0].message.content
    with pytest.raises(openai.RateLimitError) as caught:
        client.chat.completions.create(model=MODEL, messages=HELLO)
    assert caught.value.response.headers.get("retry-after"), "a 429 says when to come back"
    assert len(upstream.chats()) == 1


def test_upstream_429_is_rate_limit_error(qore, upstream):
    upstream.standing = rate_limited(retry_after=60)  # longer than qore waits: passed on
    with pytest.raises(openai.RateLimitError) as caught:
        qore.openai().chat.completions.create(model=MODEL, messages=HELLO)
    assert caught.value.response.headers.get("retry-after") == "60"


def test_upstream_500_is_server_error(qore, upstream):
    upstream.standing = error(500, "the scripted upstream broke", kind="server_error")
    with pytest.raises(openai.InternalServerError):
        qore.openai().chat.completions.create(model=MODEL, messages=HELLO)


def test_upstream_context_overflow_is_context_length_error(qore, upstream):
    upstream.standing = context_overflow()
    with pytest.raises(openai.BadRequestError) as caught:
        qore.openai().chat.completions.create(model=MODEL, messages=HELLO)
    assert caught.value.code == "context_length_exceeded", caught.value.body


def test_unknown_model(qore, upstream):
    with pytest.raises((openai.NotFoundError, openai.BadRequestError)):
        qore.openai().chat.completions.create(model="no-such-agent-or-model", messages=HELLO)
    with pytest.raises((openai.NotFoundError, openai.BadRequestError)):
        qore.openai().chat.completions.create(model="nosuchprovider/gpt", messages=HELLO)
    assert upstream.chats() == []


def test_malformed_request_is_bad_request(qore, upstream):
    client = qore.openai()
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(
            model=MODEL, messages=[{"role": "wizard", "content": "hi"}]  # type: ignore[list-item]
        )
    with pytest.raises(openai.BadRequestError):
        client.post("/chat/completions", body={"model": MODEL}, cast_to=object)  # no messages
    assert upstream.chats() == []
