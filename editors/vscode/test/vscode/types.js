// The value classes of the stand-in `vscode` module (see index.js): what the extension and
// vscode-languageclient construct. Each does what VS Code's class does for the members
// used here, and nothing else.
"use strict";

const { pathToFileURL } = require("node:url");

class Uri {
  constructor(scheme, authority, path, query, fragment) {
    this.scheme = scheme;
    this.authority = authority || "";
    this.path = path || "";
    this.query = query || "";
    this.fragment = fragment || "";
  }
  static file(fsPath) {
    return new Uri("file", "", fsPath);
  }
  static parse(text) {
    const url = new URL(text);
    const authority = url.host;
    return new Uri(url.protocol.slice(0, -1), authority, decodeURIComponent(url.pathname),
      url.search.slice(1), url.hash.slice(1));
  }
  get fsPath() {
    return this.path;
  }
  with(change) {
    const c = { ...this, ...change };
    return new Uri(c.scheme, c.authority, c.path, c.query, c.fragment);
  }
  toString() {
    if (this.scheme === "file") {
      return pathToFileURL(this.path).href;
    }
    const query = this.query ? `?${this.query}` : "";
    const fragment = this.fragment ? `#${this.fragment}` : "";
    const slashes = this.authority || this.scheme === "http" ? `//${this.authority}` : "";
    return `${this.scheme}:${slashes}${this.path}${query}${fragment}`;
  }
  toJSON() {
    return { scheme: this.scheme, path: this.path, external: this.toString() };
  }
}

class Position {
  constructor(line, character) {
    if (line < 0 || character < 0) {
      throw new Error(`illegal position ${line}:${character}`);
    }
    this.line = line;
    this.character = character;
  }
  compareTo(other) {
    return this.line - other.line || this.character - other.character;
  }
  isEqual(other) {
    return this.compareTo(other) === 0;
  }
  isBefore(other) {
    return this.compareTo(other) < 0;
  }
  isBeforeOrEqual(other) {
    return this.compareTo(other) <= 0;
  }
  isAfter(other) {
    return this.compareTo(other) > 0;
  }
  translate(lineDelta = 0, characterDelta = 0) {
    return new Position(this.line + lineDelta, this.character + characterDelta);
  }
  with(line = this.line, character = this.character) {
    return new Position(line, character);
  }
}

class Range {
  constructor(a, b, c, d) {
    const [start, end] = typeof a === "number" ? [new Position(a, b), new Position(c, d)] : [a, b];
    [this.start, this.end] = start.isBeforeOrEqual(end) ? [start, end] : [end, start];
  }
  get isEmpty() {
    return this.start.isEqual(this.end);
  }
  get isSingleLine() {
    return this.start.line === this.end.line;
  }
  contains(other) {
    const range = other instanceof Range ? other : new Range(other, other);
    return this.start.isBeforeOrEqual(range.start) && range.end.isBeforeOrEqual(this.end);
  }
}

class Selection extends Range {
  constructor(anchor, active) {
    super(anchor, active);
    this.anchor = anchor;
    this.active = active;
  }
}

class TextEdit {
  constructor(range, newText) {
    this.range = range;
    this.newText = newText;
  }
  static replace(range, newText) {
    return new TextEdit(range, newText);
  }
}

class WorkspaceEdit {
  constructor() {
    this.edits = new Map(); // uri text -> [uri, TextEdit[]]
  }
  set(uri, edits) {
    const plain = edits.map((edit) => (Array.isArray(edit) ? edit[0] : edit));
    this.edits.set(uri.toString(), [uri, plain]);
  }
  replace(uri, range, newText) {
    const [, edits] = this.edits.get(uri.toString()) || [uri, []];
    this.set(uri, [...edits, new TextEdit(range, newText)]);
  }
  get(uri) {
    return (this.edits.get(uri.toString()) || [uri, []])[1];
  }
  entries() {
    return [...this.edits.values()];
  }
  get size() {
    return this.edits.size;
  }
}

class SnippetString {
  constructor(value = "") {
    this.value = value;
  }
}

class MarkdownString {
  constructor(value = "", supportThemeIcons = false) {
    this.value = value;
    this.supportThemeIcons = supportThemeIcons;
  }
}

class InlineCompletionItem {
  constructor(insertText, range, command) {
    this.insertText = insertText;
    this.range = range;
    this.command = command;
  }
}

class InlineCompletionList {
  constructor(items) {
    this.items = items;
  }
}

class CompletionItem {
  constructor(label, kind) {
    this.label = label;
    this.kind = kind;
  }
}

class CompletionList {
  constructor(items = [], isIncomplete = false) {
    this.items = items;
    this.isIncomplete = isIncomplete;
  }
}

class CodeActionKind {
  constructor(value) {
    this.value = value;
  }
  append(part) {
    return new CodeActionKind(this.value ? `${this.value}.${part}` : part);
  }
  contains(other) {
    return this.value === "" || other.value === this.value || other.value.startsWith(this.value + ".");
  }
  intersects(other) {
    return this.contains(other) || other.contains(this);
  }
}
for (const [name, value] of Object.entries({
  Empty: "", QuickFix: "quickfix", Refactor: "refactor", RefactorExtract: "refactor.extract",
  RefactorInline: "refactor.inline", RefactorMove: "refactor.move",
  RefactorRewrite: "refactor.rewrite", Source: "source",
  SourceOrganizeImports: "source.organizeImports", SourceFixAll: "source.fixAll",
  Notebook: "notebook",
})) {
  CodeActionKind[name] = new CodeActionKind(value);
}

class CodeAction {
  constructor(title, kind) {
    this.title = title;
    this.kind = kind;
  }
}

class Disposable {
  constructor(callOnDispose) {
    this.callOnDispose = callOnDispose;
  }
  static from(...things) {
    return new Disposable(() => things.forEach((thing) => thing && thing.dispose()));
  }
  dispose() {
    if (this.callOnDispose) {
      this.callOnDispose();
      this.callOnDispose = undefined;
    }
  }
}

class EventEmitter {
  constructor() {
    this.listeners = new Set();
    this.event = (listener, thisArg, disposables) => {
      const bound = thisArg ? listener.bind(thisArg) : listener;
      this.listeners.add(bound);
      const disposable = new Disposable(() => this.listeners.delete(bound));
      if (Array.isArray(disposables)) {
        disposables.push(disposable);
      }
      return disposable;
    };
  }
  /** Call every listener; what they returned (VS Code ignores it; the tests may await it). */
  fire(value) {
    return [...this.listeners].map((listener) => listener(value));
  }
  dispose() {
    this.listeners.clear();
  }
}

class CancellationTokenSource {
  constructor() {
    const cancelled = new EventEmitter();
    this.token = { isCancellationRequested: false, onCancellationRequested: cancelled.event };
    this.cancelled = cancelled;
  }
  cancel() {
    if (!this.token.isCancellationRequested) {
      this.token.isCancellationRequested = true;
      this.cancelled.fire(undefined);
    }
  }
  dispose() {
    this.cancelled.dispose();
  }
}

class CancellationError extends Error {
  constructor() {
    super("Canceled");
    this.name = "Canceled";
  }
}

// Classes the client only extends when it loads (its protocol* subclasses); qore's server
// offers none of these features, so they are never built here.
function loadedOnly(name) {
  return {
    [name]: class {
      constructor(...args) {
        throw new Error(`the stand-in vscode module does not model ${name} (${args.length} args)`);
      }
    },
  }[name];
}
const LOADED_ONLY = Object.fromEntries(
  ["CallHierarchyItem", "CodeLens", "Diagnostic", "DocumentLink", "InlayHint", "SymbolInformation",
    "TypeHierarchyItem"].map((name) => [name, loadedOnly(name)]),
);

module.exports = {
  ...LOADED_ONLY,
  CancellationError, CancellationTokenSource, CodeAction, CodeActionKind, CompletionItem,
  CompletionList, Disposable, EventEmitter, InlineCompletionItem, InlineCompletionList,
  MarkdownString, Position, Range, Selection, SnippetString, TextEdit, Uri, WorkspaceEdit,
};
