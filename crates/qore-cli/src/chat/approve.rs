//! Tool approvals in an interactive chat: the question is asked through the chat's line
//! editor (a second reader of the terminal would steal the chat's next line), with the
//! answers of `qore run` (y, a, n, `n REASON`).
//!
//! Promises: Ctrl-C or Ctrl-D at the question denies the call and cancels the turn in
//! flight (the session keeps its earlier turns); `/approvals` lists the session's "always"
//! answers and revokes one ([`approvals`]); [`Asker`] is who asks in confirm mode, the
//! editor or JSON lines on the chat's stdin; on a terminal the editor also asks in the other
//! modes, for the calls that ask for more rights (which only a person grants).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use qore_client::tool_loop::{ApprovalDecision, ApprovalRequest, Approver, SessionApprovals};
use qore_core::ErrorInfo;
use serde_json::{json, Value};

use super::input::{Read, Terminal};
use super::interrupt::Interrupts;
use crate::approve::{
    answer_to, answers_taken, question, show_change, show_rights, JsonApprover, StdinLines,
};
use crate::diff::Shown;

/// Asks on the chat's terminal, after showing what the call would change.
#[derive(Clone)]
pub struct EditorApprover {
    pub terminal: Terminal,
    pub interrupts: Interrupts,
    pub shown: Shown,
}

impl Approver for EditorApprover {
    fn decide<'a>(
        &'a self,
        request: &'a ApprovalRequest,
    ) -> Pin<Box<dyn Future<Output = ApprovalDecision> + Send + 'a>> {
        Box::pin(async move {
            show_change(&self.shown, request);
            show_rights(request);
            let question = question(request, "session");
            loop {
                let answer = match self.terminal.read(&question, false).await {
                    Read::Line(answer) => answer,
                    Read::Interrupted | Read::End => {
                        self.interrupts.cancel_turn();
                        return ApprovalDecision::Deny {
                            reason: Some("the user interrupted".into()),
                        };
                    }
                };
                match answer_to(request, &answer) {
                    Some(decision) => return decision,
                    None => eprintln!("{}", answers_taken(request)),
                }
            }
        })
    }
}

/// `/approvals`: list `approvals`, or revoke the one of `revoke`; what to say (the JSON
/// line's type and fields, the text).
pub fn approvals(
    approvals: &SessionApprovals,
    revoke: Option<String>,
) -> Result<(&'static str, Value, String), ErrorInfo> {
    if let Some(tool) = revoke {
        if !approvals.revoke(&tool) {
            return Err(ErrorInfo::config(format!(
                "{tool} is not allowed always in this session (/approvals lists them)"
            )));
        }
        let text = format!("{tool} will be asked about again\n");
        return Ok(("revoked", json!({"tool": tool}), text));
    }
    let tools = approvals.list();
    let text = match tools.is_empty() {
        true => "no tool is allowed always in this session\n".to_owned(),
        false => format!("allowed always in this session: {}\n", tools.join(", ")),
    };
    Ok(("approvals", json!({"tools": tools}), text))
}

/// Who asks about tool calls in confirm mode: the editor, or JSON lines on the chat's stdin.
pub enum Asker {
    Editor(EditorApprover),
    Json(Arc<StdinLines>, Shown),
}

impl Asker {
    pub fn approver(&self) -> Box<dyn Approver> {
        match self {
            Asker::Editor(editor) => Box::new(editor.clone()),
            Asker::Json(stdin, shown) => {
                Box::new(JsonApprover::reading(stdin.clone(), shown.clone()))
            }
        }
    }
}
