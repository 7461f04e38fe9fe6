//! Tool approvals in an interactive chat: the question is asked through the chat's line
//! editor (a second reader of the terminal would steal the chat's next line), with the
//! answers of `qore run` (y, a, n, `n REASON`).
//!
//! Promises: Ctrl-C or Ctrl-D at the question denies the call and cancels the turn in
//! flight (the session keeps its earlier turns).

use std::future::Future;
use std::pin::Pin;

use qore_client::tool_loop::{ApprovalDecision, ApprovalRequest, Approver};

use super::input::{Read, Terminal};
use super::interrupt::Interrupts;
use crate::approve::parse_answer;

/// Asks on the chat's terminal.
#[derive(Clone)]
pub struct EditorApprover {
    pub terminal: Terminal,
    pub interrupts: Interrupts,
}

impl Approver for EditorApprover {
    fn decide<'a>(
        &'a self,
        request: &'a ApprovalRequest,
    ) -> Pin<Box<dyn Future<Output = ApprovalDecision> + Send + 'a>> {
        Box::pin(async move {
            let tool = &request.tool;
            let question = format!(
                "qore: run {tool} {}? [y] yes, [a] always for {tool} in this session, [N] no \
                 (n REASON tells the model why): ",
                request.arguments
            );
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
                match parse_answer(&answer) {
                    Some(decision) => return decision,
                    None => eprintln!("qore: answer y, a or n"),
                }
            }
        })
    }
}
