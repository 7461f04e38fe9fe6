// A loopback llama.cpp server for the extension's tests: each request takes the next reply
// queued for its path (else a 500 saying nothing is queued) and is recorded with its JSON
// body. Replies are hand-written in llama.cpp's shapes: `/infill` and
// `/v1/chat/completions` streams, and its JSON error envelope.
"use strict";

const http = require("node:http");

/** llama.cpp `/infill` streaming: one content chunk per piece, then the summary. */
function infillStream(pieces) {
  const chunk = (content, n) => ({
    index: 0, content, tokens: [1], stop: false, id_slot: -1, tokens_predicted: n,
    tokens_evaluated: 24,
  });
  const last = {
    index: 0, content: "", tokens: [], id_slot: 0, stop: true, model: "qwen2.5-coder",
    tokens_predicted: pieces.length, tokens_evaluated: 24, stop_type: "eos",
    stopping_word: "", tokens_cached: 26,
    timings: { cache_n: 20, prompt_n: 4, predicted_n: pieces.length },
  };
  const events = [...pieces.map((piece, i) => chunk(piece, i + 1)), last];
  return sse(events.map((event) => JSON.stringify(event)));
}

/** An OpenAI-style chat stream as llama.cpp sends it, `text` cut into 7-character deltas. */
function chatStream(text) {
  const envelope = (delta, finish) => JSON.stringify({
    choices: [{ finish_reason: finish, index: 0, delta }], created: 1767225600,
    id: "chatcmpl-qore-test", model: "tiny", system_fingerprint: "b6000",
    object: "chat.completion.chunk",
  });
  const deltas = [envelope({ role: "assistant", content: null }, null)];
  for (let at = 0; at < text.length; at += 7) {
    deltas.push(envelope({ content: text.slice(at, at + 7) }, null));
  }
  deltas.push(envelope({}, "stop"), "[DONE]");
  return sse(deltas);
}

function sse(datas) {
  return {
    status: 200, contentType: "text/event-stream",
    body: datas.map((data) => `data: ${data}\n\n`).join(""),
  };
}

/** llama.cpp's error envelope. */
function serverError(status, message) {
  return {
    status, contentType: "application/json",
    body: JSON.stringify({ error: { code: status, message, type: "server_error" } }),
  };
}

class Provider {
  constructor() {
    this.queued = new Map(); // path -> replies
    this.seen = [];
    this.server = http.createServer((request, response) => this.serve(request, response));
  }

  /** Listen on a free loopback port; the base URL. */
  async start() {
    await new Promise((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${this.server.address().port}`;
    return this.url;
  }

  queue(path, ...replies) {
    this.queued.set(path, [...(this.queued.get(path) || []), ...replies]);
  }

  serve(request, response) {
    const chunks = [];
    request.on("data", (chunk) => chunks.push(chunk));
    request.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      let body = null;
      try {
        body = text ? JSON.parse(text) : null;
      } catch {
        body = text;
      }
      const path = new URL(request.url, "http://loopback").pathname;
      this.seen.push({ method: request.method, path, body });
      const reply = (this.queued.get(path) || []).shift() ||
        serverError(500, `nothing queued for ${request.method} ${path}`);
      response.writeHead(reply.status, { "content-type": reply.contentType });
      response.end(reply.body);
    });
  }

  close() {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(resolve));
  }
}

module.exports = { Provider, chatStream, infillStream, serverError };
