"""Quick refactor as an editor does it: a code action on a selection, then its command.

Proves: a selection gets one code action per configured instruction, each carrying the
`qore.refactor` command with [{uri, range, instruction}]; executing it sends the refactor
agent the instruction and the selection, and the client receives one `workspace/applyEdit`
replacing exactly the range with the cleaned answer (fence and prose gone); a provider
failure is a `window/showMessage` error and no edit at all.
"""

from __future__ import annotations

import asyncio

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from cassette import SERVER_ERROR, chat_stream, infill_stream, recorded
from conftest import ACTIONS, inline_texts, until
from provider import Reply, sse

NEW_ADD = 'def add(a, b):\n    """The sum of a and b."""\n    return a + b'
ANSWER = f"Here is the refactored code:\n```python\n{NEW_ADD}\n```\nI added a docstring."
SELECTION = types.Range(
    start=types.Position(line=0, character=0), end=types.Position(line=1, character=11)
)


async def actions_for(client, uri: str) -> list[types.CodeAction]:
    result = await asyncio.wait_for(client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=SELECTION,
            context=types.CodeActionContext(diagnostics=[]),
        )), 30)
    return [a for a in result or [] if isinstance(a, types.CodeAction)]


def edits_of(params: types.ApplyWorkspaceEditParams) -> dict[str, list[types.TextEdit]]:
    """uri -> edits, whether the server sent `changes` or `documentChanges`."""
    edit = params.edit
    if edit.changes:
        return {uri: list(edits) for uri, edits in edit.changes.items()}
    out: dict[str, list[types.TextEdit]] = {}
    for change in edit.document_changes or []:
        if isinstance(change, types.TextDocumentEdit):
            out.setdefault(change.text_document.uri, []).extend(change.edits)
    return out


async def execute(client, action: types.CodeAction):
    assert action.command is not None, action
    try:
        await asyncio.wait_for(client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command=action.command.command, arguments=action.command.arguments
            )), 30)
    except JsonRpcException:
        pass  # a failure may also answer the command with an error; the message is the contract


async def test_a_code_action_refactors_the_selection_through_apply_edit(editor, provider):
    provider.queue(sse(chat_stream(ANSWER)))
    client, uri = await editor()
    actions = await actions_for(client, uri)
    assert [a.title for a in actions] == [a["title"] for a in ACTIONS]
    for action, configured in zip(actions, ACTIONS):
        assert action.command is not None and action.command.command == "qore.refactor"
        [arg] = action.command.arguments or [None]
        assert arg["uri"] == uri and arg["instruction"] == configured["instruction"], arg
        assert arg["range"] == {"start": {"line": 0, "character": 0},
                                "end": {"line": 1, "character": 11}}, arg
    await execute(client, actions[0])
    await until(lambda: client.applied, "workspace/applyEdit")
    [applied] = client.applied
    assert edits_of(applied) == {uri: [types.TextEdit(range=SELECTION, new_text=NEW_ADD)]}
    [seen] = provider.seen
    assert seen.path == "/v1/chat/completions"
    sent = str(seen.body["messages"])
    assert "Refactor this code." in sent and "def add(a, b):" in sent, sent
    assert not [m for m in client.messages if m.type == types.MessageType.Error]


async def test_a_failed_refactor_is_an_error_message_and_no_edit(editor, provider):
    provider.standing = Reply(*recorded(SERVER_ERROR))  # every retry meets it too
    client, uri = await editor()
    actions = await actions_for(client, uri)
    await execute(client, actions[0])
    await until(lambda: client.messages, "window/showMessage")
    provider.standing = None
    provider.queue(sse(infill_stream(["a + b"])))
    [message] = client.messages
    assert message.type == types.MessageType.Error
    assert "tools param requires --jinja flag" in message.message, message
    assert client.applied == []
    # The server lives on: a completion right after is answered.
    assert await inline_texts(client, uri) == ["a + b"]
    assert client.applied == []
