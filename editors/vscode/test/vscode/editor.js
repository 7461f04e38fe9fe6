// The state behind the stand-in `vscode` module (index.js): what the extension sees as
// VS Code, and what the tests set and read. Configuration defaults come from the
// extension's own package.json `contributes.configuration`, as in VS Code; values the tests
// set are user (global) values, which `inspect` reports as such.
"use strict";

const fs = require("node:fs");
const path = require("node:path");

const { EventEmitter, Position, Range, Uri } = require("./types");

const manifest = JSON.parse(
  fs.readFileSync(path.join(__dirname, "..", "..", "package.json"), "utf8"),
);
const DEFAULTS = new Map(
  Object.entries(manifest.contributes.configuration.properties).map(([key, schema]) => [
    key,
    schema.default,
  ]),
);

/** An open document; positions are in UTF-16 code units, as JavaScript strings are. */
class TextDocument {
  constructor(uri, languageId, text) {
    this.uri = uri;
    this.languageId = languageId;
    this.version = 1;
    this.text = text;
    this.isClosed = false;
    this.isDirty = false;
    this.eol = 1;
  }
  get fileName() {
    return this.uri.fsPath;
  }
  get isUntitled() {
    return this.uri.scheme === "untitled";
  }
  get lineCount() {
    return this.text.split("\n").length;
  }
  offsetAt(position) {
    const lines = this.text.split("\n");
    let offset = 0;
    for (let line = 0; line < position.line && line < lines.length; line += 1) {
      offset += lines[line].length + 1;
    }
    const own = lines[Math.min(position.line, lines.length - 1)];
    return Math.min(offset + Math.min(position.character, own.length), this.text.length);
  }
  positionAt(offset) {
    const before = this.text.slice(0, Math.max(0, offset)).split("\n");
    return new Position(before.length - 1, before[before.length - 1].length);
  }
  getText(range) {
    return range
      ? this.text.slice(this.offsetAt(range.start), this.offsetAt(range.end))
      : this.text;
  }
  lineAt(at) {
    const line = typeof at === "number" ? at : at.line;
    const text = this.text.split("\n")[line];
    if (text === undefined) {
      throw new Error(`illegal line ${line}`);
    }
    const range = new Range(line, 0, line, text.length);
    return {
      lineNumber: line, text, range, rangeIncludingLineBreak: range,
      firstNonWhitespaceCharacterIndex: text.length - text.trimStart().length,
      isEmptyOrWhitespace: text.trim() === "",
    };
  }
  save() {
    return Promise.resolve(true);
  }
}

/** A status bar item that remembers every text it was given. */
function statusBarItem(alignment, priority) {
  let text = "";
  const item = {
    alignment, priority, name: undefined, command: undefined, tooltip: undefined,
    visible: false, texts: [],
    get text() {
      return text;
    },
    set text(value) {
      text = value;
      item.texts.push(value);
    },
    show() {
      item.visible = true;
    },
    hide() {
      item.visible = false;
    },
    dispose() {
      item.visible = false;
    },
  };
  return item;
}

/** A log output channel that keeps its lines. */
function outputChannel(name) {
  const channel = {
    name, lines: [], shown: 0, logLevel: 3, onDidChangeLogLevel: new EventEmitter().event,
    append(value) {
      channel.lines.push(value);
    },
    appendLine(value) {
      channel.lines.push(value);
    },
    replace(value) {
      channel.lines = [value];
    },
    clear() {
      channel.lines = [];
    },
    show() {
      channel.shown += 1;
    },
    hide() {},
    dispose() {},
  };
  for (const level of ["trace", "debug", "info", "warn", "error"]) {
    channel[level] = (message, ...rest) =>
      channel.lines.push(`[${level}] ${message instanceof Error ? message.message : message}` +
        (rest.length ? ` ${rest.map(String).join(" ")}` : ""));
  }
  return channel;
}

/** How well `selector` (languages.match) fits `document`: 10 or 0; glob patterns are not
 * modelled and throw. */
function matchScore(selector, document) {
  const filters = Array.isArray(selector) ? selector : [selector];
  const fits = (filter) => {
    if (typeof filter === "string") {
      return filter === "*" || filter === document.languageId;
    }
    if (filter.pattern !== undefined || filter.notebookType !== undefined) {
      throw new Error("the stand-in vscode module does not match glob patterns or notebooks");
    }
    return (filter.scheme === undefined || filter.scheme === document.uri.scheme) &&
      (filter.language === undefined || filter.language === document.languageId);
  };
  return filters.some(fits) ? 10 : 0;
}

const editor = {
  /** User settings: full key ("qore.completion.agent") -> value. */
  settings: new Map(),
  documents: new Map(),
  folders: undefined,
  providers: [],
  commands: new Map(),
  statusItems: [],
  outputs: [],
  messages: [],
  applied: [],
  events: {
    configuration: new EventEmitter(),
    open: new EventEmitter(),
    change: new EventEmitter(),
    close: new EventEmitter(),
  },

  configuration(section) {
    const full = (key) => (section ? `${section}.${key}` : key);
    const value = (key) =>
      editor.settings.has(full(key)) ? editor.settings.get(full(key)) : DEFAULTS.get(full(key));
    return {
      get: (key, fallback) => (value(key) === undefined ? fallback : value(key)),
      has: (key) => value(key) !== undefined,
      inspect: (key) => ({
        key: full(key), defaultValue: DEFAULTS.get(full(key)),
        globalValue: editor.settings.get(full(key)),
      }),
      update: () => Promise.reject(new Error("the stand-in vscode module cannot update settings")),
    };
  },

  /** Set (or, with `undefined`, unset) user settings and tell the listeners; resolves when
   * the promises they returned have. */
  configure(changes) {
    for (const [key, value] of Object.entries(changes)) {
      if (value === undefined) {
        editor.settings.delete(key);
      } else {
        editor.settings.set(key, value);
      }
    }
    const keys = Object.keys(changes);
    return Promise.all(editor.events.configuration.fire({
      affectsConfiguration: (section) =>
        keys.some((key) => key === section || key.startsWith(`${section}.`)),
    }));
  },

  /** Open `file` with `text`, as VS Code does when a user opens it. */
  open(file, text, languageId) {
    const document = new TextDocument(Uri.file(file), languageId, text);
    editor.documents.set(document.uri.toString(), document);
    editor.events.open.fire(document);
    return document;
  },

  /** The providers registered for `kind` that fit `document`. */
  providersFor(kind, document) {
    return editor.providers
      .filter((entry) => entry.kind === kind && matchScore(entry.selector, document) > 0)
      .map((entry) => entry.provider);
  },

  statusBarItem(alignment, priority) {
    const item = statusBarItem(alignment, priority);
    editor.statusItems.push(item);
    return item;
  },

  outputChannel(name) {
    const channel = outputChannel(name);
    editor.outputs.push(channel);
    return channel;
  },

  message(level, text) {
    editor.messages.push({ level, text });
    return undefined;
  },
};

module.exports = { editor, matchScore, TextDocument };
