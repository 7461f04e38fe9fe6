"""A scripted upstream provider for qore serve's tests: a threaded stdlib HTTP server on
127.0.0.1:0 speaking OpenAI Chat Completions (`POST /v1/chat/completions`, streaming SSE or
one JSON body, as the request asks; `GET /v1/models`; and the legacy `POST /v1/completions`,
its text in `choices[].text`).

Promises: each chat request takes the next queued `Reply` (`script(...)`), else the
`standing` reply (a `Reply`, or a function of the request body returning one; it stays, so a
client that retries meets it every time), else a 500 saying nothing is scripted. Every
request is recorded as a `Seen` (method, path, headers, JSON body) before it is answered;
`chats()` are the POSTs to either completions path, and `wait_for(n)` blocks until n of
them have arrived. A text or tool-call reply is
rendered as the request asks: SSE chunks when `stream` is true (a usage chunk only when
`stream_options.include_usage` is), else one `chat.completion` body. `reset()` clears the
script, the standing reply and the record between tests.
"""

from __future__ import annotations

import dataclasses
import http.server
import json
import threading
import time
import typing

MODELS = ["gpt-test", "claude-test"]


@dataclasses.dataclass
class Reply:
    """One answer: text, tool calls, or an error status with a JSON body."""

    text: str | None = None
    # (call id, function name, arguments as a JSON string)
    tool_calls: list[tuple[str, str, str]] = dataclasses.field(default_factory=list)
    status: int = 200
    error: dict | None = None  # the error body, for a status other than 200
    headers: dict[str, str] = dataclasses.field(default_factory=dict)
    usage: tuple[int, int] = (11, 7)  # (prompt_tokens, completion_tokens)


def text(answer: str, usage: tuple[int, int] = (11, 7)) -> Reply:
    return Reply(text=answer, usage=usage)


def tool_call(name: str, arguments: dict, call_id: str = "call_abc123") -> Reply:
    return Reply(tool_calls=[(call_id, name, json.dumps(arguments))])


def error(
    status: int,
    message: str,
    kind: str = "invalid_request_error",
    code: str | None = None,
    headers: dict[str, str] | None = None,
) -> Reply:
    body = {"error": {"message": message, "type": kind, "param": None, "code": code}}
    return Reply(status=status, error=body, headers=headers or {})


def rate_limited(retry_after: int) -> Reply:
    return error(
        429,
        "Rate limit reached for gpt-test: try again later.",
        kind="requests",
        code="rate_limit_exceeded",
        headers={"Retry-After": str(retry_after)},
    )


def context_overflow() -> Reply:
    return error(
        400,
        "This model's maximum context length is 8192 tokens. However, your messages resulted"
        " in 9001 tokens. Please reduce the length of the messages.",
        code="context_length_exceeded",
    )


@dataclasses.dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: typing.Any


Standing = typing.Union[Reply, typing.Callable[[dict], Reply], None]


class Upstream:
    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.standing: Standing = None
        self.seen: list[Seen] = []
        self._cond = threading.Condition()
        upstream = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                upstream._record(self, None)
                if self.path.rstrip("/").endswith("/models"):
                    data = [{"id": m, "object": "model", "owned_by": "scripted"} for m in MODELS]
                    self._json(200, {"object": "list", "data": data})
                else:
                    self._json(404, {"error": {"message": f"no {self.path}", "type": "not_found"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"null")
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                upstream._record(self, body)
                if not is_answer(self.path):
                    self._json(404, {"error": {"message": f"no {self.path}", "type": "not_found"}})
                    return
                reply = upstream._next(body if isinstance(body, dict) else {})
                if reply.status != 200:
                    self._json(reply.status, reply.error or {}, reply.headers)
                elif not isinstance(body, dict):
                    self._json(400, {"error": {"message": "not JSON", "type": "invalid_request_error"}})
                elif not self.path.split("?")[0].rstrip("/").endswith("/chat/completions"):
                    legacy = legacy_completion(reply, body)
                    if body.get("stream"):
                        self._sse([legacy])
                    else:
                        self._json(200, legacy)
                elif body.get("stream"):
                    self._sse(stream_chunks(reply, body))
                else:
                    self._json(200, completion(reply, body))

            def _json(self, status: int, obj, headers: dict[str, str] | None = None) -> None:
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def _sse(self, chunks: list[dict]) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                try:
                    for chunk in chunks:
                        self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                        self.wfile.flush()
                    self.wfile.write(b"data: [DONE]\n\n")
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    # -- scripting --------------------------------------------------------------------------

    def script(self, *replies: Reply) -> None:
        with self._cond:
            self.replies.extend(replies)

    def reset(self) -> None:
        with self._cond:
            self.replies.clear()
            self.standing = None
            self.seen.clear()

    def chats(self) -> list[Seen]:
        """The chat requests received so far."""
        with self._cond:
            return [s for s in self.seen if s.method == "POST" and is_answer(s.path)]

    def wait_for(self, n: int, seconds: float = 30.0) -> list[Seen]:
        deadline = time.monotonic() + seconds
        with self._cond:
            while True:
                chats = [s for s in self.seen if s.method == "POST" and is_answer(s.path)]
                if len(chats) >= n:
                    return chats
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"the upstream got {len(chats)} chat requests, not {n}")
                self._cond.wait(left)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    # -- internals --------------------------------------------------------------------------

    def _record(self, handler, body) -> None:
        seen = Seen(handler.command, handler.path, dict(handler.headers.items()), body)
        with self._cond:
            self.seen.append(seen)
            self._cond.notify_all()

    def _next(self, body: dict) -> Reply:
        with self._cond:
            if self.replies:
                return self.replies.pop(0)
            standing = self.standing
        if callable(standing):
            return standing(body)
        if standing is not None:
            return standing
        return error(500, "the scripted upstream has no reply scripted", kind="server_error")


def is_answer(path: str) -> bool:
    return path.split("?")[0].rstrip("/").endswith("/completions")


def legacy_completion(reply: Reply, body: dict) -> dict:
    return {
        "id": "cmpl-scripted",
        "object": "text_completion",
        "created": int(time.time()),
        "model": body.get("model") or "gpt-test",
        "choices": [{"index": 0, "text": reply.text or "", "finish_reason": "stop"}],
        "usage": _usage(reply),
    }


def _usage(reply: Reply) -> dict:
    p, c = reply.usage
    return {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}


def completion(reply: Reply, body: dict) -> dict:
    message: dict = {"role": "assistant", "content": reply.text}
    if reply.tool_calls:
        message["tool_calls"] = [
            {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}
            for cid, name, args in reply.tool_calls
        ]
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model") or "gpt-test",
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if reply.tool_calls else "stop",
            }
        ],
        "usage": _usage(reply),
    }


def pieces(s: str, n: int = 3) -> list[str]:
    """`s` cut into up to n pieces (so a stream has more than one delta)."""
    step = max(1, -(-len(s) // n))
    return [s[i : i + step] for i in range(0, len(s), step)] or [""]


def stream_chunks(reply: Reply, body: dict) -> list[dict]:
    model = body.get("model") or "gpt-test"
    created = int(time.time())

    def chunk(delta: dict, finish: str | None = None) -> dict:
        return {
            "id": "chatcmpl-scripted",
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    out = [chunk({"role": "assistant", "content": ""})]
    if reply.text:
        out += [chunk({"content": p}) for p in pieces(reply.text)]
    for i, (cid, name, args) in enumerate(reply.tool_calls):
        head = {"index": i, "id": cid, "type": "function", "function": {"name": name, "arguments": ""}}
        out.append(chunk({"tool_calls": [head]}))
        for p in pieces(args):
            out.append(chunk({"tool_calls": [{"index": i, "function": {"arguments": p}}]}))
    out.append(chunk({}, "tool_calls" if reply.tool_calls else "stop"))
    if (body.get("stream_options") or {}).get("include_usage"):
        out.append(
            {
                "id": "chatcmpl-scripted",
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [],
                "usage": _usage(reply),
            }
        )
    return out
