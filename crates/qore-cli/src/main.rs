//! `qore`: the command-line front end. It parses arguments, chooses the tools' approval mode,
//! answers approval requests from the terminal or JSON lines, and prints what the engine
//! says; sessions, reaching a model and running a turn live in `qore-session`, the wire and
//! the tool loop in `qore-client`, the tools in `qore-tools`.
//!
//! Exit codes: 0 success, 1 failure or a run stopped by a limit (one human line on stderr),
//! 2 bad usage, 130 cancelled by Ctrl-C, 141 stdout closed early (nothing more printed).

mod agents;
mod allocator;
mod approve;
mod chat;
mod complete;
mod connect;
mod console;
mod diff;
mod flags;
mod log;
mod lsp;
mod mcp;
mod output;
mod prompt;
mod providers;
mod refactor;
mod render;
mod run;
mod sandbox;
mod serve;
mod serve_admin;
mod sessions;
mod skills;
mod store;
mod tools;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, CommandFactory as _, Parser, Subcommand};
use qore_client::tool_loop::LoopConfig;

#[derive(Parser)]
#[command(
    name = "qore",
    version,
    about = "An agentic LLM engine: stream answers from any provider"
)]
struct Cli {
    /// Print nothing but the answer (and errors): no notes, reasoning or tool activity on
    /// stderr.
    #[arg(long, short = 'q', global = true)]
    quiet: bool,
    /// Where sessions, API keys and usage are kept: a `postgres://user@host/db` URL or a
    /// SQLite file path. Default: qore.db in QORE_DATA_DIR, else the platform's data dir
    /// ($XDG_DATA_HOME/qore).
    // Help never shows the variable's value: it may hold a password.
    #[arg(
        long,
        global = true,
        env = "QORE_STORE_URL",
        hide_env_values = true,
        value_name = "LOCATION"
    )]
    store: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Send one prompt and stream the answer to stdout.
    Run(Box<RunArgs>),
    /// Talk interactively, on a saved session (`/help` inside lists the commands); with
    /// stdin not a terminal, each line is one message or command.
    Chat(Box<chat::ChatArgs>),
    /// List the models the server offers.
    Models(EndpointArgs),
    /// Manage the local model server (SmolLM2-135M on llama.cpp, 127.0.0.1).
    Local {
        #[arg(value_enum)]
        action: LocalAction,
    },
    /// Agents: TOML profiles whose [body] is the request body (bundled and in the config
    /// dir's agents/).
    Agents {
        #[command(subcommand)]
        command: agents::AgentsCommand,
    },
    /// Provider instances: built-in vendors and the config dir's providers/.
    Providers {
        #[command(subcommand)]
        command: providers::ProvidersCommand,
    },
    /// The config dir (QORE_CONFIG_DIR, else $XDG_CONFIG_HOME/qore or ~/.config/qore).
    Config {
        #[command(subcommand)]
        command: ConfigCommand,
    },
    /// One code completion at FILE:LINE:COL (1-based), printed as the text to insert.
    Complete(complete::CompleteArgs),
    /// Rewrite a selection of FILE (--range L1:C1-L2:C2, 1-based) as --instruction says;
    /// prints the new text, a diff (--diff), or writes the file (--write).
    Refactor(refactor::RefactorArgs),
    /// The editor server: LSP over stdio (inline completion, quick refactor, and the Copilot
    /// plugins' protocol). `qore --stdio` and `qore FILE [--stdio]` start it too (see
    /// docs/editors.md).
    Lsp {
        /// Serve on stdin/stdout: what it does anyway (accepted because every Copilot plugin
        /// adds it).
        #[arg(long)]
        stdio: bool,
    },
    /// Stored sessions: list, show, export, import, compress, rm, rename (ids may be
    /// abbreviated to a unique prefix; the store is --store's, else QORE_DATA_DIR's qore.db).
    Sessions {
        #[command(subcommand)]
        command: sessions::SessionsCommand,
    },
    /// MCP servers: list (status, tool count), tools NAME, add NAME [--env K=V] -- COMMAND
    /// ARGS..., rm NAME (config: <config dir>/mcp.json and config.toml's [mcp_servers]).
    Mcp {
        #[command(subcommand)]
        command: mcp::McpCommand,
    },
    /// Skills (folders with a SKILL.md in <config dir>/skills/, .qore/skills/,
    /// .claude/skills/): list, show NAME.
    Skills {
        #[command(subcommand)]
        command: skills::SkillsCommand,
    },
    /// The HTTP server: OpenAI Chat Completions, OpenAI Responses and Anthropic Messages
    /// answered through qore's agents and providers; `keys` manages its API keys, `usage`
    /// reports what they used.
    Serve(serve::ServeArgs),
    /// The store itself: `migrate --from LOCATION --to LOCATION` copies everything one store
    /// holds into another (e.g. the SQLite file into PostgreSQL).
    Store {
        #[command(subcommand)]
        command: store::StoreCommand,
    },
    /// The sandbox of the commands qore runs: `check` prints what the kernel supports and
    /// the policy in force (see docs/sandbox.md).
    Sandbox {
        #[command(subcommand)]
        command: sandbox::SandboxCommand,
    },
    /// The helper every sandboxed command starts through:
    /// `qore sandbox-exec [--mode M] [--network on|off] [--root DIR] -- COMMAND ARGS...`.
    #[command(hide = true)]
    SandboxExec(sandbox::ExecArgs),
    /// Print a shell completion script (`qore completions bash > ~/.local/share/bash-completion/completions/qore`).
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

#[derive(Subcommand)]
enum ConfigCommand {
    /// Write a commented starter config (never overwrites a file).
    Init,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum LocalAction {
    Start,
    Stop,
    Status,
}

/// Where the provider is.
#[derive(Args, Clone)]
pub struct EndpointArgs {
    /// Wire protocol: openai-chat, openai-responses, anthropic, gemini, ollama, llamacpp,
    /// mistral.
    #[arg(long, default_value = "openai-chat", value_parser = flags::protocol_name)]
    pub protocol: String,
    /// Base URL as the provider documents it (OpenAI style ends in /v1; Anthropic, Gemini
    /// and Ollama without a version). Without it, the local model server is used (started
    /// if needed) for the protocols it speaks.
    #[arg(long, env = "QORE_URL")]
    pub url: Option<String>,
    /// Request path override for servers with unusual paths (`/path` or a full URL).
    #[arg(long)]
    pub endpoint: Option<String>,
    /// Name of the environment variable holding the API key.
    #[arg(long, value_name = "VAR")]
    pub api_key_env: Option<String>,
    /// Print JSON (one object per line) instead of text.
    #[arg(long)]
    pub json: bool,
    /// Longest silence allowed while waiting for the server (the response head, then
    /// between two pieces of the answer), in seconds. Default: the provider file's
    /// `idle_timeout_secs`, else 120. Also with --agent (it wins over the provider file).
    #[arg(long, value_name = "SECS", env = "QORE_IDLE_TIMEOUT", value_parser = flags::seconds)]
    pub idle_timeout: Option<Duration>,
    /// Time allowed to establish a connection, in seconds. Default: the provider file's
    /// `connect_timeout_secs`, else 10.
    #[arg(long, value_name = "SECS", value_parser = flags::seconds)]
    pub connect_timeout: Option<Duration>,
}

/// Which model answers, and the request overrides (`run` and `chat`).
#[derive(Args, Clone)]
pub struct TargetArgs {
    /// Model id. Default: the agent's (or its override), the local model, or the server's
    /// only model.
    #[arg(long, env = "QORE_MODEL")]
    pub model: Option<String>,
    /// Use this agent (`qore agents list`): its provider, model, system prompt and
    /// request body. --url, --protocol and --endpoint are then not used; --model,
    /// --system, --max-tokens, --temperature and --no-stream override the profile.
    #[arg(long, value_name = "NAME")]
    pub agent: Option<String>,
    /// A system prompt (with --agent: instead of the agent's).
    #[arg(long)]
    pub system: Option<String>,
    /// Most tokens in the answer (written under the wire's own key). Default: the
    /// provider's, except the local model server: 512.
    #[arg(long)]
    pub max_tokens: Option<u32>,
    #[arg(long)]
    pub temperature: Option<f64>,
    /// Ask for one JSON body instead of a stream.
    #[arg(long)]
    pub no_stream: bool,
}

/// What to ask.
#[derive(Args, Clone)]
pub struct RunArgs {
    #[command(flatten)]
    pub endpoint: EndpointArgs,
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub tools: ToolArgs,
    #[command(flatten)]
    pub show: flags::ShowArgs,
    /// Save nothing: the run is not kept as a session (by default it is, in the data dir:
    /// QORE_DATA_DIR, else $XDG_DATA_HOME/qore).
    #[arg(long, conflicts_with_all = ["session", "continue_session"])]
    pub ephemeral: bool,
    /// Continue the session with this id (or unique id prefix) or name; a name that is not
    /// found starts a new session with that name.
    #[arg(long, value_name = "ID|NAME")]
    pub session: Option<String>,
    /// Continue the most recent session of this project (--project, else the current
    /// directory); a new one when it has none.
    #[arg(long = "continue", short = 'c', conflicts_with = "session")]
    pub continue_session: bool,
    /// Read the prompt from FILE (before the prompt arguments).
    #[arg(long, value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// The prompt (words are joined with spaces). `-` reads it from stdin. Text piped into
    /// stdin is sent too, before the prompt, as its context (not with `--tools confirm
    /// --json`, whose stdin carries approval answers); a terminal is never read.
    pub prompt: Vec<String>,
}

/// Which tools the model may use, and who approves them.
#[derive(Args, Clone)]
pub struct ToolArgs {
    /// Tools on the project (--project): `off` offers none; `read-only` offers them all but
    /// refuses the ones that change files or run programs (the model is told why);
    /// `confirm` runs reading tools and asks before the others; `auto` runs everything.
    /// Default: `confirm` when stdin and stderr are a terminal, else `off` (scripts get
    /// today's plain answers unless they ask for tools). Confirm asks on the terminal
    /// (y = this call, a = this tool for the rest of the run, n = deny, `n REASON` tells
    /// the model why); with --json it writes `{"type": "approval_request", "id", "tool",
    /// "arguments"}` lines and reads `{"id", "decision": "allow_once" | "allow_session" |
    /// "deny", "reason"}` lines from stdin (the end of stdin denies). Without a terminal and
    /// without --json nobody can answer: confirm becomes read-only (stderr says so) unless
    /// --yes.
    #[arg(long, value_enum, value_name = "MODE")]
    pub tools: Option<ToolsMode>,
    /// How tools are offered and called: `native` (the provider's tool calling) or `text`
    /// (tools described in the system prompt, calls written as `<tool_call>` blocks in the
    /// reply, results sent back as `<tool_result>` blocks: for models without tool calling).
    /// `auto`: text when the server's model listing says the model has no tool calling
    /// (the listing is read only when qore reads it anyway, i.e. without --model), else
    /// native.
    #[arg(long, value_enum, default_value = "auto", value_name = "PROTOCOL")]
    pub tool_protocol: ToolProtocol,
    /// Rounds of tool calls allowed (with tools); after that the pending calls are not run
    /// and the model is asked for a final answer with tool calls forbidden (exit 1 if it
    /// still calls tools).
    #[arg(long, value_name = "N", default_value_t = LoopConfig::default().max_rounds)]
    pub max_rounds: u32,
    /// The project the tools work on (reads, writes and commands stay inside it). Default:
    /// the current directory.
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Approve every tool call without asking: the same as `--tools auto`, also with
    /// `--tools confirm`. Not with `--tools off` or `--tools read-only`.
    #[arg(long, short = 'y')]
    pub yes: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ToolsMode {
    Off,
    ReadOnly,
    Confirm,
    Auto,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ToolProtocol {
    Auto,
    Native,
    Text,
}

/// One error line on stderr (`qore: message`) and exit code 1.
pub fn fail(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("qore: {message}");
    ExitCode::FAILURE
}

/// Exit with a usage error (code 2) saying `message`.
pub fn usage_error(message: impl std::fmt::Display) -> ! {
    Cli::command()
        .error(clap::error::ErrorKind::ValueValidation, message)
        .exit()
}

fn main() -> ExitCode {
    // The sandbox helper confines itself and forks: it must run before the runtime's
    // threads exist.
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if sandbox::is_exec(&args) {
        return sandbox::exec_main(args);
    }
    async_main()
}

#[tokio::main]
async fn async_main() -> ExitCode {
    // The command lines editors' Copilot plugins run (`qore --stdio`, `qore FILE [--stdio]`)
    // are no clap shapes: recognised here, exactly as lsp::editor_launch says.
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if lsp::editor_launch(&args, |name| Cli::command().find_subcommand(name).is_some()) {
        return lsp::lsp().await;
    }
    let cli = Cli::parse();
    console::set_quiet(cli.quiet);
    if let Command::Run(args) = &cli.command {
        console::set_plain(args.show.plain);
    } else if let Command::Chat(args) = &cli.command {
        console::set_plain(args.show.plain);
    }
    if let Command::Run(args) = &cli.command {
        if let (true, Some(mode @ (ToolsMode::Off | ToolsMode::ReadOnly))) =
            (args.tools.yes, args.tools.tools)
        {
            let mode = if mode == ToolsMode::Off {
                "off"
            } else {
                "read-only"
            };
            Cli::command()
                .error(
                    clap::error::ErrorKind::ArgumentConflict,
                    format!("--yes approves tool calls; it cannot be used with --tools {mode}"),
                )
                .exit();
        }
    }
    let store = cli.store;
    match cli.command {
        Command::Run(args) => run::run(*args, store.as_deref()).await,
        Command::Chat(args) => chat::chat(*args, store.as_deref()).await,
        Command::Models(args) => connect::models(args).await,
        Command::Local { action } => connect::local(action).await,
        Command::Agents { command } => agents::agents(command),
        Command::Providers { command } => providers::run(command).await,
        Command::Config {
            command: ConfigCommand::Init,
        } => agents::config_init(),
        Command::Sessions { command } => sessions::sessions(command, store.as_deref()).await,
        Command::Complete(args) => complete::complete(args).await,
        Command::Refactor(args) => refactor::refactor(args).await,
        Command::Lsp { stdio: _ } => lsp::lsp().await,
        Command::Mcp { command } => mcp::mcp(command).await,
        Command::Skills { command } => skills::skills(command),
        Command::Serve(args) => serve::serve(args, store).await,
        Command::Store { command } => store::store(command).await,
        Command::Sandbox { command } => sandbox::sandbox(command),
        Command::SandboxExec(args) => sandbox::exec(args),
        Command::Completions { shell } => {
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "qore", &mut script);
            console::out(&String::from_utf8_lossy(&script));
            ExitCode::SUCCESS
        }
    }
}
