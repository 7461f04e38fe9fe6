//! An agent from a TOML profile: its `[body]` is the request body, field for field, with
//! Jinja strings rendered from the conversation.
//!
//! ```sh
//! QORE_URL=http://127.0.0.1:18080/v1 cargo run -p qore-agents --example agent_body -- "Why is the sky blue?"
//! # or your own profile file:
//! QORE_AGENT_FILE=my-agent.toml cargo run -p qore-agents --example agent_body -- "Hi"
//! ```
//!
//! The profile below extends the bundled `base-openai-chat` (which writes `model`,
//! `messages`, `tools` from the conversation) and adds literal fields. A profile that does
//! not compile (an unknown include, a Jinja syntax error, a field of the wrong type) is
//! refused when the catalog loads, naming its file and line, never mid-conversation.
//! [`ask_agent`] is the whole program; `tests/examples.rs` runs it against a loopback
//! server.

use std::path::Path;
use std::sync::Arc;

use futures_util::StreamExt;
use qore_agents::profile::ProfileFile;
use qore_agents::providers::Providers;
use qore_agents::render::AgentRenderer;
use qore_agents::validate::validate_agent;
use qore_agents::{Catalog, Partials};
use qore_client::{
    protocols, CancellationToken, ChatRequest, Client, ClientConfig, RequestOptions,
};
use qore_core::{ErrorInfo, History, Message, ResponseEvent, StreamOutcome};

/// The example's profile: a terse Chat Completions agent.
pub const PROFILE: &str = r#"
schema_version = 1
name = "terse"
extends = "base-openai-chat"
description = "One-sentence answers at a low temperature."
# A provider instance (bundled: openai, anthropic, gemini, ollama, local, ...): its wire.
provider = "openai"

[body]
temperature = 0.2
max_tokens = 200
# A Jinja string: rendered from the conversation, spliced in as JSON.
user = "{{ tojson('qore-example') }}"
"#;

/// Load `profile` (the TOML text of `file`) over the bundled profiles and return the agent
/// named `name` once it rendered a hostile synthetic conversation into a body its wire
/// accepts, or every error the catalog and that check found.
pub fn load_agent(file: &Path, profile: &str, name: &str) -> Result<qore_agents::Agent, String> {
    let user = ProfileFile::parse(file, profile).map_err(|e| e.to_string())?;
    let catalog = Catalog::with_user_files(vec![user]);
    if !catalog.errors.is_empty() {
        let errors: Vec<String> = catalog.errors.iter().map(|e| e.to_string()).collect();
        return Err(errors.join("\n"));
    }
    let agent = (catalog.get(name).cloned()).ok_or_else(|| format!("no agent named {name:?}"))?;
    validate_agent(&agent, &Providers::load(None), &Partials::default())
        .map_err(|e| e.to_string())?;
    Ok(agent)
}

/// Ask `prompt` through `agent` at `base_url` (a Chat Completions server) with `model`;
/// returns the answer's text.
pub async fn ask_agent(
    agent: &qore_agents::Agent,
    base_url: &str,
    model: &str,
    prompt: &str,
) -> Result<String, ErrorInfo> {
    let protocol = protocols::by_name("openai-chat")
        .ok_or_else(|| ErrorInfo::config("openai-chat is not registered"))?;
    let renderer = AgentRenderer::new(agent, protocol.clone(), model.into(), Partials::default())
        .map_err(|e| ErrorInfo::config(e.to_string()))?;
    let client =
        Client::new(protocol, ClientConfig::new(base_url))?.with_renderer(Arc::new(renderer));
    let history = History::from(vec![
        Message::system("Answer in one sentence."),
        Message::user(prompt),
    ]);
    let request = ChatRequest {
        model,
        history: &history,
        tools: &[],
        options: &RequestOptions::default(),
    };
    let mut stream = client.stream(&request, CancellationToken::new());
    while let Some(event) = stream.next().await {
        if let ResponseEvent::TextDelta { text } = event {
            print!("{text}");
        }
    }
    println!();
    match stream.finish().await {
        StreamOutcome::Finished { message, .. } => Ok(message.text()),
        StreamOutcome::Failed { error, .. } => Err(error),
        StreamOutcome::Cancelled { .. } => Err(ErrorInfo::config("cancelled")),
    }
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let (file, text) = match std::env::var("QORE_AGENT_FILE") {
        Ok(path) => match std::fs::read_to_string(&path) {
            Ok(text) => (path, text),
            Err(err) => {
                eprintln!("{path}: {err}");
                return std::process::ExitCode::FAILURE;
            }
        },
        Err(_) => ("terse.toml".to_owned(), PROFILE.to_owned()),
    };
    let name = match toml::from_str::<toml::Table>(&text) {
        Ok(table) => table
            .get("name")
            .and_then(|n| n.as_str())
            .unwrap_or("terse")
            .to_owned(),
        Err(err) => {
            eprintln!("{file}: {err}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let agent = match load_agent(Path::new(&file), &text, &name) {
        Ok(agent) => agent,
        Err(errors) => {
            eprintln!("{errors}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let url = std::env::var("QORE_URL").unwrap_or_else(|_| "http://127.0.0.1:18080/v1".into());
    let model = std::env::var("QORE_MODEL").unwrap_or_else(|_| "default".into());
    let prompt = std::env::args().skip(1).collect::<Vec<_>>().join(" ");
    let prompt = if prompt.is_empty() {
        "Why is the sky blue?".into()
    } else {
        prompt
    };
    match ask_agent(&agent, &url, &model, &prompt).await {
        Ok(_) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}
