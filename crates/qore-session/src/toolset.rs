//! The tools a session offers: the built-in tools over a project, the approval policy, who
//! approves, and the loop's limits.
//!
//! Promises: the project must be a usable directory (an error names it otherwise); the
//! built-in tools read, write and run only inside it; the approver is the caller's (a front
//! end asks its user), and [`NobodyAsked`] serves the modes that never ask; the writing
//! tools record what they change into the set's recorder, which the session takes into each
//! stored turn (for undo); MCP servers' tools join the same registry ([`ToolSet::add_mcp`],
//! [`start_mcp`]) under the same policy: they need confirmation unless the mode is `auto`
//! (only a `trusted` server's `readOnlyHint` makes one a reading tool), and one the registry
//! refuses is a warning, not a failure of the set; skills add the read-only `skill` tool and
//! a prompt layer listing them ([`ToolSet::add_skills`], [`ToolSet::extend_layers`]).

use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;

use qore_client::tool_loop::{
    ApprovalDecision, ApprovalMode, ApprovalPolicy, ApprovalRequest, Approver, LoopConfig,
    ToolRegistry,
};
use qore_core::ErrorInfo;
use qore_mcp::config::McpConfig;
use qore_mcp::servers::McpTools;

use crate::layers::Layers;
use crate::skills::{SkillTool, Skills};
use qore_tools::{builtin_tools, ChangeRecorder, Sandbox, ToolOptions};

/// A session's tools, their policy and whoever approves them.
pub struct ToolSet {
    /// The tools, each with its compiled argument schema.
    pub registry: ToolRegistry,
    /// How calls are approved (mode and rules).
    pub policy: ApprovalPolicy,
    /// Who is asked when the policy says so.
    pub approver: Box<dyn Approver>,
    /// The loop's limits and tool protocol.
    pub config: LoopConfig,
    /// The protocol may still change to text when the model has no tool calling
    /// (`--tool-protocol auto`).
    pub auto_protocol: bool,
    /// What the writing tools changed in the turn so far (for undo); `None`: not recorded.
    pub recorder: Option<ChangeRecorder>,
    /// System prompt layers the tools bring (the skills' list), for the session's layers.
    pub prompt_layers: Vec<String>,
    /// The tools are on by the front end's default, nobody asked for them: a session leaves
    /// them out for a model that could only read them in a small prompt (see
    /// [`crate::session`]).
    pub by_default: bool,
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
        Self::builtin_with(
            project,
            mode,
            approver,
            config,
            auto_protocol,
            ToolOptions::default(),
        )
    }

    /// [`ToolSet::builtin`] with the tools' options (`[tools]` and `[sandbox]` settings: the
    /// allow-list, the operating-system sandbox of commands); the set's change recorder
    /// replaces `options.record_changes`.
    pub fn builtin_with(
        project: &Path,
        mode: ApprovalMode,
        approver: Box<dyn Approver>,
        config: LoopConfig,
        auto_protocol: bool,
        options: ToolOptions,
    ) -> Result<ToolSet, ErrorInfo> {
        let sandbox = Sandbox::new(project)
            .map_err(|err| ErrorInfo::config(format!("--project {}: {err}", project.display())))?;
        let mut registry = ToolRegistry::new();
        let recorder = ChangeRecorder::new();
        let options = ToolOptions {
            record_changes: Some(recorder.clone()),
            ..options
        };
        registry.extend(builtin_tools(sandbox, &options))?;
        Ok(ToolSet {
            registry,
            policy: ApprovalPolicy::new(mode),
            approver,
            config,
            auto_protocol,
            recorder: Some(recorder),
            prompt_layers: Vec::new(),
            by_default: false,
        })
    }
}

impl ToolSet {
    /// Register the started MCP servers' tools, as a source whose tools follow the servers'
    /// changes; the warnings name the tools the registry refused (a schema it cannot
    /// compile, a taken name).
    pub fn add_mcp(&mut self, mcp: &Arc<McpTools>) -> Vec<String> {
        (self.registry.add_source(mcp.clone()))
            .into_iter()
            .map(|err| format!("MCP tool left out: {}", err.message))
            .collect()
    }
}

impl ToolSet {
    /// Offer `skills`: their list as a prompt layer and the read-only `skill` tool (nothing
    /// without skills).
    pub fn add_skills(&mut self, skills: &Skills) -> Result<(), ErrorInfo> {
        let Some(layer) = skills.prompt_layer() else {
            return Ok(());
        };
        self.registry.add(Arc::new(SkillTool::new(skills)))?;
        self.prompt_layers.push(layer);
        Ok(())
    }

    /// Add the tools' prompt layers to `layers`.
    pub fn extend_layers(&self, layers: &mut Layers) {
        for layer in &self.prompt_layers {
            layers.add(layer.clone());
        }
    }
}

/// The MCP servers configured in `config_dir` (`config.toml`, `mcp.json`) and `project`'s
/// `.mcp.json`, started (a project's servers only when `allow_project`), with every
/// warning: config problems, servers that failed, project servers not started.
pub async fn start_mcp(
    config_dir: Option<&Path>,
    project: Option<&Path>,
    allow_project: bool,
) -> (Arc<McpTools>, Vec<String>) {
    let config = McpConfig::load(config_dir, project);
    let mut warnings: Vec<String> = config
        .errors
        .iter()
        .map(|e| format!("MCP config: {e}"))
        .collect();
    warnings.extend(config.warnings.iter().cloned());
    if config.servers.is_empty() {
        return (Arc::new(McpTools::default()), warnings);
    }
    let tools = McpTools::start(&config, [], allow_project).await;
    warnings.extend(tools.warnings());
    let skipped: Vec<&str> = tools
        .reports
        .iter()
        .filter(|r| r.status == qore_mcp::servers::Status::NotTrusted)
        .map(|r| r.config.name.as_str())
        .collect();
    if !skipped.is_empty() {
        warnings.push(format!(
            "MCP servers from the project's .mcp.json not started (a project's commands run \
             only once trusted: `qore mcp trust`): {}",
            skipped.join(", ")
        ));
    }
    (Arc::new(tools), warnings)
}
