"""The Copilot language server's protocol as each editor plugin written for it speaks it,
against the real `qore` started by the plugin's own command line and a loopback provider.
The requests are the plugins' exact shapes, as /work/shared/research/copilot-protocol.md
lists them (Qt Creator's Copilot plugin, copilot.lua, LSP-copilot, copilot.vim, copilot.el).

Proves: `initialize` answers serverInfo; a document changed by full text (copilot.vim on plain
Vim) is completed on its new text; `getCompletions`/`getCompletionsCycling` give the item each
plugin reads (a unique non-null uuid, `range` from character 0 of the cursor's line to the
cursor, `text` = the line's prefix + the completion, `displayText` = the completion,
`docVersion` = the version sent); copilot.vim's and copilot.el's `textDocument/inlineCompletion`
(its item's `command`, run on a whole accept, is counted) and their notifications; the account stubs; shown/accepted/rejected counts in the
`window/logMessage` lines; a blank completion is no item; a superseded `getCompletionsCycling`
is answered RequestCancelled and the newer one gets the completion; an unknown request is
-32601 and an unknown notification changes nothing; `$/setTrace` and Copilot's own settings
bring no warning, and a workspace folder added later brings its `.qoreignore` along.
"""

from __future__ import annotations

import asyncio
import uuid

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from cassette import infill_stream
from conftest import ADD_PY, CURSOR
from provider import sse

REQUEST_CANCELLED = -32800
METHOD_NOT_FOUND = -32601
# The document after the full-text change every test sends (version 2).
EDITED = ADD_PY.replace("add(1, 2)", "add(5, 6)")
PREFIX = "    return "  # the cursor's line left of the cursor (CURSOR)
POSITION = {"line": CURSOR[0], "character": CURSOR[1]}


def init_options(editor: str, plugin: str) -> dict:
    return {
        "editorInfo": {"name": editor, "version": "1.0"},
        "editorPluginInfo": {"name": plugin, "version": "1.0"},
    }


def qt_creator(uri: str, version: int) -> dict:
    """Qt Creator's GetCompletionRequest: `doc` with uri, version and position only."""
    return {"doc": {"uri": uri, "version": version, "position": POSITION}}


def copilot_lua(uri: str, version: int) -> dict:
    """copilot.lua's util.get_doc_params, with its `_ = true`."""
    doc = {"uri": uri, "version": version, "relativePath": "add.py", "insertSpaces": True,
           "tabSize": 4, "indentSize": 4, "position": POSITION}
    return {"_": True, "doc": doc,
            "textDocument": {"uri": uri, "version": version, "relativePath": "add.py"},
            "position": POSITION}


def lsp_copilot(uri: str, version: int) -> dict:
    """LSP-copilot's prepare_completion_request: the whole source in `doc` too."""
    return {"doc": {"source": EDITED, "tabSize": 4, "indentSize": 4, "insertSpaces": True,
                    "path": "/p/add.py", "uri": uri, "relativePath": "add.py",
                    "languageId": "python", "position": POSITION, "version": version}}


CLIENTS = [
    # (qore's arguments as the plugin runs it, initializationOptions, requests before the
    #  completion as (method, params), completion method, its params)
    pytest.param(["AGENT_JS", "--stdio"], init_options("Qt Creator", "Copilot"),
                 [("checkStatus", {"localChecksOnly": True})],
                 "getCompletionsCycling", qt_creator, id="qt-creator"),
    pytest.param(["--stdio"], init_options("Neovim", "copilot.lua"),
                 [("checkStatus", {})], "getCompletions", copilot_lua, id="copilot.lua"),
    pytest.param(["lsp", "--stdio"], init_options("Sublime Text", "LSP-copilot"),
                 [("setEditorInfo", init_options("Sublime Text", "LSP-copilot")),
                  ("checkStatus", {})],
                 "getCompletions", lsp_copilot, id="LSP-copilot"),
]


async def request(client, method: str, params, seconds: float = 30):
    """The result of `method`, as plain JSON types."""
    sent = client.protocol.send_request_async(method, params)
    return plain(await asyncio.wait_for(sent, seconds))


def plain(value):
    """pygls gives a custom method's JSON objects as named tuples: back to dicts."""
    if hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def plain_json(client):
    """`client` sending and reading the standard methods the plugins use as plain JSON (as
    the custom ones are), so each request goes out in the plugin's exact shape: lsprotocol's
    types would drop keys they do not know (copilot.vim's `formattingOptions`)."""
    protocol = client.protocol
    message_type, result_type = protocol.get_message_type, protocol.get_result_type
    protocol.get_message_type = lambda m: None if m in RAW else message_type(m)
    protocol.get_result_type = lambda m: None if m in RAW else result_type(m)
    return client


RAW = {"textDocument/didOpen", "textDocument/didChange", "textDocument/inlineCompletion",
       "workspace/didChangeConfiguration", "workspace/didChangeWorkspaceFolders", "$/setTrace"}


async def open_and_edit(client, workspace) -> str:
    """add.py opened (version 1), then changed by full text (version 2); its URI."""
    plain_json(client)
    uri = workspace.file("add.py")
    doc = {"uri": uri, "languageId": "python", "version": 1, "text": ADD_PY}
    client.protocol.notify("textDocument/didOpen", {"textDocument": doc})
    client.protocol.notify("textDocument/didChange", {
        "textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": EDITED}]})
    return uri


@pytest.mark.parametrize("args,init,before,method,params", CLIENTS)
async def test_each_plugin_gets_the_item_it_reads(
    start_lsp, workspace, provider, args, init, before, method, params
):
    provider.queue(sse(infill_stream(["a", " + b"])), sse(infill_stream(["a - b"])))
    agent_js = workspace.project / "dist" / "agent.js"
    agent_js.parent.mkdir()
    agent_js.write_text("// Qt Creator's 'Path to agent.js': any existing file\n")
    args = [str(agent_js) if arg == "AGENT_JS" else arg for arg in args]
    client = await start_lsp(init, args)
    info = client.init_result.server_info  # type: ignore[attr-defined]
    assert info is not None and info.name == "qore", info
    for name, sent in before:
        answer = await request(client, name, sent)
        wanted = {"status": "OK", "user": "qore"} if name == "checkStatus" else "OK"
        assert answer == wanted, (name, answer)
    uri = await open_and_edit(client, workspace)
    items = []
    for _ in range(2):
        result = await request(client, method, params(uri, 2))
        assert list(result) == ["completions"], result
        items += result["completions"]
    assert [item["displayText"] for item in items] == ["a + b", "a - b"], items
    for item in items:
        completion = item["displayText"]
        assert item["text"] == PREFIX + completion, item
        assert item["range"] == {"start": {"line": CURSOR[0], "character": 0}, "end": POSITION}
        assert item["position"] == POSITION, item
        assert item["docVersion"] == 2, item
        assert uuid.UUID(item["uuid"]), item
    assert items[0]["uuid"] != items[1]["uuid"], items
    assert [seen.path for seen in provider.seen] == ["/infill", "/infill"]
    assert provider.seen[0].body["input_suffix"] == "\n\nprint(add(5, 6))\n"


async def test_copilot_vim_and_el_inline_completion_and_notifications(
    start_lsp, workspace, provider
):
    provider.queue(sse(infill_stream(["a + b"])))
    client = await start_lsp(init_options("Vim", "copilot.vim"), ["--stdio"])
    assert client.init_result.server_info is not None  # type: ignore[attr-defined]
    uri = await open_and_edit(client, workspace)
    client.protocol.notify("textDocument/didFocus", {"textDocument": {"uri": uri}})
    result = await request(client, "textDocument/inlineCompletion", {
        "textDocument": {"uri": uri, "version": 2}, "position": POSITION,
        "context": {"triggerKind": 2}, "formattingOptions": {"tabSize": 4, "insertSpaces": True}})
    [item] = result["items"]
    # copilot.vim draws line[:range.start] + insertText: the range is on the cursor's line.
    command = item["command"]
    assert {k: v for k, v in item.items() if k != "command"} == {
        "insertText": "a + b", "range": {"start": POSITION, "end": POSITION}}
    assert command["command"] == "qore.completionAccepted", command
    [uuid_arg] = command["arguments"]
    assert uuid.UUID(uuid_arg), command
    shown = item  # the plugins send the item back whole: its command names it
    client.protocol.notify("textDocument/didShowCompletion", {"item": shown})
    client.protocol.notify("textDocument/didPartiallyAcceptCompletion",
                           {"item": shown, "acceptedLength": 1})
    client.protocol.notify("copilot/unknownNotification", {"x": 1})
    # The server still answers, and logged both notifications with their counts.
    assert (await request(client, "checkStatus", {})) == {"status": "OK", "user": "qore"}
    await until_logged(client, "partially accepted 1")
    logged = [m.message for m in client.log_messages]
    assert any(f"{uuid_arg} shown (shown 1, accepted 0, partially accepted 0" in m
               for m in logged), logged
    # A whole accept: the plugins run the item's command, only because it has one.
    accepted = client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=command["command"], arguments=command["arguments"]))
    assert (await asyncio.wait_for(accepted, 30)) is None
    await until_logged(client, f"completion {uuid_arg} accepted (shown 1, accepted 1,")


async def until_logged(client, text: str, seconds: float = 30) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not any(text in m.message for m in client.log_messages):
        if loop.time() > deadline:
            messages = [m.message for m in client.log_messages]
            raise AssertionError(f"never logged {text!r}: {messages}")
        await asyncio.sleep(0.05)


STUBS = [
    # (method, params, result)
    pytest.param("checkStatus", {"options": {"localChecksOnly": True}},
                 {"status": "OK", "user": "qore"}, id="checkStatus"),
    pytest.param("signInInitiate", {}, {"status": "AlreadySignedIn", "user": "qore"},
                 id="signInInitiate"),
    pytest.param("signInConfirm", {"userCode": "ABCD-1234"}, {"status": "OK", "user": "qore"},
                 id="signInConfirm"),
    pytest.param("signOut", {}, {"status": "NotSignedIn"}, id="signOut"),
    pytest.param("setEditorInfo", init_options("Qt Creator", "Copilot"), "OK",
                 id="setEditorInfo"),
    pytest.param("getVersion", None, "VERSION", id="getVersion-no-params"),
    pytest.param("notifyShown", {"uuid": "u-1"}, "OK", id="notifyShown"),
]


@pytest.mark.parametrize("method,params,wanted", STUBS)
async def test_account_and_feedback_stubs(start_lsp, method, params, wanted):
    client = await start_lsp(init_options("Neovim", "copilot.lua"), ["--stdio"])
    got = await request(client, method, params)
    if wanted == "VERSION":
        version = client.init_result.server_info.version  # type: ignore[attr-defined]
        assert got == {"version": version} and version, got
    else:
        assert got == wanted, got


async def test_accepted_and_rejected_completions_are_counted(start_lsp):
    client = await start_lsp(init_options("Neovim", "copilot.lua"), ["--stdio"])
    for method, params in [("notifyShown", {"uuid": "u-1"}),
                           ("notifyAccepted", {"uuid": "u-1", "acceptedLength": 5}),
                           ("notifyShown", {"uuid": "u-2"}),
                           ("notifyRejected", {"uuids": ["u-2", "u-3"]})]:
        assert (await request(client, method, params)) == "OK", method
    await until_logged(client, "rejected 2)")
    last = client.log_messages[-1].message
    assert last == ("qore: completion u-2, u-3 rejected "
                    "(shown 2, accepted 1, partially accepted 0, rejected 2)"), last
    assert any(m.message.startswith("qore: completion u-1 accepted (shown 1, accepted 1,")
               for m in client.log_messages), [m.message for m in client.log_messages]


async def test_unknown_requests_are_method_not_found(start_lsp):
    client = await start_lsp(init_options("Neovim", "copilot.lua"), ["--stdio"])
    with pytest.raises(JsonRpcException) as error:
        await request(client, "getPanelCompletions", {"doc": {}})
    assert error.value.code == METHOD_NOT_FOUND


async def test_a_blank_completion_is_no_item(start_lsp, workspace, provider):
    provider.queue(sse(infill_stream(["   ", "\n"])))
    client = await start_lsp(init_options("Neovim", "copilot.lua"), ["--stdio"])
    uri = await open_and_edit(client, workspace)
    assert (await request(client, "getCompletions", copilot_lua(uri, 2))) == {
        "completions": []}
    assert len(provider.seen) == 1  # asked, and the answer was blank


async def test_a_superseded_cycling_request_is_cancelled(start_lsp, workspace, provider):
    provider.queue(sse(infill_stream(["old"]), stall=True), sse(infill_stream(["a + b"])))
    client = await start_lsp(init_options("Qt Creator", "Copilot"), ["--stdio"])
    uri = await open_and_edit(client, workspace)
    old = asyncio.ensure_future(request(client, "getCompletionsCycling", qt_creator(uri, 2)))
    [first] = await asyncio.to_thread(provider.wait_for, 1)
    new = await request(client, "getCompletionsCycling", qt_creator(uri, 2))
    assert [item["displayText"] for item in new["completions"]] == ["a + b"], new
    with pytest.raises(JsonRpcException) as error:
        await old
    assert error.value.code == REQUEST_CANCELLED
    assert await asyncio.to_thread(first.done.wait, 30)
    assert first.closed_by_client


async def test_the_plugins_housekeeping_notifications_change_nothing_but_the_roots(
    start_lsp, workspace, provider
):
    """copilot.lua's `$/setTrace` and Copilot's own settings in didChangeConfiguration are
    taken without a warning; a workspace folder added later brings its `.qoreignore` along."""
    provider.queue(sse(infill_stream(["a + b"])), sse(infill_stream(["leak"])))
    client = await start_lsp(init_options("Neovim", "copilot.lua"), ["--stdio"])
    plain_json(client)
    client.protocol.notify("$/setTrace", {"value": "off"})
    client.protocol.notify("workspace/didChangeConfiguration", {"settings": {
        "http": {"proxy": None, "proxyStrictSSL": None}, "github-enterprise": {"uri": None},
        "telemetry": {"telemetryLevel": "off"}}})
    other = workspace.project.parent / "other"
    other.mkdir()
    (other / ".qoreignore").write_text("secret.py\n")
    client.protocol.notify("workspace/didChangeWorkspaceFolders", {"event": {
        "added": [{"uri": other.as_uri(), "name": "other"}], "removed": []}})
    secret = other / "secret.py"
    secret.write_text(ADD_PY)
    doc = {"uri": secret.as_uri(), "languageId": "python", "version": 1, "text": ADD_PY}
    client.protocol.notify("textDocument/didOpen", {"textDocument": doc})
    assert await request(client, "getCompletions", copilot_lua(secret.as_uri(), 1)) == {
        "completions": []}
    uri = await open_and_edit(client, workspace)
    result = await request(client, "getCompletions", copilot_lua(uri, 2))
    assert [item["displayText"] for item in result["completions"]] == ["a + b"], result
    assert len(provider.seen) == 1, provider.seen  # the ignored file was never sent
    assert client.messages == [], [m.message for m in client.messages]  # no warning shown
