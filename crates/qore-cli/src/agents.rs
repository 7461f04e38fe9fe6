//! `qore agents …`, `qore providers …`, `qore config init`, and what `qore run --agent`
//! needs: thin wiring over `qore-agents` (loading, validation, rendering live there).

use std::path::PathBuf;
use std::process::ExitCode;

use comfy_table::{presets::NOTHING, Table};
use qore_agents::config::{default_dir, Config};
use qore_agents::profile::ProfileFile;
use qore_agents::providers::KeySource;
use qore_agents::{AgentError, Catalog};
use qore_client::{Client, RequestOptions};
use qore_core::{ErrorInfo, History, Message};
use qore_tools::{builtin_tools, Sandbox};

use crate::console::outln;
use crate::output::Output;

const FAILURE: u8 = 1;

#[derive(clap::Subcommand, Clone)]
pub enum AgentsCommand {
    /// The agents (bundled and yours), with provider and model.
    List {
        /// Also abstract and hidden ones.
        #[arg(long)]
        all: bool,
    },
    /// An agent after `extends`, and the files it came from.
    Show { name: String },
    /// Load and validate every agent, or FILEs (profiles) against the others.
    Validate { files: Vec<PathBuf> },
    /// Print the exact body the agent would send for PROMPT.
    Render {
        name: String,
        #[arg(long)]
        prompt: String,
        #[arg(long)]
        model: Option<String>,
    },
    /// Persist MODEL as the agent's model.
    SetModel { name: String, model: String },
    /// Which agent a roster of pipelines.toml picks for FILE (first whose [match] accepts).
    Route {
        /// code_completion, chat, compression or refactor.
        #[arg(long, default_value = "code_completion")]
        roster: String,
        #[arg(long)]
        project: Option<String>,
        file: PathBuf,
    },
}

#[derive(clap::Subcommand, Clone)]
pub enum ProvidersCommand {
    /// The provider instances (built-in and yours).
    List,
    /// One instance: protocol, URL, where its key comes from (never the key).
    Show { name: String },
    /// List the instance's models: checks the URL and the key.
    Test { name: String },
}

pub fn load() -> Config {
    Config::load(default_dir().as_deref())
}

/// `word`, with an `s` unless `n` is 1.
pub fn plural(n: usize, word: &str) -> String {
    match n {
        1 => word.to_owned(),
        _ => format!("{word}s"),
    }
}

fn fail(error: &ErrorInfo) -> ExitCode {
    Output::new(false).error(error);
    ExitCode::from(FAILURE)
}

fn print_problems(errors: &[AgentError], warnings: &[qore_agents::Warning]) {
    for warning in warnings {
        eprintln!("warning: {warning}");
    }
    for error in errors {
        eprintln!("error: {error}");
    }
}

pub fn agents(command: AgentsCommand) -> ExitCode {
    match command {
        AgentsCommand::List { all } => {
            let config = load();
            let mut table = Table::new();
            table
                .load_preset(NOTHING)
                .set_header(["NAME", "PROVIDER", "MODEL", "DESCRIPTION"]);
            for agent in config
                .catalog
                .all()
                .filter(|a| all || !(a.is_abstract || a.hidden))
            {
                let model = config.overrides.get(&agent.name).or(agent.model.as_ref());
                let mut notes = Vec::new();
                if agent.is_abstract {
                    notes.push("abstract".to_owned());
                }
                if agent.hidden {
                    notes.push("hidden".to_owned());
                }
                if agent.replaces.is_some() {
                    notes.push("replaces a bundled agent".to_owned());
                }
                notes.extend(agent.badges());
                let notes = match notes.is_empty() {
                    true => String::new(),
                    false => format!(" ({})", notes.join(", ")),
                };
                table.add_row([
                    agent.name.clone(),
                    agent.provider.clone().unwrap_or_else(|| "-".to_owned()),
                    model.map_or("-", String::as_str).to_owned(),
                    format!("{}{notes}", agent.description),
                ]);
            }
            if let Some(first) = table.column_mut(0) {
                first.set_padding((0, 1));
            }
            for line in table.lines() {
                outln!("{}", line.trim_end());
            }
            print_problems(&config.catalog.errors, &[]);
            ExitCode::SUCCESS
        }
        AgentsCommand::Show { name } => {
            let config = load();
            let Some(agent) = config.catalog.get(&name) else {
                return fail(&ErrorInfo::config(format!("no agent {name:?}")));
            };
            outln!("# {name}");
            for (n, source) in agent.sources.iter().enumerate() {
                let role = if n == 0 { "defined in" } else { "extends" };
                outln!("# {role} {}", source.display());
            }
            if let Some(bundled) = &agent.replaces {
                outln!("# replaces the bundled profile {}", bundled.display());
            }
            if let Some(model) = config.overrides.get(&name) {
                outln!("# model override (agent_models.toml): {model}");
            }
            let text = toml::to_string_pretty(&agent.merged).unwrap_or_default();
            outln!("{}", text.trim_end());
            ExitCode::SUCCESS
        }
        AgentsCommand::Validate { files } => validate(files),
        AgentsCommand::Render {
            name,
            prompt,
            model,
        } => {
            let config = load();
            let rendered = config
                .resolve(&name, model.as_deref())
                .and_then(|resolved| {
                    let agent = &resolved.renderer.agent;
                    let mut history = History::new();
                    let dir = std::env::current_dir().ok();
                    if let Some(system) = config.system_prompt(agent, dir.as_deref())? {
                        history.push(Message::system(system));
                    }
                    history.push(Message::user(prompt));
                    // The built-in tools over the current directory, as `qore run` offers them
                    // (its allow-list and sandbox from config.toml).
                    let tools = match (agent.enable_tools, dir.as_deref()) {
                        (true, Some(dir)) => match Sandbox::new(dir) {
                            Ok(sandbox) => {
                                builtin_tools(sandbox, &crate::sandbox::tool_options(dir)?)
                                    .iter()
                                    .map(|t| t.spec().clone())
                                    .collect()
                            }
                            Err(_) => Vec::new(),
                        },
                        _ => Vec::new(),
                    };
                    resolved
                        .renderer
                        .chat_body(&history, &tools, &RequestOptions::default())
                });
            match rendered {
                Ok(body) => {
                    outln!("{}", String::from_utf8_lossy(&body));
                    ExitCode::SUCCESS
                }
                Err(error) => fail(&error),
            }
        }
        AgentsCommand::Route {
            roster,
            project,
            file,
        } => {
            let config = load();
            let p = &config.pipelines;
            let names = match roster.as_str() {
                "code_completion" => &p.code_completion,
                "chat" => &p.chat,
                "compression" => &p.compression,
                "refactor" => &p.refactor,
                other => return fail(&ErrorInfo::config(format!("no roster {other:?}"))),
            };
            let target = qore_agents::routing::Target {
                file: Some(&file),
                project_name: project.as_deref(),
            };
            match qore_agents::routing::pick(&config.catalog, names, &target) {
                Some(agent) => {
                    outln!("{}", agent.name);
                    ExitCode::SUCCESS
                }
                None => fail(&ErrorInfo::config(format!(
                    "no agent of the {roster} roster matches {}",
                    file.display()
                ))),
            }
        }
        AgentsCommand::SetModel { name, model } => {
            let mut config = load();
            match config.set_model(&name, &model) {
                Ok(path) => {
                    outln!("{name}: model {model} (saved in {})", path.display());
                    ExitCode::SUCCESS
                }
                Err(error) => fail(&error),
            }
        }
    }
}

fn validate(files: Vec<PathBuf>) -> ExitCode {
    let config = load();
    let (checked, errors, warnings) = if files.is_empty() {
        validate_config(&config)
    } else {
        validate_files(&config, &files)
    };
    print_problems(&errors, &warnings);
    match errors.is_empty() {
        true => {
            outln!("{checked} {} valid", plural(checked, "agent"));
            ExitCode::SUCCESS
        }
        false => {
            eprintln!("{} {}", errors.len(), plural(errors.len(), "problem"));
            ExitCode::from(FAILURE)
        }
    }
}

type Checked = (usize, Vec<AgentError>, Vec<qore_agents::Warning>);

/// Every profile of the config (bundled and the user's), pipelines and providers.
fn validate_config(config: &Config) -> Checked {
    let mut errors: Vec<AgentError> = config.catalog.errors.clone();
    errors.extend(config.errors.iter().cloned());
    for agent in config.catalog.all() {
        if let Err(err) = config.validate(agent) {
            errors.push(err);
        }
    }
    let count = config.catalog.all().count();
    (count, errors, config.catalog.warnings.clone())
}

/// `files`, loaded on top of the bundled profiles as if they were in `agents/`.
fn validate_files(config: &Config, files: &[PathBuf]) -> Checked {
    let mut errors = Vec::new();
    let mut extra = Vec::new();
    for path in files {
        match ProfileFile::read(path) {
            Ok(file) => extra.push(file),
            Err(err) => errors.push(err),
        }
    }
    let names: Vec<String> = extra.iter().map(ProfileFile::name).collect();
    let catalog = Catalog::with_user_files(extra);
    errors.extend(catalog.errors.iter().cloned());
    for agent in names.iter().filter_map(|n| catalog.get(n)) {
        if let Err(err) = config.validate(agent) {
            errors.push(err);
        }
    }
    (names.len(), errors, catalog.warnings.clone())
}

pub async fn providers(command: ProvidersCommand) -> ExitCode {
    let config = load();
    print_problems(&config.errors, &[]);
    match command {
        ProvidersCommand::List => {
            for p in config.providers.all() {
                outln!("{:<20} {:<18} {}", p.name, p.protocol, p.url);
            }
            ExitCode::SUCCESS
        }
        ProvidersCommand::Show { name } => {
            let Some(p) = config.providers.get(&name) else {
                return fail(&ErrorInfo::config(format!("no provider {name:?}")));
            };
            outln!("name      {}", p.name);
            outln!("protocol  {}", p.protocol);
            outln!("url       {}", p.url);
            let key = match &p.key {
                KeySource::None => "none".to_owned(),
                KeySource::Env(var) => format!("environment variable {var}"),
                KeySource::File(path) => format!("file {}", path.display()),
                KeySource::Keyring { service, user } => format!("keyring {service}/{user}"),
            };
            outln!("key       {key}");
            for header in p.headers.keys() {
                outln!("header    {header}: (set)");
            }
            outln!("source    {}", p.source.display());
            ExitCode::SUCCESS
        }
        ProvidersCommand::Test { name } => {
            let Some(p) = config.providers.get(&name) else {
                return fail(&ErrorInfo::config(format!("no provider {name:?}")));
            };
            let listed = async {
                let protocol = qore_client::protocols::by_name(&p.protocol).ok_or_else(|| {
                    ErrorInfo::config(format!("unknown protocol {:?}", p.protocol))
                })?;
                let client = Client::new(protocol, p.client_config(None)?)?;
                client.list_models().await
            };
            match listed.await {
                Ok(models) => {
                    outln!(
                        "{name}: ok, {} {}",
                        models.len(),
                        plural(models.len(), "model")
                    );
                    ExitCode::SUCCESS
                }
                Err(error) => fail(&error),
            }
        }
    }
}

pub fn config_init() -> ExitCode {
    let Some(dir) = default_dir() else {
        return fail(&ErrorInfo::config(
            "no config dir: set QORE_CONFIG_DIR or HOME",
        ));
    };
    match Config::init(&dir) {
        Ok(written) => {
            for path in &written {
                outln!("wrote {}", path.display());
            }
            if written.is_empty() {
                outln!("{} already has a config; nothing written", dir.display());
            }
            ExitCode::SUCCESS
        }
        Err(error) => fail(&error),
    }
}
