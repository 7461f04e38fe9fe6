//! The tool loop with a tool written in Rust and a person approving its calls.
//!
//! ```sh
//! QORE_URL=http://127.0.0.1:18080/v1 cargo run -p qore-client --example tool_loop -- \
//!   "Write the note 'buy milk' to my notes."
//! ```
//!
//! `save_note` changes something outside the conversation (it is destructive, the
//! default), so under [`ApprovalMode::Confirm`] the loop asks the [`Approver`] before each
//! call: here a `y/n/a` prompt on the terminal. `count_words` only reads, so it runs without
//! asking. [`run_tool_loop`] is the whole program; `tests/examples.rs` runs it against a
//! loopback server replaying a model that calls the tools.

#[path = "stream_chat.rs"]
#[allow(dead_code)]
pub mod stream_chat;

use std::future::Future;
use std::io::{BufRead, Write};
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use qore_client::tool_loop::{
    ApprovalDecision, ApprovalMode, ApprovalPolicy, ApprovalRequest, Approver, LoopConfig,
    LoopEvent, ToolLoopRunner, ToolRegistry, TurnOutcome,
};
use qore_client::{CancellationToken, RequestOptions};
use qore_core::{ErrorInfo, History, Message, Tool, ToolFuture, ToolOutput, ToolSpec};
use serde_json::{json, Value};
pub use stream_chat::Endpoint;

/// A tool that appends a note to a list (the "outside world" of this example).
pub struct SaveNote {
    spec: ToolSpec,
    /// The notes saved so far.
    pub notes: Arc<Mutex<Vec<String>>>,
}

impl SaveNote {
    /// A tool saving into `notes`.
    pub fn new(notes: Arc<Mutex<Vec<String>>>) -> SaveNote {
        let spec = ToolSpec {
            name: "save_note".into(),
            description: "Save a short note for the user.".into(),
            input_schema: json!({
                "type": "object",
                "properties": {"text": {"type": "string", "description": "The note."}},
                "required": ["text"]
            }),
        };
        SaveNote { spec, notes }
    }
}

impl Tool for SaveNote {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call(&self, input: Value, _cancel: CancellationToken) -> ToolFuture {
        let notes = self.notes.clone();
        Box::pin(async move {
            // The loop validated the arguments against the schema; a string is there.
            let text = input["text"].as_str().unwrap_or_default().to_owned();
            let mut notes = notes
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            notes.push(text);
            ToolOutput::text(format!("saved (note {})", notes.len()))
        })
    }
}

/// A tool that only reads: it counts the words of a text.
pub struct CountWords(ToolSpec);

impl Default for CountWords {
    /// The tool and its schema.
    fn default() -> CountWords {
        CountWords(ToolSpec {
            name: "count_words".into(),
            description: "Count the words of a text.".into(),
            input_schema: json!({
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"]
            }),
        })
    }
}

impl Tool for CountWords {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    fn destructive(&self) -> bool {
        false
    }

    fn parallel_safe(&self) -> bool {
        true
    }

    fn call(&self, input: Value, _cancel: CancellationToken) -> ToolFuture {
        let words = input["text"]
            .as_str()
            .unwrap_or_default()
            .split_whitespace()
            .count();
        Box::pin(async move { ToolOutput::text(words.to_string()) })
    }
}

/// Asks on the terminal: `y` runs this call, `a` runs every call of the tool from now on,
/// anything else refuses it (and the model is told so).
pub struct AskOnTerminal;

impl Approver for AskOnTerminal {
    fn decide<'a>(
        &'a self,
        request: &'a ApprovalRequest,
    ) -> Pin<Box<dyn Future<Output = ApprovalDecision> + Send + 'a>> {
        Box::pin(async move {
            eprint!("run {} {}? [y/n/a] ", request.tool, request.arguments);
            let _ = std::io::stderr().flush();
            let mut answer = String::new();
            let _ = std::io::stdin().lock().read_line(&mut answer);
            match answer.trim() {
                "y" => ApprovalDecision::AllowOnce,
                "a" => ApprovalDecision::AllowSession,
                _ => ApprovalDecision::Deny {
                    reason: Some("the user said no".into()),
                },
            }
        })
    }
}

/// Run the loop for `prompt` with the two tools, asking `approver` before `save_note`
/// runs. Returns how the turn ended and the conversation it left (every assistant turn and
/// tool result appended).
pub async fn run_tool_loop(
    endpoint: &Endpoint,
    prompt: &str,
    notes: Arc<Mutex<Vec<String>>>,
    approver: &dyn Approver,
) -> Result<(TurnOutcome, History), ErrorInfo> {
    let client = endpoint.client()?;
    let mut registry = ToolRegistry::new();
    registry.add(Arc::new(SaveNote::new(notes)))?;
    registry.add(Arc::new(CountWords::default()))?;
    let mut policy = ApprovalPolicy::new(ApprovalMode::Confirm);
    let mut history = History::from(vec![
        Message::system("You keep the user's notes. Use the tools."),
        Message::user(prompt),
    ]);
    let mut runner = ToolLoopRunner {
        client: &client,
        registry: &mut registry,
        policy: &mut policy,
        approver,
        config: LoopConfig {
            max_rounds: 5,
            ..LoopConfig::default()
        },
    };
    let cancel = CancellationToken::new();
    let outcome = runner
        .run(
            &endpoint.model,
            &mut history,
            &RequestOptions::default(),
            &cancel,
            |event| match event {
                LoopEvent::Response(qore_core::ResponseEvent::TextDelta { text, .. }) => {
                    print!("{text}");
                }
                LoopEvent::ToolFinished(report) => {
                    eprintln!("[{} -> {}]", report.name, report.output.text_content());
                }
                _ => {}
            },
        )
        .await;
    Ok((outcome, history))
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let prompt = std::env::args().skip(1).collect::<Vec<_>>().join(" ");
    let prompt = if prompt.is_empty() {
        "Save the note 'buy milk'.".into()
    } else {
        prompt
    };
    let notes = Arc::new(Mutex::new(Vec::new()));
    match run_tool_loop(
        &Endpoint::from_env(),
        &prompt,
        notes.clone(),
        &AskOnTerminal,
    )
    .await
    {
        Ok((TurnOutcome::Finished { rounds, .. }, _)) => {
            println!();
            let notes = notes
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            eprintln!("{rounds} round(s) of tool calls; notes: {notes:?}");
            std::process::ExitCode::SUCCESS
        }
        Ok((outcome, _)) => {
            eprintln!("the turn did not finish: {outcome:?}");
            std::process::ExitCode::FAILURE
        }
        Err(error) => {
            eprintln!("error: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}
