// The conversations view: stored conversations newest first (search, cursor pages with
// `after`), and one opened in full (`#conversations/ID`): every message with its role, its
// text and its tool calls (name, id, arguments) or the tool call it answers. Stored text
// only ever goes in with textContent.
"use strict";
(() => {
  const el = Q.el;
  const open = (id) => { location.hash = "#conversations/" + encodeURIComponent(id); };

  function message(m, n) {
    const head = el("header", {}, el("strong", { class: "role", text: m.role }));
    if (m.tool_call_id) head.append(el("span", { text: " answers tool call " + m.tool_call_id }));
    if (m.is_error) head.append(el("span", { class: "error", text: " (error)" }));
    const parts = [head];
    if (m.text) parts.push(el("pre", { class: "text", text: m.text }));
    for (const call of m.tool_calls || []) {
      parts.push(el("div", { class: "tool-call" },
        el("div", {}, el("span", { text: "Tool call " }), el("code", { class: "tool-name", text: call.name }),
          el("span", { class: "muted", text: " " + (call.id || "") })),
        el("pre", { class: "tool-args", text: typeof call.arguments === "string"
          ? call.arguments : JSON.stringify(call.arguments, null, 2) })));
    }
    return el("article", { class: "message " + m.role, "aria-label": "Message " + (n + 1) + ", " + m.role }, ...parts);
  }

  async function one(id) {
    const c = await Q.api("/conversations/" + encodeURIComponent(id));
    const facts = Q.table([["Agent", (x) => x.agent], ["Model", (x) => x.model],
      ["Created", (x) => Q.when(x.created_at_ms)], ["Updated", (x) => Q.when(x.updated_at_ms)],
      ["Messages", (x) => x.messages.length, 1]], [c], null, "About this conversation");
    Q.view.replaceChildren(el("p", {}, el("a", { href: "#conversations", text: "← All conversations" })),
      el("h1", { text: c.title || c.name || "Conversation " + c.id }),
      el("p", { class: "muted", text: (c.name ? "Session " + c.name + ", id " : "Id ") + c.id }), facts,
      el("section", { id: "conversation", "aria-label": "Messages" }, ...c.messages.map(message)));
  }

  Q.views.conversations = async function conversationsView(id) {
    if (id) return one(id);
    const search = el("input", { id: "conv-search", type: "search", placeholder: "title or text" });
    const list = el("div");
    const more = el("button", { type: "button", id: "conv-more", text: "Older" });
    let after = null;
    async function load(next) {
      const q = new URLSearchParams({ limit: "50" });
      if (search.value.trim()) q.set("search", search.value.trim());
      if (next && after) q.set("after", after);
      const page = await Q.api("/conversations?" + q);
      after = page.next;
      more.hidden = !page.next;
      list.replaceChildren(Q.table([["Title", (c) => c.title || "(untitled)"], ["Name", (c) => c.name],
        ["Agent", (c) => c.agent],
        ["Model", (c) => c.model], ["Messages", (c) => c.messages, 1], ["Updated", (c) => Q.when(c.updated_at_ms)]],
      page.conversations, (c) => open(c.id), "Conversations"));
    }
    more.addEventListener("click", () => load(true));
    const form = el("form", { id: "conv-filter", "aria-label": "Search conversations" },
      Q.field("Search", search), el("button", { type: "submit", text: "Search" }));
    form.addEventListener("submit", (e) => { e.preventDefault(); load(false); });
    Q.view.replaceChildren(el("h1", { text: "Conversations" }), form, list, more);
    await load(false);
  };
})();
