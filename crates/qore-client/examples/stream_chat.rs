//! Stream one chat answer on any of the seven wires and print it as it arrives.
//!
//! ```sh
//! # a local llama.cpp / LM Studio / `qore local start` server:
//! QORE_URL=http://127.0.0.1:18080/v1 cargo run -p qore-client --example stream_chat -- "Hi!"
//! # Anthropic (any wire: openai-chat, openai-responses, anthropic, gemini, ollama,
//! # llamacpp, mistral):
//! QORE_PROTOCOL=anthropic QORE_URL=https://api.anthropic.com QORE_MODEL=claude-sonnet-4-5 \
//!   QORE_API_KEY=$ANTHROPIC_API_KEY cargo run -p qore-client --example stream_chat -- "Hi!"
//! ```
//!
//! [`stream_chat`] is the whole program; `tests/examples.rs` runs it against a loopback
//! server replaying a provider's bytes.

use std::io::Write;

use futures_util::StreamExt;
use qore_client::{
    protocols, CancellationToken, ChatRequest, Client, ClientConfig, RequestOptions,
};
use qore_core::{ErrorInfo, History, Message, ResponseEvent, StreamOutcome};

/// Where to send the chat: the wire, the base URL as the provider documents it, the model
/// and the API key (if the provider wants one).
pub struct Endpoint {
    /// A wire name or alias (`openai-chat`, `anthropic`, `gemini`, ...).
    pub protocol: String,
    /// The provider's base URL (`https://api.openai.com/v1`).
    pub url: String,
    /// The model to ask.
    pub model: String,
    /// The API key, sent the way the wire wants it (bearer, `x-api-key`, `key=`).
    pub api_key: Option<String>,
}

impl Endpoint {
    /// `QORE_PROTOCOL` (default `openai-chat`), `QORE_URL` (default the local model
    /// server), `QORE_MODEL` (default `default`) and `QORE_API_KEY`.
    pub fn from_env() -> Endpoint {
        let var =
            |name: &str, default: &str| std::env::var(name).unwrap_or_else(|_| default.into());
        Endpoint {
            protocol: var("QORE_PROTOCOL", "openai-chat"),
            url: var("QORE_URL", "http://127.0.0.1:18080/v1"),
            model: var("QORE_MODEL", "default"),
            api_key: std::env::var("QORE_API_KEY").ok(),
        }
    }

    /// A client for this endpoint.
    pub fn client(&self) -> Result<Client, ErrorInfo> {
        let protocol = protocols::by_name(&self.protocol)
            .ok_or_else(|| ErrorInfo::config(format!("unknown protocol {:?}", self.protocol)))?;
        let config = ClientConfig {
            api_key: self.api_key.clone(),
            ..ClientConfig::new(&self.url)
        };
        Client::new(protocol, config)
    }
}

/// Ask `prompt`, write the answer's text to `out` as it streams, and return the assistant
/// message once the stream finished (or the error it failed with).
pub async fn stream_chat(
    endpoint: &Endpoint,
    prompt: &str,
    out: &mut impl Write,
) -> Result<Message, ErrorInfo> {
    let client = endpoint.client()?;
    let history = History::from(vec![
        Message::system("Answer briefly."),
        Message::user(prompt),
    ]);
    let request = ChatRequest {
        model: &endpoint.model,
        history: &history,
        tools: &[],
        options: &RequestOptions::default(),
    };
    let mut stream = client.stream(&request, CancellationToken::new());
    while let Some(event) = stream.next().await {
        if let ResponseEvent::TextDelta { text, .. } = &event {
            // A closed stdout ends the example; nothing to recover.
            let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
        }
    }
    match stream.finish().await {
        StreamOutcome::Finished { message, .. } => Ok(message),
        StreamOutcome::Failed { error, .. } => Err(error),
        StreamOutcome::Cancelled { .. } => Err(ErrorInfo::config("cancelled")),
    }
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let prompt = std::env::args().skip(1).collect::<Vec<_>>().join(" ");
    let prompt = if prompt.is_empty() {
        "Say hello in five words.".into()
    } else {
        prompt
    };
    match stream_chat(&Endpoint::from_env(), &prompt, &mut std::io::stdout()).await {
        Ok(_) => {
            println!();
            std::process::ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("error: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}
