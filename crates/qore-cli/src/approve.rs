//! Who answers approval requests: the person at the terminal ([`TerminalApprover`]), a
//! program speaking JSON lines ([`JsonApprover`]), or nobody ([`NobodyAsked`], for the modes
//! whose policy never asks).
//!
//! The terminal's question comes after what the call would change ([`Shown`]: a coloured
//! diff, or the command and its directory); `--json`'s `approval_request` carries the same
//! as fields (`diff`, `command` and `cwd`). A call asking for more rights is shown with the
//! rights (sandbox mode, network) and the model's justification (`rights` in JSON), and
//! only "yes, once" or "no" answer it.
//!
//! Answers are read from stdin on a thread of its own ([`StdinLines`]), started at the first
//! question: a blocking read cannot be cancelled, and a thread left blocked in it does not
//! hold up the end of the process (Ctrl-C while a question is pending), where a read on the
//! runtime's blocking pool would.

use std::collections::HashMap;
use std::future::Future;
use std::io::BufRead as _;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use qore_client::tool_loop::{ApprovalDecision, ApprovalRequest, Approver};
use serde_json::{json, Value};
use tokio::sync::mpsc;

use crate::console::styled_stderr;
use crate::diff::Shown;
use crate::output::{json_line, one_line};

/// Characters of a call's arguments shown in the question.
const QUESTION_CHARS: usize = 200;

type Decision<'a> = Pin<Box<dyn Future<Output = ApprovalDecision> + Send + 'a>>;

/// Stdin as lines, read on a dedicated thread started at the first [`StdinLines::next`].
#[derive(Default)]
pub struct StdinLines {
    lines: tokio::sync::Mutex<Option<mpsc::UnboundedReceiver<String>>>,
}

impl StdinLines {
    /// The next line (without its line ending), `None` at the end of stdin.
    pub async fn next(&self) -> Option<String> {
        let mut lines = self.lines.lock().await;
        let lines = lines.get_or_insert_with(|| {
            let (tx, rx) = mpsc::unbounded_channel();
            std::thread::spawn(move || {
                for line in std::io::stdin().lock().lines() {
                    let Ok(line) = line else { break };
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            });
            rx
        });
        lines.recv().await
    }
}

/// For `auto` and `read-only`, whose policy decides every call itself.
pub use qore_session::NobodyAsked;

/// Asks on stderr, reads the answer from the terminal: y (once), a (this tool for the rest
/// of the run), n or an empty line (deny; `n REASON` gives the model the reason).
#[derive(Default)]
pub struct TerminalApprover {
    stdin: StdinLines,
    shown: Shown,
}

impl TerminalApprover {
    /// An approver that shows what each call would change in the project of `shown`.
    pub fn showing(shown: Shown) -> Self {
        TerminalApprover {
            stdin: StdinLines::default(),
            shown,
        }
    }
}

/// Print on stderr what `request` would change, when it changes something.
pub fn show_change(shown: &Shown, request: &ApprovalRequest) {
    if let Some(change) = shown.text(request, styled_stderr()) {
        eprint!("{change}");
    }
}

/// Print on stderr the rights `request` asks for and why, when it asks for more rights.
pub fn show_rights(request: &ApprovalRequest) {
    let Some(rights) = &request.rights else {
        return;
    };
    let tool = &request.tool;
    eprintln!(
        "qore: {tool} asks for more rights for this call: {}",
        rights.describe()
    );
    if let Some(note) = &rights.note {
        eprintln!("qore: {note}");
    }
    match rights.justification.as_deref().map(str::trim) {
        Some(why) if !why.is_empty() => {
            eprintln!("qore: the model's justification: {}", one_line(why, 1000))
        }
        _ => {}
    }
}

/// What to say after an answer [`answer_to`] did not take.
pub fn answers_taken(request: &ApprovalRequest) -> &'static str {
    match request.rights {
        Some(_) => "qore: more rights are granted one call at a time: answer y or n",
        None => "qore: answer y, a or n",
    }
}

/// The decision `answer` gives to `request`: [`parse_answer`], except that "always" is not
/// an answer to a request for more rights.
pub fn answer_to(request: &ApprovalRequest, answer: &str) -> Option<ApprovalDecision> {
    match parse_answer(answer) {
        Some(ApprovalDecision::AllowSession) if request.rights.is_some() => None,
        decision => decision,
    }
}

/// The question about `request`; `scope` says how long "always" lasts (`run`, `session`).
pub fn question(request: &ApprovalRequest, scope: &str) -> String {
    let tool = &request.tool;
    let arguments = one_line(&request.arguments.to_string(), QUESTION_CHARS);
    if let Some(rights) = &request.rights {
        return format!(
            "qore: run {tool} {arguments} with {}? [y] yes, this call only, [N] no \
             (n REASON tells the model why): ",
            rights.describe()
        );
    }
    format!(
        "qore: run {tool} {arguments}? [y] yes, [a] always for {tool} in this {scope}, [N] no \
         (n REASON tells the model why): "
    )
}

/// A prompt waiting for its answer on stderr: when the question is dropped unanswered
/// (Ctrl-C), its line is ended so that what follows starts on a line of its own.
struct OpenPrompt {
    open: bool,
}

impl Drop for OpenPrompt {
    fn drop(&mut self) {
        if self.open {
            eprintln!();
        }
    }
}

impl Approver for TerminalApprover {
    fn decide<'a>(&'a self, request: &'a ApprovalRequest) -> Decision<'a> {
        Box::pin(async move {
            show_change(&self.shown, request);
            show_rights(request);
            let question = question(request, "run");
            loop {
                eprint!("{question}");
                let mut prompt = OpenPrompt { open: true };
                let answer = self.stdin.next().await;
                prompt.open = false;
                let Some(answer) = answer else {
                    eprintln!();
                    return ApprovalDecision::Deny {
                        reason: Some("no answer (stdin was closed)".into()),
                    };
                };
                match answer_to(request, &answer) {
                    Some(decision) => return decision,
                    None => eprintln!("{}", answers_taken(request)),
                }
            }
        })
    }
}

/// A terminal answer: y / yes, a / always, n / no / empty (`n REASON`); `None` otherwise.
pub fn parse_answer(answer: &str) -> Option<ApprovalDecision> {
    let answer = answer.trim();
    let (word, reason) = answer
        .split_once(char::is_whitespace)
        .unwrap_or((answer, ""));
    let reason = reason.trim();
    match word.to_lowercase().as_str() {
        "y" | "yes" if reason.is_empty() => Some(ApprovalDecision::AllowOnce),
        "a" | "always" if reason.is_empty() => Some(ApprovalDecision::AllowSession),
        "" | "n" | "no" => Some(ApprovalDecision::Deny {
            reason: (!reason.is_empty()).then(|| reason.to_owned()),
        }),
        _ => None,
    }
}

/// Writes each request as a JSON line on stdout and reads decisions as JSON lines from
/// stdin (see `--tools` in `qore run --help`). A decision for another call is kept for when
/// that call is asked about; lines that are not decisions are reported on stderr and
/// skipped; the end of stdin denies.
#[derive(Default)]
pub struct JsonApprover {
    stdin: Arc<StdinLines>,
    early: Mutex<HashMap<String, ApprovalDecision>>,
    shown: Shown,
}

impl JsonApprover {
    /// An approver reading its decisions from `stdin`, which others read too (`qore chat`),
    /// its requests carrying what each call would change in the project of `shown`.
    pub fn reading(stdin: Arc<StdinLines>, shown: Shown) -> Self {
        JsonApprover {
            stdin,
            early: Mutex::default(),
            shown,
        }
    }
}

/// A decision line: `(call id, decision)`, or why it is not one.
fn parse_decision(line: &str) -> Result<(String, ApprovalDecision), String> {
    let value: Value = serde_json::from_str(line).map_err(|err| format!("not JSON ({err})"))?;
    let id = value["id"].as_str().ok_or("no string \"id\"")?.to_owned();
    let reason = match &value["reason"] {
        Value::Null => None,
        Value::String(reason) => Some(reason.clone()),
        _ => return Err("\"reason\" is not a string".into()),
    };
    let decision = match value["decision"].as_str() {
        Some("allow_once") => ApprovalDecision::AllowOnce,
        Some("allow_session") => ApprovalDecision::AllowSession,
        Some("deny") => ApprovalDecision::Deny { reason },
        _ => {
            return Err("\"decision\" must be \"allow_once\", \"allow_session\" or \"deny\"".into())
        }
    };
    Ok((id, decision))
}

impl Approver for JsonApprover {
    fn decide<'a>(&'a self, request: &'a ApprovalRequest) -> Decision<'a> {
        Box::pin(async move {
            let mut line = json!({
                "type": "approval_request",
                "id": request.call_id,
                "tool": request.tool,
                "arguments": request.arguments,
            });
            if let Some(rights) = &request.rights {
                line["rights"] = json!(rights);
            }
            if let (Some(line), Value::Object(fields)) =
                (line.as_object_mut(), self.shown.fields(request))
            {
                line.extend(fields);
            }
            json_line(&line);
            loop {
                let early = self
                    .early
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner())
                    .remove(&request.call_id);
                if let Some(decision) = early {
                    return decision;
                }
                let Some(line) = self.stdin.next().await else {
                    return ApprovalDecision::Deny {
                        reason: Some("no decision was given (stdin was closed)".into()),
                    };
                };
                if line.trim().is_empty() {
                    continue;
                }
                match parse_decision(&line) {
                    Ok((id, decision)) if id == request.call_id => return decision,
                    Ok((id, decision)) => {
                        self.early
                            .lock()
                            .unwrap_or_else(|poisoned| poisoned.into_inner())
                            .insert(id, decision);
                    }
                    Err(why) => eprintln!(
                        "qore: ignored a line on stdin that is not an approval decision: {why}: {}",
                        one_line(&line, 200)
                    ),
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_answers() {
        assert_eq!(parse_answer("y\n"), Some(ApprovalDecision::AllowOnce));
        assert_eq!(parse_answer(" YES "), Some(ApprovalDecision::AllowOnce));
        assert_eq!(parse_answer("a"), Some(ApprovalDecision::AllowSession));
        assert_eq!(parse_answer("always"), Some(ApprovalDecision::AllowSession));
        for no in ["", "n", "No", "  "] {
            assert_eq!(
                parse_answer(no),
                Some(ApprovalDecision::Deny { reason: None }),
                "{no:?}"
            );
        }
        assert_eq!(
            parse_answer("n  not on main "),
            Some(ApprovalDecision::Deny {
                reason: Some("not on main".into())
            })
        );
        for other in ["maybe", "y please", "ok"] {
            assert_eq!(parse_answer(other), None, "{other:?}");
        }
    }

    #[test]
    fn decision_lines() {
        assert_eq!(
            parse_decision(r#"{"id": "c1", "decision": "allow_once"}"#),
            Ok(("c1".into(), ApprovalDecision::AllowOnce))
        );
        assert_eq!(
            parse_decision(r#"{"id": "c2", "decision": "allow_session", "reason": null}"#),
            Ok(("c2".into(), ApprovalDecision::AllowSession))
        );
        assert_eq!(
            parse_decision(r#"{"id": "c3", "decision": "deny", "reason": "not now"}"#),
            Ok((
                "c3".into(),
                ApprovalDecision::Deny {
                    reason: Some("not now".into())
                }
            ))
        );
        for bad in [
            "yes",
            r#"{"decision": "deny"}"#,
            r#"{"id": "c", "decision": "maybe"}"#,
            r#"{"id": "c", "decision": "deny", "reason": 3}"#,
        ] {
            assert!(parse_decision(bad).is_err(), "{bad}");
        }
    }
}
