// The console of qore serve: one plain script, no framework. Every text that comes from the
// server is put in the page with textContent (never innerHTML); each view makes one list
// request (details only when a row is opened). Login exchanges the admin credential for an
// HttpOnly session cookie: nothing is kept in localStorage.
"use strict";
const API = document.querySelector('meta[name="qore-api"]').content;
const view = document.getElementById("view");

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const child of children) node.append(child);
  return node;
}

async function api(path, options) {
  const response = await fetch(API + path, Object.assign({ credentials: "same-origin" }, options));
  if (response.status === 401) { showLogin(); throw new Error("log in"); }
  const text = await response.text();
  const body = text ? JSON.parse(text) : null;
  if (!response.ok) throw new Error((body && body.error && body.error.message) || response.statusText);
  return body;
}

function post(path, body, method) {
  return api(path, { method: method || "POST", headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body) });
}

function table(columns, rows, onOpen) {
  const head = el("tr", {}, ...columns.map(([name, , num]) => el("th", { text: name, class: num ? "num" : "" })));
  const body = el("tbody");
  for (const row of rows) {
    const tr = el("tr", onOpen ? { class: "row", tabindex: "0" } : {},
      ...columns.map(([, get, num]) => el("td", { text: String(get(row) ?? ""), class: num ? "num" : "" })));
    if (onOpen) {
      tr.addEventListener("click", () => onOpen(row));
      tr.addEventListener("keydown", (e) => { if (e.key === "Enter") onOpen(row); });
    }
    body.append(tr);
  }
  return el("div", { class: "table" }, el("table", {}, el("thead", {}, head), body));
}

function showLogin() {
  document.getElementById("nav").hidden = true;
  document.getElementById("login").hidden = false;
  view.replaceChildren();
}

document.getElementById("login").addEventListener("submit", async (event) => {
  event.preventDefault();
  const error = document.getElementById("login-error");
  error.textContent = "";
  const credential = document.getElementById("credential").value;
  const response = await fetch(API + "/session", { method: "POST", credentials: "same-origin",
    headers: { "content-type": "application/json" }, body: JSON.stringify({ credential }) });
  if (response.ok) {
    document.getElementById("credential").value = "";
    start();
  } else {
    const body = await response.json().catch(() => null);
    error.textContent = (body && body.error && body.error.message) || "refused";
  }
});

document.getElementById("logout").addEventListener("click", async () => {
  await fetch(API + "/session", { method: "DELETE", credentials: "same-origin" });
  showLogin();
});

const when = (ms) => new Date(ms).toISOString().replace("T", " ").slice(0, 19) + " UTC";

async function keysView() {
  const search = el("input", { id: "key-search", "aria-label": "Search keys", placeholder: "search by name" });
  const list = el("div");
  const created = el("div", { role: "status" });
  async function load() {
    const page = await api("/keys?limit=200&search=" + encodeURIComponent(search.value));
    list.replaceChildren(table([
      ["Name", (k) => k.name], ["Id", (k) => k.id.slice(0, 10)], ["Models", (k) => k.models.join(", ") || "all"],
      ["rpm", (k) => k.rpm, 1], ["tpm", (k) => k.tpm, 1], ["Budget", (k) => k.budget_tokens, 1],
      ["Created", (k) => when(k.created_at_ms)], ["Revoked", (k) => k.revoked_at_ms ? when(k.revoked_at_ms) : ""],
    ], page.keys, async (k) => {
      if (!k.revoked_at_ms && confirm("Revoke the key " + k.name + "?")) {
        await post("/keys/" + encodeURIComponent(k.id) + "/revoke"); load();
      }
    }));
  }
  const name = el("input", { id: "key-name", required: "", "aria-label": "New key name", placeholder: "name" });
  const models = el("input", { id: "key-models", "aria-label": "Model globs", placeholder: "models: up/*, coder" });
  const form = el("form", { id: "key-create" }, name, models, el("button", { type: "submit", text: "Create key" }));
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    try {
      const globs = models.value.split(",").map((s) => s.trim()).filter(Boolean);
      const made = await post("/keys", { name: name.value, models: globs });
      created.replaceChildren(el("p", { text: "The key, shown once — copy it now:" }),
        el("p", { class: "secret", id: "new-secret", text: made.key }));
      name.value = ""; load();
    } catch (err) { created.replaceChildren(el("p", { class: "error", text: err.message })); }
  });
  search.addEventListener("change", load);
  view.replaceChildren(el("h1", { text: "Keys" }), form, created, search, list);
  await load();
}

async function usageView() {
  const [days, keys, models, agents] = await Promise.all(
    ["day", "key", "model", "agent"].map((by) => api("/usage?by=" + by)));
  const sum = (f) => days.rows.reduce((n, r) => n + r[f], 0);
  const totals = el("div", { class: "totals", id: "usage-totals" },
    ...[["Requests", "requests"], ["Errors", "errors"], ["Tokens in", "tokens_in"], ["Tokens out", "tokens_out"]]
      .map(([label, f]) => el("div", {}, el("div", { text: label }), el("strong", { "data-total": f, text: String(sum(f)) }))));
  const chart = el("div", { id: "chart" });
  const counts = [["Requests", (r) => r.requests, 1], ["Errors", (r) => r.errors, 1],
    ["Tokens in", (r) => r.tokens_in, 1], ["Tokens out", (r) => r.tokens_out, 1]];
  view.replaceChildren(el("h1", { text: "Usage" }), el("p", { text: "Days are UTC dates (zone: " + days.zone + ")." }),
    totals, chart,
    el("h2", { text: "Per key" }), table([["Key id", (r) => r.key_id || "(none)"], ...counts], keys.rows),
    el("h2", { text: "Per model" }), table([["Model", (r) => r.model], ...counts], models.rows),
    el("h2", { text: "Per agent" }), table([["Agent", (r) => r.agent || "(none)"], ...counts], agents.rows));
  if (window.uPlot && days.rows.length) {
    const xs = days.rows.map((r) => Date.parse(r.day + "T00:00:00Z") / 1000);
    const width = Math.max(300, Math.min(chart.clientWidth || 800, 1100));
    new uPlot({ width, height: 260, tzDate: (ts) => uPlot.tzDate(new Date(ts * 1e3), "Etc/UTC"),
      series: [{}, { label: "tokens in", stroke: "#2563eb" }, { label: "tokens out", stroke: "#16a34a" },
        { label: "requests", stroke: "#9333ea", scale: "n" }],
      axes: [{}, {}, { scale: "n", side: 1 }] },
      [xs, days.rows.map((r) => r.tokens_in), days.rows.map((r) => r.tokens_out), days.rows.map((r) => r.requests)], chart);
  }
}

async function logView() {
  const fields = ["key", "model", "agent"].map((f) => el("input", { id: "log-" + f, "aria-label": f, placeholder: f }));
  const status = el("select", { id: "log-status", "aria-label": "status" },
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
    const page = await api("/requests?" + q);
    before = page.next;
    const t = table([["Time", (r) => when(r.at_ms)], ["Status", (r) => r.status, 1], ["Model", (r) => r.model],
      ["Agent", (r) => r.agent], ["Key", (r) => r.key_id.slice(0, 10)], ["Error", (r) => r.error_kind],
      ["In", (r) => r.tokens_in, 1], ["Out", (r) => r.tokens_out, 1], ["ms", (r) => r.duration_ms, 1]],
    page.requests, openRow);
    const next = el("button", { type: "button", text: "Older", onclick: () => load(true) });
    next.hidden = !page.next;
    list.replaceChildren(t, next);
  }
  async function openRow(row) {
    const full = await api("/requests/" + encodeURIComponent(row.id));
    const lines = Object.entries(full).filter(([, v]) => v !== null && v !== "")
      .map(([k, v]) => k + ": " + (k === "at_ms" ? when(v) : v)).join("\n");
    detail.replaceChildren(el("h2", { text: "Request " + full.id }), el("pre", { text: lines }));
    detail.scrollIntoView();
  }
  const form = el("form", { id: "log-filter" }, ...fields, status, el("button", { type: "submit", text: "Filter" }));
  form.addEventListener("submit", (e) => { e.preventDefault(); load(false); });
  view.replaceChildren(el("h1", { text: "Request log" }), form, list, detail);
  await load(false);
}

async function healthView() {
  const h = await api("/health");
  view.replaceChildren(el("h1", { text: "Health" }), table([["Version", (x) => x.version],
    ["Store", (x) => x.store.backend], ["Store answers", (x) => x.store.answers ? "yes" : "no"],
    ["Uptime (s)", (x) => x.uptime_secs, 1]], [h]));
}

// The playground: one chat request through a key the operator pastes (keys are never
// stored in the page), streamed: each delta is appended as text as it comes.
async function playgroundView() {
  const key = el("input", { id: "pg-key", type: "password", "aria-label": "API key", placeholder: "API key" });
  const model = el("input", { id: "pg-model", "aria-label": "Agent or model", placeholder: "agent or provider/model" });
  const prompt = el("textarea", { id: "pg-prompt", "aria-label": "Prompt", rows: "3" });
  const out = el("pre", { id: "pg-out", "aria-live": "polite" });
  const form = el("form", { id: "pg-form" }, key, model, prompt, el("button", { type: "submit", text: "Send" }));
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    out.textContent = "";
    const url = API.replace(/admin\/v1$/, "v1/chat/completions");
    const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json",
      authorization: "Bearer " + key.value }, body: JSON.stringify({ model: model.value, stream: true,
      messages: [{ role: "user", content: prompt.value }] }) });
    if (!response.ok) { out.textContent = "HTTP " + response.status + ": " + await response.text(); return; }
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
  });
  view.replaceChildren(el("h1", { text: "Playground" }), form, out);
}

const views = { keys: keysView, usage: usageView, log: logView, playground: playgroundView, health: healthView };

async function route() {
  const name = location.hash.slice(1) || "keys";
  try { await (views[name] || keysView)(); } catch (err) {
    if (err.message !== "log in") view.replaceChildren(el("p", { class: "error", text: err.message }));
  }
}

async function start() {
  try { await api("/health"); } catch (err) { if (err.message === "log in") return; }
  document.getElementById("login").hidden = true;
  document.getElementById("nav").hidden = false;
  route();
}

window.addEventListener("hashchange", route);
start();
