// A stand-in for the `vscode` module, for running the extension under Node (a real VS Code
// cannot be installed here; see editors/vscode/README.md). It holds what an editor would:
// configuration, open documents, registered providers and commands, status bar items,
// output lines, shown messages and applied edits, all in `editor` (editor.js), which the
// tests drive and read. A namespace member that is not here throws, naming it, so a use
// the stand-in does not model fails loudly instead of quietly reading `undefined`.
"use strict";

const types = require("./types");
const { editor, matchScore } = require("./editor");

const { Disposable, EventEmitter } = types;

/** `members` as a namespace whose unknown members throw. */
function namespace(name, members) {
  return new Proxy(members, {
    get(target, key) {
      if (typeof key === "symbol" || key in target || key === "then") {
        return target[key];
      }
      throw new Error(`the stand-in vscode module has no ${name}.${String(key)}`);
    },
  });
}

/** A `register*Provider` that records `provider` under `kind`. */
function registrar(kind) {
  return (selector, provider, metadata) => {
    const entry = { kind, selector, provider, metadata };
    editor.providers.push(entry);
    return new Disposable(() => editor.providers.splice(editor.providers.indexOf(entry), 1));
  };
}

const never = new EventEmitter().event;

const workspace = namespace("workspace", {
  getConfiguration: (section) => editor.configuration(section),
  onDidChangeConfiguration: editor.events.configuration.event,
  onDidOpenTextDocument: editor.events.open.event,
  onDidChangeTextDocument: editor.events.change.event,
  onDidCloseTextDocument: editor.events.close.event,
  // Events this editor never fires: files created, deleted or renamed, notebooks, saves.
  ...Object.fromEntries([
    "onDidSaveTextDocument", "onWillSaveTextDocument", "onDidChangeWorkspaceFolders",
    "onDidCreateFiles", "onDidDeleteFiles", "onDidRenameFiles", "onWillCreateFiles",
    "onWillDeleteFiles", "onWillRenameFiles", "onDidOpenNotebookDocument",
    "onDidChangeNotebookDocument", "onDidCloseNotebookDocument", "onDidSaveNotebookDocument",
  ].map((name) => [name, never])),
  getWorkspaceFolder: (uri) =>
    (editor.folders || []).find((folder) => uri.path.startsWith(`${folder.uri.path}/`)),
  get textDocuments() {
    return [...editor.documents.values()];
  },
  get workspaceFolders() {
    return editor.folders;
  },
  notebookDocuments: [],
  applyEdit: async (edit) => {
    editor.applied.push(edit);
    return true;
  },
  createFileSystemWatcher: () => ({
    onDidCreate: never, onDidChange: never, onDidDelete: never, dispose() {},
  }),
});

const window = namespace("window", {
  createOutputChannel: (name) => editor.outputChannel(name),
  createStatusBarItem: (alignment, priority) => editor.statusBarItem(alignment, priority),
  showErrorMessage: async (message) => editor.message("error", message),
  showWarningMessage: async (message) => editor.message("warning", message),
  showInformationMessage: async (message) => editor.message("info", message),
  activeTextEditor: undefined,
  visibleTextEditors: [],
  onDidChangeActiveTextEditor: never,
  onDidChangeVisibleTextEditors: never,
  tabGroups: namespace("window.tabGroups", { all: [], onDidChangeTabs: never }),
});

const languages = namespace("languages", {
  match: (selector, document) => matchScore(selector, document),
  createDiagnosticCollection: (name) => ({
    name, set() {}, delete() {}, clear() {}, forEach() {}, get() {}, has: () => false,
    dispose() {},
  }),
  registerInlineCompletionItemProvider: registrar("inlineCompletion"),
  registerCompletionItemProvider: registrar("completion"),
  registerCodeActionsProvider: registrar("codeAction"),
});

const commands = namespace("commands", {
  registerCommand: (id, callback, thisArg) => {
    if (editor.commands.has(id)) {
      throw new Error(`command '${id}' already exists`);
    }
    editor.commands.set(id, thisArg ? callback.bind(thisArg) : callback);
    return new Disposable(() => editor.commands.delete(id));
  },
  executeCommand: async (id, ...args) => {
    const command = editor.commands.get(id);
    if (!command) {
      throw new Error(`command '${id}' not found`);
    }
    return command(...args);
  },
});

const env = namespace("env", { appName: "qore tests (stand-in vscode)", language: "en" });

module.exports = {
  ...types,
  version: "1.91.0",
  workspace,
  window,
  languages,
  commands,
  env,
  StatusBarAlignment: { Left: 1, Right: 2 },
  DiagnosticSeverity: { Error: 0, Warning: 1, Information: 2, Hint: 3 },
  CompletionItemKind: { Text: 0, Method: 1, Function: 2, Snippet: 14 },
  CompletionTriggerKind: { Invoke: 0, TriggerCharacter: 1, TriggerForIncompleteCompletions: 2 },
  InlineCompletionTriggerKind: { Invoke: 0, Automatic: 1 },
  CodeActionTriggerKind: { Invoke: 1, Automatic: 2 },
  TextDocumentSaveReason: { Manual: 1, AfterDelay: 2, FocusOut: 3 },
  EndOfLine: { LF: 1, CRLF: 2 },
  LogLevel: { Off: 0, Trace: 1, Debug: 2, Info: 3, Warning: 4, Error: 5 },
  ProgressLocation: { SourceControl: 1, Window: 10, Notification: 15 },
};
