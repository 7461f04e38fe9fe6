"""Completion as an editor asks for it, against `qore lsp` and a loopback provider.

Proves: `textDocument/inlineCompletion` returns the cleaned text at the cursor, from a FIM
agent (`/infill` with prefix and suffix; single-line mode stops at the end of the line) and
from a chat agent (a recorded llama.cpp stream, and a fenced answer with prose in the recorded
envelope); `textDocument/completion` returns one item whose text edit inserts it at the
cursor, with settings given every supported way (including the object docs/editors.md shows);
an ignored file (`.qoreignore`, `.gitignore`) gets no item and no refactor action, and the
provider sees no request; other open documents go along as `input_extra` when `openDocuments`
is on, an ignored one never; a provider error is an LSP error with a one-line message, and the
server answers afterwards.
"""

from __future__ import annotations

import asyncio
import json
import subprocess

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from cassette import PONG, SERVER_ERROR, chat_stream, infill_stream, recorded
from conftest import (
    CURSOR, doc_block, inline_items, inline_params, inline_texts, open_doc, settings
)
from provider import Reply, sse

CHAT = "/v1/chat/completions"
FENCED = "Here is the completion:\n```python\na + b\n```\nThis adds the numbers."

TWO_LINES = ["a + b", "\n    # done"]
INLINE_CASES = [
    # (completion settings, reply body, path the provider sees, text the editor gets)
    pytest.param({"agent": "fim"}, lambda: infill_stream(["a", " + ", "b"]), "/infill", "a + b",
                 id="fim"),
    pytest.param({"agent": "fim", "mode": "single"}, lambda: infill_stream(TWO_LINES),
                 "/infill", "a + b", id="fim-single-line"),
    pytest.param({"agent": "fim"}, lambda: infill_stream(TWO_LINES), "/infill",
                 "a + b\n    # done", id="fim-multi-line"),
    pytest.param({"agent": "chat"}, lambda: recorded(PONG)[2], CHAT, "pong", id="chat-recorded"),
    pytest.param({"agent": "chat"}, lambda: chat_stream(FENCED), CHAT, "a + b",
                 id="chat-fenced"),
]


def wait(aw, seconds: float = 30):
    return asyncio.wait_for(aw, seconds)


@pytest.mark.parametrize("completion,body,path,text", INLINE_CASES)
async def test_inline_completion_is_the_cleaned_reply(
    editor, provider, completion, body, path, text
):
    provider.queue(sse(body()))
    client, uri = await editor({"qore": settings(completion=completion)})
    request = client.text_document_inline_completion_async(inline_params(uri))
    items = inline_items(await wait(request))
    assert [item.insert_text for item in items] == [text]
    assert items[0].range is not None
    assert items[0].range.start == types.Position(line=CURSOR[0], character=CURSOR[1])
    [seen] = provider.wait_for(1)
    assert seen.path == path
    if path == "/infill":
        assert seen.body["input_prefix"] == "def add(a, b):\n    return "
        assert seen.body["input_suffix"] == "\n\nprint(add(1, 2))\n"
    else:
        assert "<cursor>" in str(seen.body["messages"])


SETTINGS_CASES = [
    # (initializationOptions, didChangeConfiguration settings or None, items wanted)
    pytest.param({"qore": settings()}, None, ["a + b"], id="init-wrapped"),
    pytest.param(settings(), None, ["a + b"], id="init-bare"),
    # The settings object docs/editors.md shows, as it is (agent null: the roster's).
    pytest.param(json.loads(doc_block("json")), None, ["a + b"], id="documented"),
    pytest.param(None, {"qore": settings()}, ["a + b"], id="didChangeConfiguration"),
    pytest.param({"qore": settings(enabled=False)}, None, [], id="disabled"),
    pytest.param(
        {"qore": settings()}, {"qore": settings(enabled=False)}, [], id="disabled-later"
    ),
]


@pytest.mark.parametrize("init,change,wanted", SETTINGS_CASES)
async def test_completion_fallback_inserts_at_the_cursor(
    start_lsp, workspace, provider, init, change, wanted
):
    provider.queue(sse(infill_stream(["a ", "+ b"])))
    client = await start_lsp(init)
    if change is not None:
        params = types.DidChangeConfigurationParams(settings=change)
        client.workspace_did_change_configuration(params)
    uri = workspace.file("add.py")
    open_doc(client, uri)
    at = types.Position(line=CURSOR[0], character=CURSOR[1])
    result = await wait(client.text_document_completion_async(types.CompletionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=at)))
    items = (result.items if isinstance(result, types.CompletionList) else result) or []
    got = [item.text_edit.new_text for item in items if item.text_edit is not None]
    assert got == wanted, items
    for item in items:
        assert item.text_edit.range.start == at  # type: ignore[union-attr]
    assert len(provider.seen) == len(wanted)


IGNORED_CASES = [
    pytest.param(".qoreignore", "secret/key.py", id="qoreignore"),
    pytest.param(".gitignore", "build/gen.py", id="gitignore"),
]


@pytest.mark.parametrize("ignore_file,rel", IGNORED_CASES)
async def test_an_ignored_file_gets_nothing_and_is_never_sent(
    start_lsp, workspace, provider, ignore_file, rel
):
    subprocess.run(["git", "init", "-q", str(workspace.project)], check=True)
    (workspace.project / ignore_file).write_text(rel.split("/")[0] + "/\n")
    provider.queue(sse(infill_stream(["leak"])))
    client = await start_lsp({"qore": settings()})
    uri = workspace.file(rel)
    open_doc(client, uri)
    assert await inline_texts(client, uri) == []
    everything = types.Range(start=types.Position(line=0, character=0),
                             end=types.Position(line=1, character=11))
    actions = await wait(client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=everything,
        context=types.CodeActionContext(diagnostics=[]))))
    assert not actions, actions  # no refactor of an ignored file either
    # The same request on a file that is not ignored does reach the provider: the one above
    # was answered without asking it.
    other = workspace.file("add.py")
    open_doc(client, other)
    assert await inline_texts(client, other) == ["leak"]
    assert [seen.path for seen in provider.seen] == ["/infill"]
    assert "def add" in provider.seen[0].body["input_prefix"]


async def test_a_provider_error_is_one_line_and_the_server_lives_on(editor, provider):
    provider.standing = Reply(*recorded(SERVER_ERROR))  # every request meets it
    client, uri = await editor()
    with pytest.raises(JsonRpcException) as error:
        await inline_texts(client, uri)
    assert len(provider.seen) == 1, provider.seen  # a completion is not retried
    provider.standing = None
    provider.queue(sse(infill_stream(["a + b"])))
    message = error.value.message or ""
    assert "tools param requires --jinja flag" in message, message
    assert "\n" not in message.strip(), message
    assert await inline_texts(client, uri) == ["a + b"]


CONTEXT_CASES = [
    # (openDocuments, whether the other open file's text goes along)
    pytest.param(True, True, id="openDocuments"),
    pytest.param(False, False, id="no-openDocuments"),
]


@pytest.mark.parametrize("open_documents,sent", CONTEXT_CASES)
async def test_open_documents_go_along_but_never_an_ignored_one(
    start_lsp, workspace, provider, open_documents, sent
):
    provider.queue(sse(infill_stream(["a + b"])))
    client = await start_lsp({"qore": settings(completion={"openDocuments": open_documents})})
    helper, secret = "def helper_marker():\n    return 42\n", "SECRET_MARKER = 'do not send'\n"
    open_doc(client, workspace.file("helper.py", helper), helper)
    open_doc(client, workspace.file("secret/key.py", secret), secret)
    uri = workspace.file("add.py")
    open_doc(client, uri)
    assert await inline_texts(client, uri) == ["a + b"]
    [seen] = provider.seen
    body = str(seen.body)
    assert "SECRET_MARKER" not in body, body
    assert ("helper_marker" in str(seen.body.get("input_extra"))) == sent, body
