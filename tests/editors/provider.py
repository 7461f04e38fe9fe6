"""A loopback LLM provider for the editor tests (stdlib http.server, one thread per request).

Promises: each POST takes the next queued `Reply`, else the `standing` reply (which stays:
a client that retries meets it every time), else a 500 saying nothing is queued; and it
records a `Seen` (path, JSON body, whether the client closed the connection before the reply
ended). A reply is sent with chunked transfer encoding cut at awkward places
(1..7 bytes, seeded), so frames, JSON and UTF-8 sequences all get split. A stalling reply
sends its first bytes, then waits for the client to hang up (recording that it did) or for
`stall_limit` seconds. `wait_for(n)` blocks until n requests have arrived.
"""

from __future__ import annotations

import dataclasses
import http.server
import json
import random
import select
import socket
import threading


@dataclasses.dataclass
class Reply:
    status: int
    content_type: str
    body: bytes
    stall: bool = False  # send a few bytes, then hang until the client closes


@dataclasses.dataclass
class Seen:
    path: str
    body: dict
    closed_by_client: bool = False
    done: threading.Event = dataclasses.field(default_factory=threading.Event)


def sse(body: bytes, stall: bool = False) -> Reply:
    return Reply(200, "text/event-stream", body, stall)


class Provider:
    def __init__(self, stall_limit: float = 30.0) -> None:
        self.replies: list[Reply] = []
        self.standing: Reply | None = None
        self.seen: list[Seen] = []
        self.stall_limit = stall_limit
        self._lock = threading.Condition()
        provider = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                provider._serve(self)

            do_GET = do_POST

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def queue(self, *replies: Reply) -> None:
        with self._lock:
            self.replies.extend(replies)

    def wait_for(self, n: int, timeout: float = 20.0) -> list[Seen]:
        """The first n requests, once they have arrived (AssertionError after `timeout`)."""
        with self._lock:
            if not self._lock.wait_for(lambda: len(self.seen) >= n, timeout):
                raise AssertionError(f"provider saw {len(self.seen)} requests, waited for {n}")
            return self.seen[:n]

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _serve(self, handler: http.server.BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            body = {"unparsed": raw.decode("utf-8", "replace")}
        seen = Seen(handler.path, body)
        with self._lock:
            reply = self.replies.pop(0) if self.replies else self.standing
            self.seen.append(seen)
            self._lock.notify_all()
        if reply is None:
            reply = Reply(500, "application/json", b'{"error":{"message":"no reply queued"}}')
        try:
            self._send(handler, reply, seen)
        except (BrokenPipeError, ConnectionResetError):
            seen.closed_by_client = True
        finally:
            seen.done.set()

    def _send(self, handler, reply: Reply, seen: Seen) -> None:
        handler.send_response(reply.status)
        handler.send_header("Content-Type", reply.content_type)
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        rng = random.Random(len(reply.body))
        body, at = reply.body, 0
        stop = min(len(body), 40) if reply.stall else len(body)
        while at < stop:
            n = rng.randint(1, 7)
            piece = body[at : min(at + n, stop)]
            handler.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            handler.wfile.flush()
            at += len(piece)
        if reply.stall:
            seen.closed_by_client = _wait_for_hangup(handler.connection, self.stall_limit)
            return
        handler.wfile.write(b"0\r\n\r\n")
        handler.wfile.flush()


def _wait_for_hangup(conn: socket.socket, limit: float) -> bool:
    """True once the peer closes `conn` (EOF or reset), False after `limit` seconds."""
    ready, _, _ = select.select([conn], [], [], limit)
    if not ready:
        return False
    try:
        return conn.recv(1) == b""
    except (ConnectionResetError, OSError):
        return True
