//! `qore`: the command-line front end. It parses arguments, builds a client, prints what
//! the engine says; every decision about the wire lives in `qore-client`.
//!
//! Exit codes: 0 success, 1 failure (one human line on stderr), 2 bad usage, 130 cancelled
//! by Ctrl-C.

mod output;
mod run;

use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "qore",
    version,
    about = "An agentic LLM engine: stream answers from any provider"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Send one prompt and stream the answer to stdout.
    Run(RunArgs),
    /// List the models the server offers.
    Models(EndpointArgs),
    /// Manage the local model server (SmolLM2-135M on llama.cpp, 127.0.0.1).
    Local {
        #[arg(value_enum)]
        action: LocalAction,
    },
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
    #[arg(long, default_value = "openai-chat")]
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
}

/// What to ask.
#[derive(Args, Clone)]
pub struct RunArgs {
    #[command(flatten)]
    pub endpoint: EndpointArgs,
    /// Model id. Default: the local model, or the server's only model.
    #[arg(long, env = "QORE_MODEL")]
    pub model: Option<String>,
    /// A system prompt.
    #[arg(long)]
    pub system: Option<String>,
    #[arg(long)]
    pub max_tokens: Option<u32>,
    #[arg(long)]
    pub temperature: Option<f64>,
    /// Ask for one JSON body instead of a stream.
    #[arg(long)]
    pub no_stream: bool,
    /// The prompt.
    #[arg(required = true, num_args = 1..)]
    pub prompt: Vec<String>,
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Run(args) => run::run(args).await,
        Command::Models(args) => run::models(args).await,
        Command::Local { action } => run::local(action).await,
    }
}
