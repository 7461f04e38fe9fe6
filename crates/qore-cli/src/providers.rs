//! `qore providers`: the inspecting commands (`list`, `show`, `test`, in [`crate::agents`])
//! and the two that keep a provider's API key in the OS keyring.
//!
//! Promises:
//! - `set-key NAME` reads the key from a prompt that does not echo it when stdin is a
//!   terminal, else the whole of stdin (trimmed), and stores it in the keyring entry the
//!   provider's key source names (`api_key_ref = "NAME"` or `keyring:NAME`, or a `keyring`
//!   table), as `llm keys set` does; `rm-key NAME` deletes that entry. Each says which store
//!   it used, on stderr; the key is never printed;
//! - a provider whose key does not come from the keyring (environment variable, file, no
//!   key), an unknown provider or an empty key is one error line and exit code 1, and
//!   nothing is stored.

use std::io::{IsTerminal as _, Read as _};
use std::process::ExitCode;

use qore_agents::os_keyring;
use qore_agents::providers::KeySource;

use crate::agents::{self, load};

#[derive(clap::Subcommand, Clone)]
pub enum ProvidersCommand {
    #[command(flatten)]
    Inspect(agents::ProvidersCommand),
    /// Store the instance's API key in the OS keyring, under the entry its api_key_ref
    /// names: typed at a prompt that does not echo it, or piped on stdin.
    SetKey { name: String },
    /// Delete the instance's API key from the OS keyring.
    RmKey { name: String },
}

pub async fn run(command: ProvidersCommand) -> ExitCode {
    let (name, set) = match command {
        ProvidersCommand::Inspect(command) => return agents::providers(command).await,
        ProvidersCommand::SetKey { name } => (name, true),
        ProvidersCommand::RmKey { name } => (name, false),
    };
    match keep_key(&name, set) {
        Ok(done) => {
            eprintln!("qore: {done}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("qore: {error}");
            ExitCode::from(1)
        }
    }
}

/// Store (`set`) or delete the key of provider `name`; what was done, or why not.
fn keep_key(name: &str, set: bool) -> Result<String, String> {
    let config = load();
    let provider = (config.providers.get(name)).ok_or_else(|| format!("no provider {name:?}"))?;
    let (service, user) = match &provider.key {
        KeySource::Keyring { service, user } => (service.as_str(), user.as_str()),
        other => {
            let from = match other {
                KeySource::Env(var) => format!("the environment variable {var}"),
                KeySource::File(path) => format!("the file {}", path.display()),
                _ => "nowhere: it needs none".to_owned(),
            };
            return Err(format!(
                "provider {name:?} takes its key from {from}, not the keyring; give it \
                 api_key_ref = \"ENTRY\" in {} to keep its key in the keyring",
                provider.source.display()
            ));
        }
    };
    let entry = format!("{service}/{user}");
    if !set {
        let store = os_keyring::remove(service, user)?;
        return Ok(format!(
            "removed the key of {name:?} (entry {entry}) from {}",
            store.describe()
        ));
    }
    let key = read_key(name)?;
    let store = os_keyring::write(service, user, &key)?;
    Ok(format!(
        "stored the key of {name:?} in {} (entry {entry})",
        store.describe()
    ))
}

/// The key from a prompt without echo (stdin a terminal), else all of stdin.
fn read_key(name: &str) -> Result<String, String> {
    if std::io::stdin().is_terminal() {
        return rpassword::prompt_password(format!("API key for {name}: "))
            .map_err(|err| format!("cannot read the key: {err}"));
    }
    let mut key = String::new();
    std::io::stdin()
        .read_to_string(&mut key)
        .map_err(|err| format!("cannot read the key from stdin: {err}"))?;
    Ok(key)
}
