// The console's core: plain script, no framework, loaded first (every view file after it
// adds itself to Q.views). Every text that comes from the server is put in the page with
// textContent (never innerHTML); each view makes one list request (a row's details only when
// it is opened). Login exchanges the admin credential for an HttpOnly session cookie:
// nothing is kept in localStorage.
"use strict";
const Q = {
  API: document.querySelector('meta[name="qore-api"]').content,
  view: document.getElementById("view"),
  views: {},
};

Q.el = function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const child of children) node.append(child);
  return node;
};
const el = Q.el;

// One admin API call: the JSON answer; a 401 shows the login form.
Q.api = async function api(path, options) {
  const response = await fetch(Q.API + path, Object.assign({ credentials: "same-origin" }, options));
  if (response.status === 401) { showLogin(); throw new Error("log in"); }
  const text = await response.text();
  const body = text ? JSON.parse(text) : null;
  if (!response.ok) throw new Error((body && body.error && body.error.message) || response.statusText);
  return body;
};

Q.send = function send(path, body, method) {
  return Q.api(path, { method: method || "POST", headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body) });
};

Q.when = (ms) => (ms ? new Date(ms).toISOString().replace("T", " ").slice(0, 19) + " UTC" : "");
// Dollars as the API gives them (a number or null), to 6 places without trailing zeros.
Q.money = (usd) => (usd === null || usd === undefined ? "" : "$" + Number(usd.toFixed(6)));

// A table in a horizontally scrolling box. `columns` are [title, get(row), numeric?,
// wraps?] (a long text column wraps instead of widening the table);
// with `onOpen`, each row is focusable and opens with a click or Enter.
Q.table = function table(columns, rows, onOpen, caption) {
  const kind = (num, wraps) => (num ? "num" : wraps ? "wrap" : "");
  const head = el("tr", {}, ...columns.map(([name, , num, wraps]) =>
    el("th", { text: name, scope: "col", class: kind(num, wraps) })));
  const body = el("tbody");
  for (const row of rows) {
    const tr = el("tr", onOpen ? { class: "row", tabindex: "0" } : {},
      ...columns.map(([, get, num, wraps]) => el("td", { text: String(get(row) ?? ""), class: kind(num, wraps) })));
    if (onOpen) {
      tr.addEventListener("click", () => onOpen(row, tr));
      tr.addEventListener("keydown", (e) => { if (e.key === "Enter") { e.preventDefault(); onOpen(row, tr); } });
    }
    body.append(tr);
  }
  const t = el("table", {}, el("thead", {}, head), body);
  if (caption) t.prepend(el("caption", { class: "visually-hidden", text: caption }));
  if (!rows.length) body.append(el("tr", {}, el("td", { colspan: String(columns.length), text: "nothing yet" })));
  // The box scrolls sideways on a narrow screen: focusable, so arrow keys scroll it too.
  return el("div", { class: "table", tabindex: "0", role: "region", "aria-label": caption || "table" }, t);
};

// Label + control, stacked: every input of a form has a visible name.
Q.field = (label, control) => el("label", { class: "field" }, el("span", { text: label }), control);

function showLogin() {
  document.getElementById("nav").hidden = true;
  document.getElementById("menu").hidden = true;
  document.getElementById("login").hidden = false;
  Q.view.replaceChildren();
}

document.getElementById("login").addEventListener("submit", async (event) => {
  event.preventDefault();
  const error = document.getElementById("login-error");
  error.textContent = "";
  const credential = document.getElementById("credential").value;
  const response = await fetch(Q.API + "/session", { method: "POST", credentials: "same-origin",
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
  await fetch(Q.API + "/session", { method: "DELETE", credentials: "same-origin" });
  showLogin();
});

// The menu button shows the navigation on narrow screens (CSS hides it there otherwise).
const menu = document.getElementById("menu");
menu.addEventListener("click", () => {
  const open = menu.getAttribute("aria-expanded") !== "true";
  menu.setAttribute("aria-expanded", String(open));
  document.getElementById("nav").classList.toggle("open", open);
});

// The skip link moves focus to the view without touching the hash (the hash is the route).
document.getElementById("skip").addEventListener("click", (e) => {
  e.preventDefault();
  document.getElementById("main").focus();
});

// Routes: `#name` or `#name/argument` (a conversation's id).
async function route() {
  const [name, ...rest] = location.hash.slice(1).split("/");
  const arg = rest.length ? decodeURIComponent(rest.join("/")) : null;
  const known = Q.views[name] ? name : "keys";
  for (const a of document.querySelectorAll("#nav a")) {
    if (a.getAttribute("href") === "#" + known) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  menu.setAttribute("aria-expanded", "false");
  document.getElementById("nav").classList.remove("open");
  try { await Q.views[known](arg); } catch (err) {
    if (err.message !== "log in") Q.view.replaceChildren(el("p", { class: "error", role: "alert", text: err.message }));
  }
}

async function start() {
  try { await Q.api("/health"); } catch (err) { if (err.message === "log in") return; }
  document.getElementById("login").hidden = true;
  document.getElementById("nav").hidden = false;
  document.getElementById("menu").hidden = false;
  route();
}

window.addEventListener("hashchange", route);
document.addEventListener("DOMContentLoaded", start);
