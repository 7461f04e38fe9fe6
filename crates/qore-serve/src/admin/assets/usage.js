// The usage view: totals summed by the server (`by=total`), the per-UTC-day chart (vendored
// uPlot) and tables per key, model and agent, all for one filter (key id, first and last
// UTC day): the same sums as `qore serve usage` for that filter.
"use strict";
(() => {
  const el = Q.el;
  const FIELDS = [["Requests", "requests"], ["Errors", "errors"], ["Tokens in", "tokens_in"],
    ["Tokens out", "tokens_out"], ["Cost", "cost_usd"]];
  const counts = [["Requests", (r) => r.requests, 1], ["Errors", (r) => r.errors, 1],
    ["Tokens in", (r) => r.tokens_in, 1], ["Tokens out", (r) => r.tokens_out, 1],
    ["Cost", (r) => Q.money(r.cost_usd), 1]];

  // The chart has an empty day before the first and after the last, so a single day's
  // point is drawn as a day, not against a range of years.
  function chart(box, rows) {
    if (!window.uPlot || !rows.length) return;
    const day = (r) => Date.parse(r.day + "T00:00:00Z") / 1000;
    const xs = [day(rows[0]) - 86400, ...rows.map(day), day(rows[rows.length - 1]) + 86400];
    const series = (f) => [null, ...rows.map(f), null];
    const width = Math.max(280, Math.min(box.clientWidth || 800, 1100));
    new uPlot({ width, height: 260, tzDate: (ts) => uPlot.tzDate(new Date(ts * 1e3), "Etc/UTC"),
      series: [{}, { label: "tokens in", stroke: "#2563eb" }, { label: "tokens out", stroke: "#16a34a" },
        { label: "requests", stroke: "#9333ea", scale: "n" }],
      // Ticks on whole UTC days, labelled YYYY-MM-DD.
      axes: [{ incrs: [1, 2, 7, 14, 30, 91, 365].map((d) => d * 86400),
        values: (u, ticks) => ticks.map((ts) => new Date(ts * 1000).toISOString().slice(0, 10)) },
      {}, { scale: "n", side: 1 }] },
    [xs, series((r) => r.tokens_in), series((r) => r.tokens_out), series((r) => r.requests)], box);
  }

  Q.views.usage = async function usageView() {
    const key = el("input", { id: "usage-key", placeholder: "key id" });
    const since = el("input", { id: "usage-since", type: "date" });
    const until = el("input", { id: "usage-until", type: "date" });
    const form = el("form", { id: "usage-filter", "aria-label": "Usage filter" }, Q.field("Key id", key),
      Q.field("First UTC day", since), Q.field("Last UTC day", until), el("button", { type: "submit", text: "Show" }));
    const out = el("div");
    async function load() {
      const q = new URLSearchParams();
      if (key.value.trim()) q.set("key", key.value.trim());
      if (since.value) q.set("since", since.value);
      if (until.value) q.set("until", until.value);
      const [total, days, keys, models, agents] = await Promise.all(["total", "day", "key", "model", "agent"]
        .map((by) => Q.api("/usage?by=" + by + (q.size ? "&" + q : ""))));
      const sums = total.rows[0] || {};
      const totals = el("div", { class: "totals", id: "usage-totals" }, ...FIELDS.map(([label, f]) =>
        el("div", {}, el("div", { text: label }), el("strong", { "data-total": f,
          "data-value": String(sums[f] ?? 0),
          text: f === "cost_usd" ? Q.money(sums[f] ?? 0) : String(sums[f] ?? 0) }))));
      const box = el("div", { id: "chart" });
      out.replaceChildren(el("p", { text: "Days are UTC dates (zone: " + days.zone + ")." }), totals, box,
        el("h2", { text: "Per key" }), Q.table([["Key id", (r) => r.key_id || "(none)"], ...counts], keys.rows, null, "Usage per key"),
        el("h2", { text: "Per model" }), Q.table([["Model", (r) => r.model], ...counts], models.rows, null, "Usage per model"),
        el("h2", { text: "Per agent" }), Q.table([["Agent", (r) => r.agent || "(none)"], ...counts], agents.rows, null, "Usage per agent"));
      chart(box, days.rows);
    }
    form.addEventListener("submit", (e) => { e.preventDefault(); load().catch((err) =>
      out.replaceChildren(el("p", { class: "error", role: "alert", text: err.message }))); });
    Q.view.replaceChildren(el("h1", { text: "Usage" }), form, out);
    await load();
  };
})();
