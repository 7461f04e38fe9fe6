//! The tools of a `qore run`: which mode the flags and the terminal ask for, and who
//! approves the calls; the tools themselves are qore-session's [`ToolSet`].
//!
//! Promises: the mode follows `--tools` and `--yes`, defaulting to `confirm` when someone
//! can be asked (stdin and stderr a terminal) and `off` otherwise; `confirm` with nobody to
//! ask becomes `read-only` (stderr says so) unless `--yes`; the project is `--project` or
//! the current directory, and one that cannot be used is an error naming it; with tools on,
//! a default mode marks the tool set `by_default` (the session leaves such tools out for a
//! model with no tool calling and a small context); the configured MCP servers start once
//! per process ([`mcp_tools`]) and their tools join every tool set, each server that fails
//! a warning on stderr; the skills of the config dir
//! and the project join too (a broken one is a warning); commands run in the sandbox of the
//! `[sandbox]` settings and `[tools] allowed_commands` (see the `sandbox` module); in
//! `auto` and `read-only` the terminal, when there is one, is still asked about the calls
//! that want more rights (nobody else can grant them; without a terminal they are refused).

use qore_client::tool_loop::{ApprovalMode, Approver, LoopConfig, ToolProtocol as LoopProtocol};
use std::sync::Arc;

use qore_core::ErrorInfo;
use qore_mcp::servers::McpTools;
use qore_session::skills::Skills;
use qore_session::ToolSet;

use crate::approve::{JsonApprover, NobodyAsked, TerminalApprover};
use crate::console::note;
use crate::diff::Shown;
use crate::{ToolArgs, ToolProtocol, ToolsMode};

/// The tool mode the arguments ask for, given whether stdin and stderr are a terminal (see
/// `--tools` in `qore run --help`); `None` when no tools are offered.
pub fn approval_mode(args: &ToolArgs, json: bool, interactive: bool) -> Option<ApprovalMode> {
    let asked = match args.tools {
        Some(mode) => mode,
        None if args.yes => ToolsMode::Auto,
        None if interactive => ToolsMode::Confirm,
        None => ToolsMode::Off,
    };
    Some(match asked {
        ToolsMode::Off => return None,
        ToolsMode::ReadOnly => ApprovalMode::ReadOnly,
        ToolsMode::Auto => ApprovalMode::Auto,
        ToolsMode::Confirm if args.yes => ApprovalMode::Auto,
        ToolsMode::Confirm if json || interactive => ApprovalMode::Confirm,
        ToolsMode::Confirm => {
            note!(
                "qore: no terminal to ask on, so tool calls cannot be confirmed: tools are \
                 read-only (--yes runs every call, --json answers approval requests on stdin)"
            );
            ApprovalMode::ReadOnly
        }
    })
}

/// Someone can be asked: stdin to answer, stderr to show the question.
fn interactive() -> bool {
    use std::io::IsTerminal as _;
    std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

pub fn project_dir(args: &ToolArgs) -> Result<std::path::PathBuf, ErrorInfo> {
    match &args.project {
        Some(dir) => Ok(dir.clone()),
        None => std::env::current_dir().map_err(|err| {
            ErrorInfo::config(format!(
                "the current directory cannot be used as the project: {err}; pass --project"
            ))
        }),
    }
}

/// The configured MCP servers, started, when tools are on (`mode` is some); their warnings
/// go to stderr. The project's `.mcp.json` servers start when trusted (asked on the terminal
/// when `interactive` and not yet decided).
pub async fn mcp_tools(
    args: &ToolArgs,
    mode: Option<ApprovalMode>,
    interactive: bool,
) -> Option<Arc<McpTools>> {
    mode?;
    let project = project_dir(args).ok();
    let config_dir = qore_agents::config::default_dir();
    let allow_project = project
        .as_deref()
        .is_some_and(|p| crate::mcp::project_trusted(p, interactive));
    let (tools, warnings) =
        qore_session::start_mcp(config_dir.as_deref(), project.as_deref(), allow_project).await;
    for warning in warnings {
        note!("qore: {warning}");
    }
    Some(tools)
}

/// The built-in tools over the project and the MCP servers' tools, or `None` for `--tools
/// off`; `agent` (`--agent`): the profile whose `[sandbox]` and `[tools]` win over
/// config.toml's.
pub fn tool_set(
    args: &ToolArgs,
    agent: Option<&str>,
    mode: Option<ApprovalMode>,
    json: bool,
    mcp: Option<&Arc<McpTools>>,
) -> Result<Option<ToolSet>, ErrorInfo> {
    let Some(mode) = mode else {
        return Ok(None);
    };
    let project = project_dir(args)?;
    let approver: Box<dyn Approver> = match mode {
        ApprovalMode::Confirm if json => Box::new(JsonApprover::reading(
            Default::default(),
            Shown::for_project(&project),
        )),
        ApprovalMode::Confirm => Box::new(TerminalApprover::showing(Shown::for_project(&project))),
        // Asked only about calls that want more rights, which only a person grants.
        ApprovalMode::Auto | ApprovalMode::ReadOnly if !json && interactive() => {
            Box::new(TerminalApprover::showing(Shown::for_project(&project)))
        }
        ApprovalMode::Auto | ApprovalMode::ReadOnly => Box::new(NobodyAsked),
    };
    let config = LoopConfig {
        max_rounds: args.max_rounds,
        tool_protocol: match args.tool_protocol {
            ToolProtocol::Text => LoopProtocol::Text,
            ToolProtocol::Native | ToolProtocol::Auto => LoopProtocol::Native,
        },
        ..LoopConfig::default()
    };
    let auto = args.tool_protocol == ToolProtocol::Auto;
    let options = crate::sandbox::in_force(&project, agent)?.options;
    let mut tools = ToolSet::builtin_with(&project, mode, approver, config, auto, options)?;
    let skills = Skills::load(
        qore_agents::config::default_dir().as_deref(),
        Some(&project),
    );
    for warning in &skills.warnings {
        note!("qore: {warning}");
    }
    tools.add_skills(&skills)?;
    // On by the terminal's default, not asked for: the session may leave them out.
    tools.by_default = args.tools.is_none() && !args.yes;
    if let Some(mcp) = mcp {
        for warning in tools.add_mcp(mcp) {
            note!("qore: {warning}");
        }
    }
    Ok(Some(tools))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(
        tools: Option<ToolsMode>,
        yes: bool,
        json: bool,
        interactive: bool,
    ) -> Option<ApprovalMode> {
        let args = ToolArgs {
            tools,
            tool_protocol: ToolProtocol::Native,
            max_rounds: 25,
            project: None,
            yes,
        };
        approval_mode(&args, json, interactive)
    }

    #[test]
    fn the_tool_mode_follows_the_flags_and_the_terminal() {
        use ApprovalMode::{Auto, Confirm, ReadOnly};
        use ToolsMode as T;
        // Defaults: confirm on a terminal, off for scripts; --yes alone is auto.
        assert_eq!(mode(None, false, false, true), Some(Confirm));
        assert_eq!(mode(None, false, true, true), Some(Confirm));
        assert_eq!(mode(None, false, false, false), None);
        assert_eq!(mode(None, false, true, false), None);
        assert_eq!(mode(None, true, false, false), Some(Auto));
        // Explicit modes.
        assert_eq!(mode(Some(T::Off), false, false, true), None);
        assert_eq!(mode(Some(T::ReadOnly), false, false, true), Some(ReadOnly));
        assert_eq!(mode(Some(T::Auto), false, false, false), Some(Auto));
        // Confirm needs someone to ask: the terminal or a JSON peer; else read-only, or
        // auto with --yes.
        assert_eq!(mode(Some(T::Confirm), false, false, true), Some(Confirm));
        assert_eq!(mode(Some(T::Confirm), false, true, false), Some(Confirm));
        assert_eq!(mode(Some(T::Confirm), false, false, false), Some(ReadOnly));
        assert_eq!(mode(Some(T::Confirm), true, false, false), Some(Auto));
        assert_eq!(mode(Some(T::Confirm), true, true, true), Some(Auto));
    }
}
