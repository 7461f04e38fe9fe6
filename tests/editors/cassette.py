"""Recorded provider replies from ../shared/fixtures/rig-cassettes, as bytes.

Promises: `recorded(rel)` is the status, content type and exact body bytes of the first
exchange's response in `rig-cassettes/<rel>`; `chat_stream(text)` is a llama.cpp
`/v1/chat/completions` stream in the recorded envelope (the recording's own chunks, with the
content deltas replaced by `text` cut into pieces); `infill_stream(pieces)` is a llama.cpp
`/infill` stream (no recording of that endpoint exists in the fixtures; the shape is
llama.cpp's, the same as crates/qore-cli/tests/cli_complete.rs builds).

Only the two YAML shapes the recordings use for a body are read: a `|+` block and a
single-quoted scalar. Anything else is an error naming the file.
"""

from __future__ import annotations

import json
import os
import pathlib

REPO = pathlib.Path(__file__).resolve().parents[2]

# A recorded llama.cpp chat stream (reasoning deltas, then the content "pong", then timings).
PONG = "llamacpp/raw_stream_capture_matrix/stream_raw_preserves_llamacpp_timings.yaml"
# A recorded llama.cpp 500 with its JSON error envelope.
SERVER_ERROR = "llamacpp/error_matrix/tools_without_jinja.yaml"


def fixtures_dir() -> pathlib.Path:
    """QORE_FIXTURES, else ../shared/fixtures beside the repository."""
    env = os.environ.get("QORE_FIXTURES")
    path = pathlib.Path(env) if env else REPO.parent / "shared" / "fixtures"
    if not (path / "rig-cassettes").is_dir():
        raise FileNotFoundError(
            f"recorded fixtures not found at {path} (set QORE_FIXTURES)"
        )
    return path


def recorded(rel: str) -> tuple[int, str, bytes]:
    """(status, content type, body) of the first response in `rig-cassettes/<rel>`."""
    path = fixtures_dir() / "rig-cassettes" / rel
    lines = path.read_text(encoding="utf-8").split("\n")
    then = lines.index("then:")
    status, ctype, body = None, "application/json", None
    i = then + 1
    while i < len(lines) and lines[i] != "---":
        line = lines[i]
        if line.startswith("  status: "):
            status = int(line.split(":", 1)[1])
        elif line.strip() == "- name: content-type":
            ctype = lines[i + 1].split("value:", 1)[1].strip()
        elif line == "  body: |+":
            block = []
            i += 1
            while i < len(lines) and (lines[i].startswith("    ") or lines[i] == ""):
                block.append(lines[i][4:])
                i += 1
            while block and block[-1] == "" and (i >= len(lines) or lines[i] == "---"):
                block.pop()  # the file's own trailing newline is not the body's
            body = "\n".join(block) + "\n"
            continue
        elif line.startswith("  body: '") and line.endswith("'"):
            body = line[len("  body: '") : -1].replace("''", "'")
        i += 1
    if status is None or body is None:
        raise ValueError(f"{path}: no response status and body found")
    return status, ctype, body.encode("utf-8")


def chat_stream(text: str, piece: int = 3) -> bytes:
    """`text` as a llama.cpp chat stream, in the envelope of the recorded PONG stream."""
    _, _, body = recorded(PONG)
    events = [e for e in body.decode("utf-8").split("\n\n") if e.strip()]
    out, replaced = [], False
    for event in events:
        data = event[len("data: ") :]
        chunk = json.loads(data) if data.startswith("{") else None
        choices = (chunk or {}).get("choices") or [{}]
        delta = choices[0].get("delta", {})
        if "reasoning_content" in delta:
            continue  # a completion model has no reasoning to show
        if isinstance(delta.get("content"), str) and delta["content"]:
            if not replaced:
                for start in range(0, len(text), piece):
                    delta["content"] = text[start : start + piece]
                    compact = json.dumps(chunk, separators=(",", ":"), ensure_ascii=False)
                    out.append("data: " + compact)
                replaced = True
            continue
        out.append(event)
    return ("\n\n".join(out) + "\n\n").encode("utf-8")


def infill_stream(pieces: list[str]) -> bytes:
    """llama.cpp `/infill` streaming: one content chunk per piece, then the summary."""

    def chunk(content: str, n: int) -> dict:
        return {"index": 0, "content": content, "tokens": [1], "stop": False,
                "id_slot": -1, "tokens_predicted": n, "tokens_evaluated": 24}

    last = {"index": 0, "content": "", "tokens": [], "id_slot": 0, "stop": True,
            "model": "qwen2.5-coder", "tokens_predicted": len(pieces),
            "tokens_evaluated": 24, "stop_type": "eos", "stopping_word": "",
            "tokens_cached": 26,
            "timings": {"cache_n": 20, "prompt_n": 4, "predicted_n": len(pieces)}}
    events = [chunk(p, i + 1) for i, p in enumerate(pieces)] + [last]
    return "".join(f"data: {json.dumps(e)}\n\n" for e in events).encode("utf-8")
