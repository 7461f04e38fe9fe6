// The request log view: filters, older pages (cursor `before`), and one row opened in full
// (fetched only then) with a link to its conversation when the request had a session.
"use strict";
(() => {
  const el = Q.el;

  async function openRow(detail, row) {
    const full = await Q.api("/requests/" + encodeURIComponent(row.id));
    const lines = Object.entries(full).filter(([, v]) => v !== null && v !== "")
      .map(([k, v]) => k + ": " + (k === "at_ms" ? Q.when(v) : k === "cost_usd" ? Q.money(v) : v)).join("\n");
    const parts = [el("h2", { text: "Request " + full.id, tabindex: "-1" })];
    if (full.session_id) {
      parts.push(el("p", {}, el("a", { id: "log-conversation",
        href: "#conversations/" + encodeURIComponent(full.session_id), text: "Open its conversation" })));
    }
    parts.push(el("pre", { text: lines }));
    detail.replaceChildren(...parts);
    detail.firstChild.focus();
  }

  Q.views.log = async function logView() {
    const fields = ["key", "model", "agent"].map((f) => el("input", { id: "log-" + f, placeholder: f }));
    const status = el("select", { id: "log-status" },
      el("option", { value: "", text: "any status" }), el("option", { value: "ok", text: "ok" }),
      el("option", { value: "failed", text: "failed" }));
    const list = el("div");
    const detail = el("div", { id: "log-detail" });
    let before = null;
    async function load(more) {
      const q = new URLSearchParams({ limit: "50" });
      for (const input of fields) if (input.value) q.set(input.id.slice(4), input.value);
      if (status.value) q.set("status", status.value);
      if (more && before) q.set("before", before);
      const page = await Q.api("/requests?" + q);
      before = page.next;
      const t = Q.table([["Time", (r) => Q.when(r.at_ms)], ["Status", (r) => r.status, 1], ["Model", (r) => r.model],
        ["Agent", (r) => r.agent], ["Key", (r) => r.key_id.slice(0, 10)], ["Error", (r) => r.error_kind],
        ["In", (r) => r.tokens_in, 1], ["Out", (r) => r.tokens_out, 1], ["Cost", (r) => Q.money(r.cost_usd), 1],
        ["ms", (r) => r.duration_ms, 1]], page.requests, (row) => openRow(detail, row), "Requests, newest first");
      const next = el("button", { type: "button", id: "log-older", text: "Older", onclick: () => load(true) });
      next.hidden = !page.next;
      list.replaceChildren(t, next);
    }
    const form = el("form", { id: "log-filter", "aria-label": "Filter the log" },
      ...fields.map((f) => Q.field(f.id.slice(4)[0].toUpperCase() + f.id.slice(5), f)), Q.field("Status", status),
      el("button", { type: "submit", text: "Filter" }));
    form.addEventListener("submit", (e) => { e.preventDefault(); load(false); });
    Q.view.replaceChildren(el("h1", { text: "Request log" }), form, list, detail);
    await load(false);
  };
})();
