// Read-only views of what the server was configured with: agents, models, and its health.
"use strict";
(() => {
  const el = Q.el;

  Q.views.agents = async function agentsView() {
    const page = await Q.api("/agents");
    Q.view.replaceChildren(el("h1", { text: "Agents" }), el("p", { class: "muted",
      text: "From the agent profiles (TOML files) the server loaded; change them there." }),
    Q.table([["Name", (a) => a.name], ["Description", (a) => a.description, 0, 1], ["Model", (a) => a.model],
      ["Tools", (a) => (a.tools || []).join(", "), 0, 1]], page.agents, null, "Agents"));
  };

  Q.views.models = async function modelsView() {
    const page = await Q.api("/models");
    Q.view.replaceChildren(el("h1", { text: "Models" }), Q.table([["Name", (m) => m.name],
      ["Upstream", (m) => m.upstream], ["Protocol", (m) => m.protocol],
      ["Context window", (m) => m.context_window, 1]], page.models, null, "Models"));
  };

  Q.views.health = async function healthView() {
    const h = await Q.api("/health");
    Q.view.replaceChildren(el("h1", { text: "Health" }), Q.table([["Version", (x) => x.version],
      ["Store", (x) => x.store.backend], ["Store answers", (x) => (x.store.answers ? "yes" : "no")],
      ["Uptime (s)", (x) => x.uptime_secs, 1]], [h], null, "Health"));
  };
})();
