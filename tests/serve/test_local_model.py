"""The local model (SmolLM2 on llama.cpp, which qore starts itself) as the upstream of
`model="local/default"`, through each of the three dialects with the vendors' SDKs. The
model is tiny: the tests check that an answer and its usage arrive, not its words.
Needs `bash scripts/local-model.sh install` (.ci/run does it; qore installs it otherwise)."""

from __future__ import annotations

MODEL = "local/default"
PROMPT = "Say hello in one short sentence."
LOCAL_TIMEOUT = 120.0  # the first request may start the local server


def test_local_chat_completions(qore):
    client = qore.openai(timeout=LOCAL_TIMEOUT)
    reply = client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": PROMPT}], max_tokens=24
    )
    assert (reply.choices[0].message.content or "").strip(), reply
    assert reply.usage is not None
    assert reply.usage.prompt_tokens > 0 and reply.usage.completion_tokens > 0, reply.usage


def test_local_responses(qore):
    client = qore.openai(timeout=LOCAL_TIMEOUT)
    response = client.responses.create(model=MODEL, input=PROMPT, max_output_tokens=24)
    assert response.output_text.strip(), response
    assert response.usage is not None
    assert response.usage.input_tokens > 0 and response.usage.output_tokens > 0, response.usage


def test_local_anthropic_messages_stream(qore):
    client = qore.anthropic(timeout=LOCAL_TIMEOUT)
    with client.messages.stream(
        model=MODEL, max_tokens=24, messages=[{"role": "user", "content": PROMPT}]
    ) as stream:
        said = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert said.strip(), final
    assert final.usage.input_tokens > 0 and final.usage.output_tokens > 0, final.usage
