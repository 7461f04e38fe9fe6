"""A malformed client message, written as raw bytes to `qore lsp`'s stdin.

Proves: a correctly framed message whose body is not JSON gets a -32700 (parse error)
response, and the server lives on: it answers `initialize` and `shutdown` afterwards and exits
0 on `exit`.
"""

from __future__ import annotations

import asyncio
import json

from conftest import qore_bin

PARSE_ERROR = -32700


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


async def read_message(stdout: asyncio.StreamReader) -> dict:
    length = None
    while True:
        line = await stdout.readline()
        if not line:
            raise AssertionError("the server closed its stdout")
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode("ascii").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    assert length is not None, "a message without Content-Length"
    return json.loads(await stdout.readexactly(length))


async def response_to(stdout: asyncio.StreamReader, msg_id) -> dict:
    """The response with `msg_id` (notifications and other messages skipped)."""
    while True:
        message = await read_message(stdout)
        if "method" not in message and message.get("id") == msg_id:
            return message


def request(msg_id, method: str, params) -> bytes:
    return frame(json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method,
                             "params": params}).encode())


async def test_a_framed_non_json_message_is_a_parse_error_and_the_server_lives_on(workspace):
    proc = await asyncio.create_subprocess_exec(
        qore_bin(), "lsp", env=workspace.env(), stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(frame(b"this is {not json"))
        await proc.stdin.drain()
        error = await asyncio.wait_for(response_to(proc.stdout, None), 30)
        assert error["error"]["code"] == PARSE_ERROR, error
        proc.stdin.write(request(1, "initialize", {"processId": None, "rootUri": None,
                                                   "capabilities": {}}))
        await proc.stdin.drain()
        init = await asyncio.wait_for(response_to(proc.stdout, 1), 30)
        caps = init["result"]["capabilities"]
        for provider in ("inlineCompletionProvider", "completionProvider", "codeActionProvider"):
            assert caps.get(provider) not in (None, False), caps
        assert "qore.refactor" in caps["executeCommandProvider"]["commands"], caps
        sync = caps.get("textDocumentSync")
        assert sync == 2 or (isinstance(sync, dict) and sync.get("change") == 2), sync
        proc.stdin.write(frame(b'{"jsonrpc": "2.0", "method": "initialized", "params": {}}'))
        proc.stdin.write(request(2, "shutdown", None))
        await proc.stdin.drain()
        assert "error" not in await asyncio.wait_for(response_to(proc.stdout, 2), 30)
        proc.stdin.write(frame(b'{"jsonrpc": "2.0", "method": "exit"}'))
        await proc.stdin.drain()
        assert await asyncio.wait_for(proc.wait(), 30) == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
