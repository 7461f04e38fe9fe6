//! The chat loop: read a line, send it or run its command, print what happens.
//!
//! Promises: a failed turn, a bad command or a store error prints one line on stderr and
//! the chat goes on; the exit code is 0 at Ctrl-D, `/exit` or the end of stdin, 1 when the
//! chat cannot start or (stdin not a terminal) any turn failed, 141 when stdout was closed.

use std::io::IsTerminal as _;
use std::process::ExitCode;
use std::sync::Arc;

use qore_client::tool_loop::ApprovalMode;
use qore_client::CancellationToken;
use qore_core::{ErrorInfo, Message};
use qore_session::auto_compress::OnCompressed;
use qore_session::transcript::ExportFormat;
use qore_session::{Opening, SessionManager, TurnOutcome};
use serde_json::json;

use super::approve::{self, Asker, EditorApprover};
use super::changes;
use super::command::{self, Command, Line};
use super::conversation::{Conversation, MakeTools};
use super::input::{history_file, Input, Read, Terminal};
use super::interrupt::Interrupts;
use super::mention;
use super::status;
use super::{ChatArgs, FAILURE};
use crate::agents::plural;
use crate::approve::StdinLines;
use crate::connect::{notes, target_spec};
use crate::console::{self, note, CLOSED_STDOUT};
use crate::diff::Shown;
use crate::output::{json_line, Output};
use crate::run::announce_compressed;
use crate::tools::{approval_mode, mcp_tools, project_dir, tool_set};
use crate::ToolProtocol;

/// Exit code of a chat cancelled by Ctrl-C before it could start.
const CANCELLED: u8 = 130;

/// The running chat.
struct Chat {
    conversation: Conversation,
    json: bool,
    tools: bool,
    interrupts: Interrupts,
    /// Some turn failed.
    failed: bool,
}

pub async fn chat(args: ChatArgs, location: Option<&str>) -> ExitCode {
    let json = args.endpoint.json;
    let terminal = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    let all = CancellationToken::new();
    console::cancel_on_closed_stdout(&all);
    let interrupts = Interrupts::install(all);
    let stdin = Arc::new(StdinLines::default());
    let input = match terminal {
        true => match Terminal::start(history_file(), project_dir(&args.tools).ok().as_deref()) {
            Ok(terminal) => Input::Terminal(terminal),
            Err(message) => return fail(json, ErrorInfo::config(message)),
        },
        false => Input::Piped(stdin.clone()),
    };
    let mode = approval_mode(&args.tools, json, terminal);
    let shown =
        (project_dir(&args.tools).ok()).map_or_else(Shown::default, |p| Shown::for_project(&p));
    let approver = match (&input, mode) {
        // In every mode: calls asking for more rights are asked about whatever the mode.
        (Input::Terminal(terminal), Some(_)) => Some(Asker::Editor(EditorApprover {
            terminal: terminal.clone(),
            interrupts: interrupts.clone(),
            shown,
        })),
        (Input::Piped(_), Some(ApprovalMode::Confirm)) => Some(Asker::Json(stdin, shown)),
        _ => None,
    };
    let tool_args = args.tools.clone();
    // The sandbox follows the agent the chat starts with (`/agent` keeps it).
    let agent = args.target.agent.clone();
    let mcp = mcp_tools(&tool_args, mode, terminal).await;
    let make_tools: MakeTools = Box::new(move || {
        let mut tools = tool_set(&tool_args, agent.as_deref(), mode, json, mcp.as_ref())?;
        if let (Some(tools), Some(asker)) = (&mut tools, &approver) {
            tools.approver = asker.approver();
        }
        Ok(tools)
    });
    let store = match args.ephemeral {
        true => None,
        false => match crate::store::open(location).await {
            Ok(store) => Some(store),
            Err(error) => {
                let message = format!("{error} (--ephemeral chats without saving)");
                return fail(json, ErrorInfo::config(message));
            }
        },
    };
    let manager = SessionManager::new(store, crate::agents::load(), notes());
    let probe_tools = mode.is_some() && args.tools.tool_protocol == ToolProtocol::Auto;
    let project = args.tools.project.clone();
    let spec = target_spec(&args.endpoint, &args.target, project, probe_tools);
    let on_compressed: OnCompressed = Arc::new(move |done| announce_compressed(json, done));
    // Ctrl-C while the model is reached (the local server starting) ends the chat.
    let reaching = interrupts.turn();
    let started = tokio::select! {
        biased;
        started = Conversation::start(manager, spec, make_tools, opening(&args), on_compressed) => started,
        () = reaching.cancelled() => {
            Output::new(json).cancelled();
            return ExitCode::from(CANCELLED);
        }
    };
    interrupts.done();
    let conversation = match started {
        Ok(conversation) => conversation,
        Err(error) => return fail(json, error),
    };
    let mut chat = Chat {
        conversation,
        json,
        tools: mode.is_some(),
        interrupts,
        failed: false,
    };
    chat.announce_session();
    if terminal {
        note!("qore: /help lists the commands; Ctrl-D leaves");
    }
    chat.repl(&input).await;
    if console::stdout_closed() {
        return ExitCode::from(CLOSED_STDOUT);
    }
    match chat.failed && !terminal {
        true => FAILURE,
        false => ExitCode::SUCCESS,
    }
}

/// The editor's history file, in the data dir (none when there is no data dir).
/// Which session the flags ask for.
fn opening(args: &ChatArgs) -> Opening<'_> {
    match (&args.session, args.continue_session) {
        (Some(key), _) => Opening::Named(key),
        (None, true) => Opening::Latest,
        (None, false) => Opening::New,
    }
}

fn fail(json: bool, error: ErrorInfo) -> ExitCode {
    Output::new(json).error(&error);
    FAILURE
}

impl Chat {
    async fn repl(&mut self, input: &Input) {
        loop {
            if console::stdout_closed() {
                return;
            }
            let line = match input.next().await {
                Read::Line(line) => line,
                Read::Interrupted => continue,
                Read::End => return,
            };
            match command::parse(&line) {
                Line::Empty => {}
                Line::Invalid(message) => eprintln!("qore: {message}"),
                Line::Message(text) => {
                    match mention::attach(text, self.conversation.project().as_deref()) {
                        Ok(text) => self.turn(text).await,
                        Err(refused) => {
                            self.failed = true;
                            Output::new(self.json).error(&refused);
                        }
                    }
                }
                Line::Command(Command::Exit) => return,
                Line::Command(command) => self.run(command).await,
            }
        }
    }

    /// Send one message and print how the turn went.
    async fn turn(&mut self, text: String) {
        let cancel = self.interrupts.turn();
        let mut out = match self.tools {
            true => Output::new(self.json).with_tools(),
            false => Output::new(self.json),
        };
        let outcome = self.conversation.send(text, &mut out, &cancel).await;
        self.interrupts.done();
        let history = self.conversation.history().await;
        match outcome {
            TurnOutcome::Finished {
                stop_reason, usage, ..
            } => {
                let text = history.last().map(Message::text).unwrap_or_default();
                out.result(&text, &history, &usage, stop_reason.as_ref());
                status::after_answer(&self.conversation, self.json, &usage).await;
            }
            TurnOutcome::Failed {
                limit: Some(limit),
                usage,
                ..
            } => {
                self.failed = true;
                out.stopped(&limit, &history, &usage);
            }
            TurnOutcome::Failed { error, .. } => {
                self.failed = true;
                out.error(&error);
            }
            TurnOutcome::Cancelled { .. } => out.cancelled(),
        }
    }

    /// `{"type": "session", "id"}` in JSON mode, a note otherwise.
    fn announce_session(&self) {
        let id = self.conversation.id();
        if self.json {
            json_line(&json!({"type": "session", "id": id}));
            return;
        }
        match id {
            Some(id) => note!("qore: session {id}"),
            None => note!("qore: ephemeral session (nothing is saved)"),
        }
    }

    /// A command's answer: a JSON line of `kind` with `fields`, or `text` on stdout.
    fn say(&self, kind: &str, fields: serde_json::Value, text: &str) {
        if self.json {
            let mut line = json!({"type": kind});
            if let (Some(line), Some(fields)) = (line.as_object_mut(), fields.as_object()) {
                line.extend(fields.clone());
            }
            json_line(&line);
        } else {
            console::out(text);
        }
    }

    async fn run(&mut self, command: Command) {
        let done = match command {
            Command::Help => {
                let help = command::help();
                self.say("help", json!({"text": help}), &help);
                Ok(())
            }
            Command::New => (self.conversation.start_new().await).map(|()| self.announce_session()),
            Command::Switch(key) => self.switch(&key).await,
            Command::Sessions => self.sessions().await,
            Command::Agent(name) => (self.conversation.change(Some(name.clone()), None).await)
                .map(|model| note!("qore: agent {name} ({model}) from the next message on")),
            Command::Model(model) => (self.conversation.change(None, Some(model)).await)
                .map(|model| note!("qore: model {model} from the next message on")),
            Command::Tokens => self.tokens().await,
            Command::Export(file) => self.export(&file).await,
            Command::Undo => self.undo().await,
            Command::Diff => (changes::last_turn(&self.conversation).await)
                .map(|(kind, fields, text)| self.say(kind, fields, &text)),
            Command::Compress => self.compress().await,
            Command::Approvals(revoke) => approve::approvals(self.conversation.approvals(), revoke)
                .map(|(kind, fields, text)| self.say(kind, fields, &text)),
            Command::Exit => Ok(()),
        };
        if let Err(error) = done {
            eprintln!("qore: {}", error.message);
        }
    }

    async fn undo(&mut self) -> Result<(), ErrorInfo> {
        let report = self.conversation.undo().await?;
        let files: Vec<_> = (report.files.iter())
            .map(|(path, done)| json!({"path": path, "done": format!("{done:?}").to_lowercase()}))
            .collect();
        let fields = json!({"turn": report.seq, "files": files, "unrecorded_calls": report.unrecorded_calls});
        self.say("undone", fields, &format!("{report}\n"));
        Ok(())
    }

    async fn switch(&mut self, key: &str) -> Result<(), ErrorInfo> {
        let info = self.conversation.switch(key).await?;
        self.announce_session();
        let title = info.name.or(info.title).unwrap_or_default();
        let turns = plural(info.turn_count as usize, "turn");
        note!("qore: {} {turns} so far: {title}", info.turn_count);
        Ok(())
    }

    async fn sessions(&self) -> Result<(), ErrorInfo> {
        let Some(store) = self.conversation.store() else {
            return Err(ErrorInfo::config("an ephemeral chat has no saved sessions"));
        };
        let project = self.conversation.project();
        let listed = store.list_sessions(project.as_deref()).await;
        let sessions = listed.map_err(|error| ErrorInfo::config(error.to_string()))?;
        let current = self.conversation.id();
        let mut text = String::new();
        let mut rows = Vec::new();
        for info in &sessions {
            let mark = if Some(info.id.as_str()) == current {
                "*"
            } else {
                " "
            };
            let label = info.name.as_deref().or(info.title.as_deref()).unwrap_or("");
            let turns = plural(info.turn_count as usize, "turn");
            let line = format!(
                "{mark} {}  {:>3} {turns:<5}  {label}\n",
                info.id, info.turn_count
            );
            text.push_str(&line);
            rows.push(json!({
                "id": info.id, "name": info.name, "title": info.title,
                "turns": info.turn_count, "updated_at": info.updated_at,
                "current": Some(info.id.as_str()) == current,
            }));
        }
        self.say("sessions", json!({"sessions": rows}), &text);
        Ok(())
    }

    /// The session's token estimate against the context window, and the last reported usage.
    async fn tokens(&self) -> Result<(), ErrorInfo> {
        let estimate = self.conversation.token_use().await;
        let usage = self.conversation.last_usage.unwrap_or_default();
        let count = |n: Option<u64>| n.map_or("?".to_owned(), |n| n.to_string());
        let text = format!(
            "{estimate}\nlast turn: {} input tokens, {} output tokens (as the provider reported)\n",
            count(usage.input_tokens),
            count(usage.output_tokens)
        );
        self.say(
            "tokens",
            json!({"estimate": estimate, "last_usage": usage}),
            &text,
        );
        Ok(())
    }

    /// Write the session to `file`: Markdown for `.md`, else qore's JSON.
    async fn export(&self, file: &str) -> Result<(), ErrorInfo> {
        let format = match file.ends_with(".md") {
            true => ExportFormat::Markdown,
            false => ExportFormat::Json,
        };
        let text = self.conversation.export(format).await?;
        std::fs::write(file, text)
            .map_err(|err| ErrorInfo::config(format!("cannot write {file}: {err}")))?;
        self.say(
            "exported",
            json!({"file": file}),
            &format!("wrote {file}\n"),
        );
        Ok(())
    }

    /// Compress the session and go on in the compressed one (the session's compression
    /// callback announces it, with `compressed_from`).
    async fn compress(&mut self) -> Result<(), ErrorInfo> {
        let cancel = self.interrupts.turn();
        let compressed = self.conversation.compress(&cancel).await;
        self.interrupts.done();
        let compressed = compressed?;
        let text = format!(
            "summarised {} turns into session {} (kept {}; the original {} is unchanged)\n",
            compressed.summarised_turns,
            compressed.session_id,
            compressed.kept_turns,
            compressed.parent_id
        );
        let fields = json!({
            "session": compressed.session_id, "original": compressed.parent_id,
            "summarised_turns": compressed.summarised_turns, "kept_turns": compressed.kept_turns,
        });
        self.say("compressed", fields, &text);
        Ok(())
    }
}
