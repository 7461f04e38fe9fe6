/**
 * What the extension reads from VS Code's `qore.*` configuration: how to start the server
 * (`qore.path`, `qore.args`, `qore.env`) and the settings object `qore lsp` takes as
 * `initializationOptions` and in `workspace/didChangeConfiguration` (the schema of
 * crates/qore-lsp/src/settings.rs).
 *
 * Promises: only the keys a user set (user, workspace or folder scope; the narrowest wins)
 * are sent, so a key left unset keeps the server's default, or `config.toml`'s
 * `[[refactor.actions]]`; dotted keys become nested objects (`completion.agent` ->
 * `{"completion": {"agent": ...}}`); a `null` agent is sent as `null` (the roster).
 */
import * as vscode from "vscode";

/** The configuration section. */
export const SECTION = "qore";

/** The keys of qore-lsp's settings object, as `qore.<key>` in VS Code. */
export const SERVER_KEYS = [
  "enabled",
  "completion.agent",
  "completion.prefixLines",
  "completion.suffixLines",
  "completion.mode",
  "completion.debounceMs",
  "completion.openDocuments",
  "completion.openDocumentsBudget",
  "refactor.agent",
  "refactor.actions",
] as const;

/** The keys whose change needs a new server process. */
export const PROCESS_KEYS = ["path", "args", "env"] as const;

/** How the server is started. */
export interface Launch {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/** The value `key` was given explicitly, or undefined when it is unset everywhere. */
function explicit(config: vscode.WorkspaceConfiguration, key: string): unknown {
  const seen = config.inspect(key);
  if (!seen) {
    return undefined;
  }
  for (const value of [seen.workspaceFolderValue, seen.workspaceValue, seen.globalValue]) {
    if (value !== undefined) {
      return value;
    }
  }
  return undefined;
}

/** The settings object for `qore lsp`: the explicitly set keys, nested. */
export function serverSettings(): Record<string, unknown> {
  const config = vscode.workspace.getConfiguration(SECTION);
  const out: Record<string, unknown> = {};
  for (const key of SERVER_KEYS) {
    const value = explicit(config, key);
    if (value === undefined) {
      continue;
    }
    const parts = key.split(".");
    let into = out;
    for (const part of parts.slice(0, -1)) {
      const next = (into[part] ??= {}) as Record<string, unknown>;
      into = next;
    }
    into[parts[parts.length - 1]] = value;
  }
  return out;
}

/** The keys of `settings` (as from [`serverSettings`]) in dotted form. */
export function settingKeys(settings: Record<string, unknown>, prefix = ""): string[] {
  return Object.entries(settings).flatMap(([key, value]) => {
    const dotted = prefix + key;
    const nested = value !== null && typeof value === "object" && !Array.isArray(value);
    return nested ? settingKeys(value as Record<string, unknown>, dotted + ".") : [dotted];
  });
}

/** `qore.path`, `qore.args` and `qore.env`, checked: a bad value falls back to the default. */
export function launch(): Launch {
  const config = vscode.workspace.getConfiguration(SECTION);
  const path = config.get<unknown>("path");
  const args = config.get<unknown>("args");
  const env = config.get<unknown>("env");
  const strings = (list: unknown): list is string[] =>
    Array.isArray(list) && list.every((item) => typeof item === "string");
  const table = (value: unknown): value is Record<string, string> =>
    value !== null &&
    typeof value === "object" &&
    Object.values(value as object).every((item) => typeof item === "string");
  return {
    command: typeof path === "string" && path.trim() !== "" ? path.trim() : "qore",
    args: ["lsp", ...(strings(args) ? args : [])],
    env: table(env) ? env : {},
  };
}
