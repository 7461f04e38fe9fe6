/**
 * qore's state in the status bar: starting, ready (the server's name and version from
 * `initialize`), working (while completions are in flight), a failed completion (the
 * server's one-line reason), stopped, or an error with its message. Clicking it runs
 * `qore.showOutput`.
 *
 * Promises: `working` counts requests, so the item goes back to ready only when the last one
 * in flight ends; a failure shows until the next request starts; every text starts with a
 * codicon and names qore.
 */
import * as vscode from "vscode";

/** The command the item runs when clicked. */
export const SHOW_OUTPUT = "qore.showOutput";

/** The longest message shown in the item's text (the tooltip has all of it). */
const SHORT = 60;

function short(message: string): string {
  const line = (message.split("\n")[0] ?? "").trim();
  return line.length > SHORT ? line.slice(0, SHORT - 1) + "…" : line;
}

export class Status implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private server = "qore";
  private inFlight = 0;
  private ready = false;

  constructor() {
    this.item = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Right, 100);
    this.item.name = "qore";
    this.item.command = SHOW_OUTPUT;
    this.item.show();
  }

  starting(): void {
    this.ready = false;
    this.inFlight = 0;
    this.set("$(sync~spin) qore: starting", "qore: starting the language server");
  }

  /** The server answered `initialize`; `name` and `version` are its serverInfo. */
  running(name: string | undefined, version: string | undefined): void {
    this.server = [name || "qore", version].filter(Boolean).join(" ");
    this.ready = true;
    this.idle();
  }

  /** A completion request starts. */
  begin(): void {
    this.inFlight += 1;
    if (this.ready) {
      this.set(`$(sync~spin) ${this.server}`, `${this.server}: completing`);
    }
  }

  /** A completion request ended; `failure` is the server's reason when it failed. */
  end(failure?: string): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
    if (!this.ready) {
      return;
    }
    if (failure !== undefined) {
      this.set(`$(warning) ${this.server}: ${short(failure)}`, `qore: ${failure}`);
    } else if (this.inFlight === 0) {
      this.idle();
    }
  }

  stopped(): void {
    this.ready = false;
    this.set("$(circle-slash) qore: stopped", "qore: the language server is not running");
  }

  error(message: string): void {
    this.ready = false;
    this.set(`$(error) qore: ${short(message)}`, `qore: ${message}`);
  }

  dispose(): void {
    this.item.dispose();
  }

  private idle(): void {
    this.set(`$(check) ${this.server}`, `${this.server}: ready`);
  }

  private set(text: string, tooltip: string): void {
    this.item.text = text;
    this.item.tooltip = tooltip;
  }
}
