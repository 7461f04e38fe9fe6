//! The tools a session offers: the built-in tools over a project, the approval policy, who
//! approves, and the loop's limits.
//!
//! Promises: the project must be a usable directory (an error names it otherwise); the
//! built-in tools read, write and run only inside it; the approver is the caller's (a front
//! end asks its user), and [`NobodyAsked`] serves the modes that never ask; the writing
//! tools record what they change into the set's recorder, which the session takes into each
//! stored turn (for undo).

use std::future::Future;
use std::path::Path;
use std::pin::Pin;

use qore_client::tool_loop::{
    ApprovalDecision, ApprovalMode, ApprovalPolicy, ApprovalRequest, Approver, LoopConfig,
    ToolRegistry,
};
use qore_core::ErrorInfo;
use qore_tools::{builtin_tools, ChangeRecorder, Sandbox, ToolOptions};

/// A session's tools, their policy and whoever approves them.
pub struct ToolSet {
    pub registry: ToolRegistry,
    pub policy: ApprovalPolicy,
    pub approver: Box<dyn Approver>,
    pub config: LoopConfig,
    /// The protocol may still change to text when the model has no tool calling
    /// (`--tool-protocol auto`).
    pub auto_protocol: bool,
    /// What the writing tools changed in the turn so far (for undo); `None`: not recorded.
    pub recorder: Option<ChangeRecorder>,
}

/// The approver of modes that never ask (`auto`, `read-only`): any request it gets is denied.
#[derive(Debug, Default, Clone, Copy)]
pub struct NobodyAsked;

impl Approver for NobodyAsked {
    fn decide<'a>(
        &'a self,
        _request: &'a ApprovalRequest,
    ) -> Pin<Box<dyn Future<Output = ApprovalDecision> + Send + 'a>> {
        Box::pin(async {
            ApprovalDecision::Deny {
                reason: Some("nobody can approve tool calls in this run".into()),
            }
        })
    }
}

impl ToolSet {
    /// The built-in tools over `project`, approved in `mode` by `approver`.
    pub fn builtin(
        project: &Path,
        mode: ApprovalMode,
        approver: Box<dyn Approver>,
        config: LoopConfig,
        auto_protocol: bool,
    ) -> Result<ToolSet, ErrorInfo> {
        let sandbox = Sandbox::new(project)
            .map_err(|err| ErrorInfo::config(format!("--project {}: {err}", project.display())))?;
        let mut registry = ToolRegistry::new();
        let recorder = ChangeRecorder::new();
        let options = ToolOptions {
            record_changes: Some(recorder.clone()),
            ..ToolOptions::default()
        };
        registry.extend(builtin_tools(sandbox, &options))?;
        Ok(ToolSet {
            registry,
            policy: ApprovalPolicy::new(mode),
            approver,
            config,
            auto_protocol,
            recorder: Some(recorder),
        })
    }
}
