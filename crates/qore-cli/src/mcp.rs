//! `qore mcp`: the configured MCP servers (`<config dir>/config.toml`'s `[mcp_servers]`,
//! `<config dir>/mcp.json`, the project's `.mcp.json`) listed, their tools shown, and stdio
//! servers added to or removed from `<config dir>/mcp.json`.
//!
//! Promises: `list` starts every enabled server (in parallel) to report its status and tool
//! count, and exits 0 whatever the servers do (config problems and failures are in the
//! report, on stderr); `tools NAME` starts that one server (also when disabled) and exits 1
//! when it cannot; a project's servers start here only when already trusted (nobody is
//! asked); `add`/`rm` touch only `<config dir>/mcp.json` and say which file they changed;
//! `serve` offers the built-in tools inside `--root` over stdio (stdout carries nothing but
//! the protocol), or streamable HTTP with `--http` (a bare port binds 127.0.0.1), the
//! reading ones unless `--allow-write`.
//!
//! A project's `.mcp.json` runs commands a repository brought: its servers start only once
//! trusted ([`project_trusted`]: asked once on a terminal, or `qore mcp trust`), and the
//! decision holds for that project and that file's content (qore-mcp's trust store,
//! `mcp-trust.json` in the data dir).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;
use comfy_table::{presets::NOTHING, Table};
use qore_core::Tool as _;
use qore_mcp::config::{user_json, McpConfig, ServerConfig};
use qore_mcp::edit::{add_server, remove_server};
use qore_mcp::servers::{McpTools, Status};
use qore_mcp::trust::{ProjectServers, TrustStore, TRUST_FILE};

use crate::console::{note, outln};
use crate::fail;

#[derive(Subcommand)]
pub enum McpCommand {
    /// The configured servers: where each comes from, its status and tool count (starts
    /// the enabled ones).
    List,
    /// The tools of server NAME, as models see them (starts it).
    Tools { name: String },
    /// Add a stdio server to <config dir>/mcp.json: `qore mcp add NAME [--env K=V]... --
    /// COMMAND ARGS...` (replaces a server of that name there).
    Add {
        name: String,
        /// An environment variable for the server (repeatable).
        #[arg(long = "env", value_name = "K=V", value_parser = env_pair)]
        env: Vec<(String, String)>,
        /// The command and its arguments, after `--`.
        #[arg(last = true, required = true, value_name = "COMMAND")]
        command: Vec<String>,
    },
    /// Remove server NAME from <config dir>/mcp.json.
    Rm { name: String },
    /// Serve qore's built-in tools over MCP on stdin/stdout, inside --root: the reading
    /// tools, and with --allow-write also those that write files and run commands.
    Serve {
        /// The directory the tools work in (default: the current directory).
        #[arg(long, value_name = "DIR")]
        root: Option<PathBuf>,
        #[arg(long)]
        allow_write: bool,
        /// Serve streamable HTTP instead, on PORT (127.0.0.1) or ADDR (HOST:PORT; port 0
        /// picks one); the server's URL is printed on stdout.
        #[arg(long, value_name = "PORT|ADDR", value_parser = http_addr)]
        http: Option<std::net::SocketAddr>,
    },
    /// Let the servers of a project's .mcp.json start (--deny: never), until the file
    /// changes.
    Trust {
        /// The project (default: the current directory).
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
        #[arg(long)]
        deny: bool,
    },
}

fn env_pair(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((key, value)) if !key.is_empty() => Ok((key.into(), value.into())),
        _ => Err(format!("expected K=V, not {text:?}")),
    }
}

fn http_addr(text: &str) -> Result<std::net::SocketAddr, String> {
    if let Ok(port) = text.parse::<u16>() {
        return Ok(std::net::SocketAddr::from(([127, 0, 0, 1], port)));
    }
    text.parse()
        .map_err(|_| format!("expected a port or HOST:PORT, not {text:?}"))
}

fn config_dir() -> Option<PathBuf> {
    qore_agents::config::default_dir()
}

fn load() -> McpConfig {
    let project = std::env::current_dir().ok();
    let config = McpConfig::load(config_dir().as_deref(), project.as_deref());
    for error in &config.errors {
        eprintln!("qore: {error}");
    }
    for warning in &config.warnings {
        note!("qore: {warning}");
    }
    config
}

pub async fn mcp(command: McpCommand) -> ExitCode {
    match command {
        McpCommand::List => list().await,
        McpCommand::Tools { name } => tools(&name).await,
        McpCommand::Add { name, env, command } => add(&name, env, &command),
        McpCommand::Rm { name } => rm(&name),
        McpCommand::Trust { project, deny } => trust(project, !deny),
        McpCommand::Serve {
            root,
            allow_write,
            http,
        } => serve(root, allow_write, http).await,
    }
}

fn status_text(status: &Status, tools: usize) -> String {
    match status {
        Status::Running => format!(
            "running, {tools} {}",
            if tools == 1 { "tool" } else { "tools" }
        ),
        Status::Disabled => "disabled".into(),
        Status::NotTrusted => "not started (project server, not trusted)".into(),
        Status::Failed(_) => "failed".into(),
    }
}

async fn list() -> ExitCode {
    let config = load();
    if config.servers.is_empty() {
        let place = config_dir().map(|d| user_json(&d).display().to_string());
        outln!(
            "no MCP servers configured (add one with `qore mcp add NAME -- COMMAND ARGS...`{})",
            place
                .map(|p| format!(", written to {p}"))
                .unwrap_or_default()
        );
        return ExitCode::SUCCESS;
    }
    let allow_project = std::env::current_dir().is_ok_and(|p| project_trusted(&p, false));
    let started = McpTools::start(&config, [], allow_project).await;
    let mut table = Table::new();
    table
        .load_preset(NOTHING)
        .set_header(["NAME", "STATUS", "PROTOCOL", "SOURCE"]);
    for report in &started.reports {
        table.add_row([
            report.config.name.clone(),
            status_text(&report.status, report.tools.len()),
            report.protocol.clone().unwrap_or_default(),
            report.config.source.display().to_string(),
        ]);
    }
    outln!("{table}");
    for warning in started.warnings() {
        eprintln!("qore: {warning}");
    }
    ExitCode::SUCCESS
}

async fn tools(name: &str) -> ExitCode {
    let config = load();
    let Some(server) = config.get(name) else {
        let known: Vec<&str> = config.servers.iter().map(|s| s.name.as_str()).collect();
        return fail(format!(
            "no MCP server '{name}' is configured (known: {})",
            if known.is_empty() {
                "none".into()
            } else {
                known.join(", ")
            }
        ));
    };
    let only = McpConfig {
        servers: vec![ServerConfig {
            enabled: true,
            ..server.clone()
        }],
        ..McpConfig::default()
    };
    let allow_project = std::env::current_dir().is_ok_and(|p| project_trusted(&p, false));
    let started = McpTools::start(&only, [], allow_project).await;
    let Some(report) = started.reports.first() else {
        return fail(format!("MCP server '{name}' did not start"));
    };
    match &report.status {
        Status::Running => {}
        Status::Failed(why) => return fail(why),
        other => return fail(format!("MCP server '{name}': {}", status_text(other, 0))),
    }
    let mut table = Table::new();
    table
        .load_preset(NOTHING)
        .set_header(["TOOL", "APPROVAL", "DESCRIPTION"]);
    for tool in &started.tools {
        let description = tool
            .spec()
            .description
            .lines()
            .next()
            .unwrap_or_default()
            .to_string();
        let approval = if tool.destructive() {
            "confirm"
        } else {
            "read-only"
        };
        table.add_row([tool.spec().name.clone(), approval.into(), description]);
    }
    outln!("{table}");
    ExitCode::SUCCESS
}

fn add(name: &str, env: Vec<(String, String)>, command: &[String]) -> ExitCode {
    let Some(dir) = config_dir() else {
        return fail("no config dir: set QORE_CONFIG_DIR or HOME");
    };
    let Some((program, args)) = command.split_first() else {
        return fail("give the server's command after `--`");
    };
    let path = user_json(&dir);
    let env: BTreeMap<String, String> = env.into_iter().collect();
    match add_server(&path, name, program, args, &env) {
        Ok(replaced) => {
            let verb = if replaced { "replaced" } else { "added" };
            outln!("{verb} MCP server '{name}' in {}", path.display());
            ExitCode::SUCCESS
        }
        Err(err) => fail(err),
    }
}

fn rm(name: &str) -> ExitCode {
    let Some(dir) = config_dir() else {
        return fail("no config dir: set QORE_CONFIG_DIR or HOME");
    };
    let path = user_json(&dir);
    match remove_server(&path, name) {
        Ok(true) => {
            outln!("removed MCP server '{name}' from {}", path.display());
            ExitCode::SUCCESS
        }
        Ok(false) => {
            let elsewhere = load()
                .get(name)
                .map(|s| {
                    format!(
                        " (it is configured in {}; edit that file)",
                        s.source.display()
                    )
                })
                .unwrap_or_default();
            fail(format!(
                "{} has no MCP server '{name}'{elsewhere}",
                path.display()
            ))
        }
        Err(err) => fail(err),
    }
}

fn trust_store() -> Result<TrustStore, String> {
    let dir = qore_store::data_dir().map_err(|e| e.to_string())?;
    TrustStore::open(&dir.join(TRUST_FILE)).map_err(|e| e.to_string())
}

/// Whether `project`'s `.mcp.json` servers may start: the remembered decision, else (when
/// `ask`) the answer to a question on the terminal, remembered.
pub fn project_trusted(project: &std::path::Path, ask: bool) -> bool {
    let Some(servers) = ProjectServers::of(project) else {
        return false;
    };
    let mut store = match trust_store() {
        Ok(store) => store,
        Err(err) => {
            note!("qore: {err}: the project's MCP servers are not started");
            return false;
        }
    };
    if let Some(decision) = store.decision(&servers) {
        return decision;
    }
    if !ask {
        return false;
    }
    let listed = McpConfig::load(None, Some(project));
    eprintln!(
        "qore: {}/.mcp.json wants to start these MCP servers:",
        servers.project.display()
    );
    for server in &listed.servers {
        eprintln!("  {}: {}", server.name, describe(server));
    }
    eprint!("Start them (remembered until the file changes)? [y/N] ");
    let mut answer = String::new();
    let trusted = std::io::stdin().read_line(&mut answer).is_ok()
        && matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes");
    if let Err(err) = store.remember(&servers, trusted) {
        note!("qore: {err}: the answer holds for this run only");
    }
    trusted
}

fn describe(server: &ServerConfig) -> String {
    match &server.transport {
        qore_mcp::config::Transport::Stdio { command, args, .. } => {
            std::iter::once(command.as_str())
                .chain(args.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" ")
        }
        qore_mcp::config::Transport::Http { url, .. } => url.clone(),
    }
}

fn trust(project: Option<PathBuf>, trusted: bool) -> ExitCode {
    let project = match project.map(Ok).unwrap_or_else(std::env::current_dir) {
        Ok(project) => project,
        Err(err) => return fail(format!("the current directory cannot be used: {err}")),
    };
    let Some(servers) = ProjectServers::of(&project) else {
        return fail(format!("{} has no .mcp.json", project.display()));
    };
    let result = trust_store()
        .and_then(|mut store| store.remember(&servers, trusted).map_err(|e| e.to_string()));
    match result {
        Ok(()) => {
            let verb = if trusted { "trusted" } else { "denied" };
            outln!(
                "{verb}: the MCP servers of {}/.mcp.json",
                servers.project.display()
            );
            ExitCode::SUCCESS
        }
        Err(err) => fail(err),
    }
}

async fn serve(
    root: Option<PathBuf>,
    allow_write: bool,
    http: Option<std::net::SocketAddr>,
) -> ExitCode {
    let root = match root.map(Ok).unwrap_or_else(std::env::current_dir) {
        Ok(root) => root,
        Err(err) => return fail(format!("the current directory cannot be used: {err}")),
    };
    let sandbox = match qore_tools::Sandbox::new(&root) {
        Ok(sandbox) => sandbox,
        Err(err) => return fail(format!("--root {}: {err}", root.display())),
    };
    // `run_command` (with --allow-write) under config.toml's [sandbox] and [tools], as in
    // `qore chat`. Nobody here can grant more rights: they are not offered, and a call
    // asking for them anyway runs under the policy (`Tool::call` never widens it).
    let mut options = match crate::sandbox::tool_options(&root) {
        Ok(options) => options,
        Err(err) => return fail(err.message),
    };
    if let Some(sandbox) = options.sandbox.as_mut() {
        sandbox.escalation = qore_tools::Escalation::Never;
    }
    let tools = qore_tools::builtin_tools(sandbox, &options)
        .into_iter()
        .filter(|tool| allow_write || !tool.destructive())
        .collect();
    let server = qore_mcp::serve::ToolServer::new(tools);
    let served = match http {
        Some(addr) => {
            let bound = |addr| {
                outln!("http://{addr}/mcp");
            };
            server.serve_http(addr, bound).await
        }
        None => server.serve_stdio().await,
    };
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => fail(err),
    }
}
