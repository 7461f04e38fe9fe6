// The keys view: search, create (the secret shown once), and a key opened from its row:
// its model globs, rpm, tpm and token budget changed (PATCH), or the key revoked.
"use strict";
(() => {
  const el = Q.el;
  const globs = (text) => text.split(",").map((s) => s.trim()).filter(Boolean);
  // A limit field: empty is no limit (null), digits a number; anything else is sent as
  // typed, for the server to refuse naming the field.
  const limit = (text) => {
    const t = text.trim();
    return t === "" ? null : /^[0-9]+$/.test(t) ? Number(t) : t;
  };

  function editor(key, done) {
    const input = (id, label, value) => Q.field(label, el("input", { id, value: value ?? "",
      inputmode: id === "edit-models" ? "text" : "numeric" }));
    const form = el("form", { id: "key-edit", "aria-label": "Change the key " + key.name },
      input("edit-models", "Model globs (comma-separated, empty: all)", key.models.join(", ")),
      input("edit-rpm", "Requests per minute (empty: no limit)", key.rpm),
      input("edit-tpm", "Tokens per minute (empty: no limit)", key.tpm),
      input("edit-budget", "Token budget (empty: none)", key.budget_tokens),
      el("button", { type: "submit", text: "Save" }));
    const status = el("p", { id: "key-edit-status", role: "status" });
    const revoke = el("button", { type: "button", id: "key-revoke", class: "danger", text: "Revoke" });
    revoke.disabled = Boolean(key.revoked_at_ms);
    revoke.addEventListener("click", async () => {
      if (!confirm("Revoke the key " + key.name + "?")) return;
      try { await Q.send("/keys/" + encodeURIComponent(key.id) + "/revoke"); done(); } catch (err) {
        status.textContent = err.message;
      }
    });
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      const v = (id) => form.querySelector("#" + id).value;
      try {
        await Q.send("/keys/" + encodeURIComponent(key.id), { models: globs(v("edit-models")),
          rpm: limit(v("edit-rpm")), tpm: limit(v("edit-tpm")), budget_tokens: limit(v("edit-budget")) }, "PATCH");
        status.textContent = "Saved.";
        done(true);
      } catch (err) { status.textContent = err.message; }
    });
    return el("div", { class: "panel" }, el("h2", { text: "Key " + key.name }), form, revoke, status);
  }

  Q.views.keys = async function keysView() {
    const search = el("input", { id: "key-search", type: "search", placeholder: "part of a name" });
    const list = el("div");
    const created = el("div", { role: "status" });
    const edit = el("div", { id: "key-panel" });
    async function load(keep) {
      const page = await Q.api("/keys?limit=200&search=" + encodeURIComponent(search.value));
      if (!keep) edit.replaceChildren();
      list.replaceChildren(Q.table([
        ["Name", (k) => k.name], ["Id", (k) => k.id.slice(0, 10)], ["Models", (k) => k.models.join(", ") || "all"],
        ["rpm", (k) => k.rpm, 1], ["tpm", (k) => k.tpm, 1], ["Budget", (k) => k.budget_tokens, 1],
        ["Created", (k) => Q.when(k.created_at_ms)], ["Revoked", (k) => Q.when(k.revoked_at_ms)],
      ], page.keys, (k) => {
        edit.replaceChildren(editor(k, (saved) => load(saved)));
        edit.querySelector("input").focus();
      }, "Keys"));
    }
    const name = el("input", { id: "key-name", required: "", placeholder: "name" });
    const models = el("input", { id: "key-models", placeholder: "up/*, coder" });
    const form = el("form", { id: "key-create", "aria-label": "Create a key" },
      Q.field("New key name", name), Q.field("Model globs", models), el("button", { type: "submit", text: "Create key" }));
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      try {
        const made = await Q.send("/keys", { name: name.value, models: globs(models.value) });
        created.replaceChildren(el("p", { text: "The key, shown once — copy it now:" }),
          el("p", { class: "secret", id: "new-secret", text: made.key }));
        name.value = ""; load();
      } catch (err) { created.replaceChildren(el("p", { class: "error", text: err.message })); }
    });
    search.addEventListener("change", () => load());
    Q.view.replaceChildren(el("h1", { text: "Keys" }), form, created, Q.field("Search keys", search), list, edit);
    await load();
  };
})();
