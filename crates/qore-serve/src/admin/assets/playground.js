// The playground: one chat request through a key the operator pastes (keys are never
// stored in the page), streamed: each delta is appended as text as it comes.
"use strict";
(() => {
  const el = Q.el;

  async function stream(response, out) {
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let end;
      while ((end = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, end).trim();
        buffer = buffer.slice(end + 1);
        if (!line.startsWith("data:") || line === "data: [DONE]") continue;
        const chunk = JSON.parse(line.slice(5));
        const delta = chunk.choices && chunk.choices[0] && chunk.choices[0].delta;
        if (delta && delta.content) out.textContent += delta.content;
      }
    }
  }

  Q.views.playground = async function playgroundView() {
    const key = el("input", { id: "pg-key", type: "password", autocomplete: "off", placeholder: "qore-…" });
    const model = el("input", { id: "pg-model", placeholder: "agent or provider/model", list: "pg-choices" });
    const choices = el("datalist", { id: "pg-choices" });
    // What may be asked: the configured agents and models (one list request each).
    Promise.all([Q.api("/agents"), Q.api("/models")]).then(([a, m]) => choices.replaceChildren(
      ...a.agents.map((x) => el("option", { value: x.name })), ...m.models.map((x) => el("option", { value: x.name }))))
      .catch(() => {});
    const prompt = el("textarea", { id: "pg-prompt", rows: "3" });
    const out = el("pre", { id: "pg-out", "aria-live": "polite" });
    const form = el("form", { id: "pg-form", "aria-label": "Send a chat request" }, Q.field("API key", key),
      Q.field("Agent or model", model), Q.field("Prompt", prompt), el("button", { type: "submit", text: "Send" }));
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      out.textContent = "";
      const url = Q.API.replace(/admin\/v1$/, "v1/chat/completions");
      const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json",
        authorization: "Bearer " + key.value }, body: JSON.stringify({ model: model.value, stream: true,
        messages: [{ role: "user", content: prompt.value }] }) });
      if (!response.ok) { out.textContent = "HTTP " + response.status + ": " + await response.text(); return; }
      await stream(response, out);
    });
    Q.view.replaceChildren(el("h1", { text: "Playground" }), form, choices, out);
  };
})();
