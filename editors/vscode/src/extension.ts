/**
 * The qore extension: runs `qore lsp` (qore.path, qore.args, qore.env) through
 * vscode-languageclient for every file and untitled document, so VS Code gets qore's inline
 * completions (LSP 3.18 `textDocument/inlineCompletion`) and its refactor code actions (the
 * `qore.refactor` command the client registers from the server's capabilities).
 *
 * Promises:
 * - the settings of crates/qore-lsp/src/settings.rs go as `initializationOptions` and, when
 *   they change, as `workspace/didChangeConfiguration` ({"qore": {...}}); a change of
 *   qore.path/args/env, or a setting being unset, restarts the server instead (the protocol
 *   has no way to say "back to the default");
 * - the status bar shows qore's state (see [`Status`]); a failed start shows its message
 *   there and in the output channel, never as a pop-up per completion;
 * - `qore.restart` starts a new server with the current configuration, `qore.showOutput`
 *   shows the output channel.
 */
import * as vscode from "vscode";
import {
  LanguageClient,
  type LanguageClientOptions,
  RevealOutputChannelOn,
  type ServerOptions,
  State,
} from "vscode-languageclient/node";

import { PROCESS_KEYS, SECTION, launch, serverSettings, settingKeys } from "./settings";
import { SHOW_OUTPUT, Status } from "./status";

/** The command that restarts the server. */
export const RESTART = "qore.restart";

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** One running `qore lsp` at a time, and what it was started with. */
class Server {
  private client: LanguageClient | undefined;
  /** The dotted keys sent in the last settings. */
  private sent: string[] = [];
  /** Restarts and settings changes, one after the other (VS Code fires changes in bursts). */
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly output: vscode.LogOutputChannel,
    private readonly status: Status,
  ) {}

  async start(): Promise<void> {
    const how = launch();
    const settings = serverSettings();
    this.sent = settingKeys(settings);
    const serverOptions: ServerOptions = {
      command: how.command,
      args: how.args,
      options: { env: { ...process.env, ...how.env } },
    };
    const status = this.status;
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: "file" }, { scheme: "untitled" }],
      initializationOptions: { [SECTION]: settings },
      outputChannel: this.output,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      middleware: {
        provideInlineCompletionItems: async (document, position, context, token, next) => {
          status.begin();
          let failure: string | undefined;
          try {
            return await next(document, position, context, token);
          } catch (error) {
            if (!(error instanceof vscode.CancellationError)) {
              failure = message(error);
            }
            return null;
          } finally {
            status.end(failure);
          }
        },
      },
    };
    const client = new LanguageClient(SECTION, "qore", serverOptions, clientOptions);
    this.client = client;
    status.starting();
    const ready = () => {
      const info = client.initializeResult?.serverInfo;
      status.running(info?.name, info?.version);
    };
    // The client says Running as soon as `initialize` is answered, before it registers its
    // providers; "ready" waits for `start()`, which returns once they are registered. A
    // later Running is the client restarting a crashed server on its own.
    let started = false;
    client.onDidChangeState((change) => {
      if (this.client !== client) {
        return;
      }
      if (change.newState === State.Starting) {
        status.starting();
      } else if (change.newState === State.Running) {
        if (started) {
          ready();
        }
      } else {
        status.stopped();
      }
    });
    try {
      await client.start();
      started = true;
      if (this.client === client) {
        ready();
      }
    } catch (error) {
      if (this.client === client) {
        status.error(message(error));
      }
      this.output.appendLine(`qore: ${how.command} ${how.args.join(" ")}: ${message(error)}`);
    }
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client === undefined) {
      return;
    }
    try {
      if (client.isRunning()) {
        await client.stop();
      }
    } catch (error) {
      this.output.appendLine(`qore: stopping the server: ${message(error)}`);
    }
    this.status.stopped();
  }

  /** Run `work` after what was queued before it; its failure goes to the output channel. */
  private enqueue(what: string, work: () => Promise<void>): Promise<void> {
    this.queue = this.queue.then(work).catch((error) => {
      this.output.appendLine(`qore: ${what}: ${message(error)}`);
    });
    return this.queue;
  }

  restart(): Promise<void> {
    return this.enqueue("restarting the server", async () => {
      await this.stop();
      await this.start();
    });
  }

  /** Send changed settings, or restart when that cannot express the change. */
  configurationChanged(event: vscode.ConfigurationChangeEvent): Promise<void> {
    if (!event.affectsConfiguration(SECTION)) {
      return Promise.resolve();
    }
    return this.enqueue("applying the settings", () => this.applySettings(event));
  }

  private async applySettings(event: vscode.ConfigurationChangeEvent): Promise<void> {
    const settings = serverSettings();
    const now = new Set(settingKeys(settings));
    const processChanged = PROCESS_KEYS.some((key) =>
      event.affectsConfiguration(`${SECTION}.${key}`),
    );
    const unset = this.sent.some((key) => !now.has(key));
    const client = this.client;
    if (processChanged || unset || client === undefined || !client.isRunning()) {
      await this.stop();
      await this.start();
      return;
    }
    this.sent = [...now];
    await client.sendNotification("workspace/didChangeConfiguration", {
      settings: { [SECTION]: settings },
    });
  }
}

let server: Server | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel("qore", { log: true });
  const status = new Status();
  const running = new Server(output, status);
  server = running;
  context.subscriptions.push(
    output,
    status,
    vscode.commands.registerCommand(RESTART, () => running.restart()),
    vscode.commands.registerCommand(SHOW_OUTPUT, () => output.show(true)),
    vscode.workspace.onDidChangeConfiguration((event) => running.configurationChanged(event)),
  );
  await running.start();
}

export async function deactivate(): Promise<void> {
  const running = server;
  server = undefined;
  await running?.stop();
}
