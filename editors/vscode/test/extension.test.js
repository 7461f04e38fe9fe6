// The extension as VS Code would run it, under Node with the stand-in `vscode` module
// (./vscode), against the real `qore lsp` (QORE_BIN) and a loopback llama.cpp server.
//
// Proves: activation starts `qore lsp` with qore.path/env and the settings as
// initializationOptions (the configured agent, no debounce, the configured refactor actions),
// and the status bar goes starting -> ready with the server's name and version (as
// `qore --version` prints them); an inline completion asked through the provider the client
// registered is the model's text at the cursor, and the status bar shows working meanwhile;
// running the item's command, as VS Code does on an accept, reaches qore, which counts it;
// a failed completion shows qore's reason there (no pop-up) until the next one succeeds; a
// selection gets the configured refactor actions, and running one sends the model's answer
// back as one workspace edit of exactly the selection; a changed setting reaches the
// running server without a restart, and unsetting one restarts it with the default back; a
// new qore.path restarts it, and one that cannot start is an error with its message;
// deactivation stops it.
"use strict";

const assert = require("node:assert/strict");
const { execFileSync } = require("node:child_process");
const path = require("node:path");
const { after, before, test } = require("node:test");

const { distinct, extension, qoreBin, until, workspace } = require("./harness");
const { chatStream, infillStream, Provider, serverError } = require("./provider");
const { editor } = require("./vscode/editor");
const vscode = require("vscode");

const ADD_PY = "def add(a, b):\n    return \n\nprint(add(1, 2))\n";
const CURSOR = new vscode.Position(1, 11); // after "    return "
const NEW_ADD = 'def add(a, b):\n    """The sum of a and b."""\n    return a + b';
const ANSWER = `Here is the refactored code:\n\`\`\`python\n${NEW_ADD}\n\`\`\`\nI added a docstring.`;
const ACTIONS = [
  { title: "Add documentation", instruction: "Add a docstring." },
  { title: "Tidy", instruction: "Tidy this code." },
];

const provider = new Provider();
let ws;
let qore;
let version; // "qore 0.1.0", from the binary itself
let ext;
let doc;

function status() {
  assert.equal(editor.statusItems.length, 1, "one status bar item");
  return editor.statusItems[0];
}

async function complete(at = CURSOR) {
  const providers = editor.providersFor("inlineCompletion", doc);
  assert.equal(providers.length, 1, "one inline completion provider for the document");
  const token = new vscode.CancellationTokenSource().token;
  const context = { triggerKind: vscode.InlineCompletionTriggerKind.Invoke };
  const result = await providers[0].provideInlineCompletionItems(doc, at, context, token);
  return Array.isArray(result) ? result : (result?.items ?? []);
}

function since(from) {
  return distinct(status().texts.slice(from));
}

before(async () => {
  const url = await provider.start();
  ws = workspace(url);
  qore = qoreBin();
  version = execFileSync(qore, ["--version"], { encoding: "utf8" }).trim();
  editor.folders = [{ uri: vscode.Uri.file(ws.project), name: "project", index: 0 }];
  editor.configure({
    "qore.path": qore,
    "qore.env": { QORE_CONFIG_DIR: ws.config, QORE_DATA_DIR: ws.data },
    "qore.completion.agent": "fim",
    "qore.completion.debounceMs": 0,
    "qore.refactor.agent": "fix",
    "qore.refactor.actions": ACTIONS,
  });
  ext = extension();
  await ext.activate({ subscriptions: [] });
});

after(async () => {
  try {
    if (ext) {
      await ext.deactivate();
      assert.equal(status().text, "$(circle-slash) qore: stopped");
    }
  } finally {
    await provider.close();
    ws?.remove();
  }
});

test("activation starts qore lsp and the status bar goes starting -> ready", async () => {
  assert.match(version, /^qore \d+\.\d+\.\d+/);
  assert.deepEqual(distinct(status().texts), ["$(sync~spin) qore: starting", `$(check) ${version}`]);
  assert.equal(status().visible, true);
  assert.equal(status().command, "qore.showOutput");
  for (const command of ["qore.restart", "qore.showOutput", "qore.refactor"]) {
    assert.ok(editor.commands.has(command), `${command} is registered`);
  }
  const [output] = editor.outputs;
  await vscode.commands.executeCommand("qore.showOutput");
  assert.equal(output.shown, 1);
});

test("an inline completion is the model's text at the cursor, through qore", async () => {
  provider.queue("/infill", infillStream(["a", " + ", "b"]));
  doc = editor.open(path.join(ws.project, "add.py"), ADD_PY, "python");
  const from = status().texts.length;
  const items = await complete();
  assert.deepEqual(items.map((item) => item.insertText), ["a + b"]);
  assert.ok(items[0].range.start.isEqual(CURSOR), "the item starts at the cursor");
  const seen = provider.seen.filter((s) => s.path === "/infill");
  assert.equal(seen.length, 1);
  assert.equal(seen[0].body.input_prefix, "def add(a, b):\n    return ");
  assert.equal(seen[0].body.input_suffix, "\n\nprint(add(1, 2))\n");
  assert.deepEqual(since(from), [`$(sync~spin) ${version}`, `$(check) ${version}`]);
  // VS Code runs an accepted item's command: the client sends it to qore, which counts it.
  const accept = items[0].command;
  assert.equal(accept?.command, "qore.completionAccepted");
  await vscode.commands.executeCommand(accept.command, ...(accept.arguments ?? []));
  const [output] = editor.outputs;
  const logged = `completion ${accept.arguments[0]} accepted`;
  await until(() => output.lines.some((line) => line.includes(logged)), "qore logs the accept");
});

test("a failed completion shows qore's reason in the status bar until one succeeds", async () => {
  provider.queue("/infill", serverError(500, "the model is still loading"));
  provider.queue("/infill", infillStream(["a + b"]));
  assert.deepEqual(await complete(), []);
  assert.ok(status().text.startsWith(`$(warning) ${version}: `), status().text);
  assert.match(status().tooltip, /the model is still loading/);
  assert.deepEqual(editor.messages, [], "no pop-up for a completion");
  assert.deepEqual((await complete()).map((item) => item.insertText), ["a + b"]);
  assert.equal(status().text, `$(check) ${version}`);
});

test("a selection gets the refactor actions; one applies the model's edit", async () => {
  provider.queue("/v1/chat/completions", chatStream(ANSWER));
  const providers = editor.providersFor("codeAction", doc);
  assert.equal(providers.length, 1, "one code action provider for the document");
  const selection = new vscode.Range(0, 0, 1, 11);
  const context = { diagnostics: [], triggerKind: vscode.CodeActionTriggerKind.Invoke };
  const token = new vscode.CancellationTokenSource().token;
  const actions = await providers[0].provideCodeActions(doc, selection, context, token);
  assert.deepEqual(actions.map((a) => a.title), ACTIONS.map((a) => a.title));
  assert.deepEqual(actions.map((a) => a.kind.value), ["refactor.rewrite", "refactor.rewrite"]);
  const { command, arguments: args } = actions[0].command;
  await vscode.commands.executeCommand(command, ...args);
  await until(() => editor.applied.length > 0, "workspace/applyEdit");
  assert.equal(editor.applied.length, 1);
  const [[uri, edits]] = editor.applied[0].entries();
  assert.equal(uri.toString(), doc.uri.toString());
  assert.equal(edits.length, 1);
  assert.deepEqual(
    [edits[0].range.start, edits[0].range.end].map((p) => [p.line, p.character]),
    [[0, 0], [1, 11]],
  );
  assert.equal(edits[0].newText, NEW_ADD);
  const [chat] = provider.seen.filter((s) => s.path === "/v1/chat/completions");
  assert.match(JSON.stringify(chat.body.messages), /Add a docstring\./);
});

test("a changed setting reaches the running server, without a restart", async () => {
  const from = status().texts.length;
  provider.queue("/infill", infillStream(["a + b", "\n    # done"]));
  await editor.configure({ "qore.completion.mode": "single" });
  assert.deepEqual((await complete()).map((item) => item.insertText), ["a + b"]);
  await editor.configure({ "qore.completion.mode": "multi" });
  provider.queue("/infill", infillStream(["a + b", "\n    # done"]));
  assert.deepEqual((await complete()).map((item) => item.insertText), ["a + b\n    # done"]);
  assert.ok(!since(from).includes("$(sync~spin) qore: starting"), since(from).join(", "));
});

test("unsetting a setting restarts the server (back to its default)", async () => {
  // Not awaited: two changes in a burst, as VS Code fires them.
  editor.configure({ "qore.completion.mode": "single" });
  const from = status().texts.length;
  editor.configure({ "qore.completion.mode": undefined });
  await until(() => since(from).includes("$(sync~spin) qore: starting"), "a restart");
  await until(() => status().text === `$(check) ${version}`, "ready again");
  editor.events.open.fire(doc);
  provider.queue("/infill", infillStream(["a + b", "\n    # done"]));
  assert.deepEqual((await complete()).map((item) => item.insertText), ["a + b\n    # done"]);
});

test("a new qore.path restarts the server; one that cannot start is an error", async () => {
  const missing = path.join(ws.root, "no-such-qore");
  editor.configure({ "qore.path": missing });
  await until(() => status().text.startsWith("$(error) qore: "), "the error status");
  assert.ok(status().tooltip.includes(missing), status().tooltip);
  editor.configure({ "qore.path": qore });
  await until(() => status().text === `$(check) ${version}`, "ready again");
  // The new server has the document once VS Code tells it, and completes as before.
  editor.events.open.fire(doc);
  provider.queue("/infill", infillStream(["a + b"]));
  assert.deepEqual((await complete()).map((item) => item.insertText), ["a + b"]);
});
