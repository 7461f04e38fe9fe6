"""Cancellation as an editor does it: `$/cancelRequest`, and a newer completion request for
the same document while one is in flight.

Proves: the old request is answered with RequestCancelled (-32800) and the provider sees its
HTTP connection closed (the request in flight is dropped, not left to finish); a newer
request gets its own completion.
"""

from __future__ import annotations

import asyncio
import uuid

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from cassette import infill_stream
from conftest import inline_items, inline_params
from provider import sse

REQUEST_CANCELLED = -32800


async def test_cancel_request_drops_the_provider_request(editor, provider):
    provider.queue(sse(infill_stream(["never", " shown"]), stall=True))
    client, uri = await editor()
    msg_id = str(uuid.uuid4())
    pending = asyncio.ensure_future(client.protocol.send_request_async(
        types.TEXT_DOCUMENT_INLINE_COMPLETION, inline_params(uri), msg_id=msg_id
    ))
    [seen] = await asyncio.to_thread(provider.wait_for, 1)
    client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
    with pytest.raises(JsonRpcException) as error:
        await asyncio.wait_for(pending, 30)
    assert error.value.code == REQUEST_CANCELLED
    assert await asyncio.to_thread(seen.done.wait, 30)
    assert seen.closed_by_client


async def test_a_newer_request_cancels_the_older_one(editor, provider):
    provider.queue(
        sse(infill_stream(["old"]), stall=True),
        sse(infill_stream(["a", " + b"])),
    )
    client, uri = await editor()
    old = client.text_document_inline_completion_async(inline_params(uri))
    old_task = asyncio.ensure_future(old)
    [first] = await asyncio.to_thread(provider.wait_for, 1)
    new = await asyncio.wait_for(
        client.text_document_inline_completion_async(inline_params(uri)), 30
    )
    with pytest.raises(JsonRpcException) as error:
        await asyncio.wait_for(old_task, 30)
    assert error.value.code == REQUEST_CANCELLED
    assert [item.insert_text for item in inline_items(new)] == ["a + b"]
    assert await asyncio.to_thread(first.done.wait, 30)
    assert first.closed_by_client
