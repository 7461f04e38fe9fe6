//! The router target: a request's `model` string resolved into a plan by
//! [`Router::plan_for`], on a config of its own (the bundled agents, a few of ours, and
//! providers at an address where nothing listens: reaching a target does no I/O, and the
//! local model server is never started).
//!
//! Input: one byte of flags (bit 0: fill in the middle, else chat; bit 1: a `max_tokens`,
//! bit 2: a `temperature`, both from the high bits), then the `model` string (UTF-8, as a
//! JSON string decodes; other bytes are no request). Promises:
//! - the same plan from the server's router (whose cache every earlier input filled) as from
//!   a fresh one: the cache never answers for another name, job or baked setting;
//! - a name is [`ErrorKind::NotFound`] (naming `model`) exactly when, for chat, the router
//!   does not know it; a refusal is never a 500 (a provider without its key is the 502 of
//!   an upstream that cannot be asked, a profile that cannot be reached a 400);
//! - a plan starts with the name asked, as the agent when the catalog has one by that name
//!   (an agent wins over a `provider/model` reading), else as `provider/model` of a known
//!   provider; the rest are the agent's `fallbacks`, in order, those that can be reached.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use qore_agents::config::Config;
use qore_session::provider_target::split_provider_model;
use qore_session::SessionManager;

use crate::route::{is_chat_agent, Baked, Candidate, Job, Router};
use crate::{ErrorKind, ServeError};

/// The agents of the target's config (on top of the bundled ones).
const AGENTS: &[(&str, &str)] = &[
    (
        "fuzz-chat.toml",
        "schema_version = 1\nname = \"fuzz-chat\"\nextends = \"base-openai-chat\"\n\
         provider = \"up\"\nmodel = \"m\"\n\
         fallbacks = [\"fuzz-fim\", \"up/other\", \"nobody\", \"fuzz-plain\", \"local/default\"]\n",
    ),
    (
        "fuzz-plain.toml",
        "schema_version = 1\nname = \"fuzz-plain\"\nprovider = \"up\"\nmodel = \"m2\"\n",
    ),
    (
        "fuzz-fim.toml",
        "schema_version = 1\nname = \"fuzz-fim\"\nextends = \"llamacpp-completion\"\n\
         provider = \"local\"\n",
    ),
    // An agent whose name reads as provider/model: the agent wins.
    (
        "fuzz-slash.toml",
        "schema_version = 1\nname = \"up/slash\"\nextends = \"base-openai-chat\"\n\
         provider = \"up\"\nmodel = \"m3\"\n",
    ),
];

/// The providers: ours, and `local` moved off the local server's address.
const PROVIDERS: &[(&str, &str)] = &[
    (
        "up.toml",
        "name = \"up\"\nprotocol = \"openai-chat\"\nurl = \"http://127.0.0.1:9/v1\"\n",
    ),
    (
        "ant.toml",
        "name = \"ant\"\nprotocol = \"anthropic\"\nurl = \"http://127.0.0.1:9\"\n",
    ),
    (
        "local.toml",
        "name = \"local\"\nprotocol = \"llamacpp\"\nurl = \"http://127.0.0.1:9/v1\"\n",
    ),
];

/// Model names worth starting from, each as chat and as fill-in-the-middle.
pub fn route_seeds() -> Vec<Vec<u8>> {
    let names = [
        "fuzz-chat",
        "fuzz-plain",
        "fuzz-fim",
        "up/slash",
        "up/m",
        "up/meta/llama-3",
        "ant/claude-sonnet-4-5",
        "local/default",
        "openai/gpt-4.1",
        "local-chat",
        "local-completion",
        "base-openai-chat",
        "nobody",
        "/x",
        "x/",
    ];
    let flags = [0u8, 1, 0b1010_0110];
    (names.iter())
        .flat_map(|name| flags.map(|f| [&[f], name.as_bytes()].concat()))
        .collect()
}

struct World {
    runtime: tokio::runtime::Runtime,
    manager: SessionManager,
    router: Router,
    project: PathBuf,
}

/// Write the config files into a fresh directory, load them, and remove the directory.
fn load_config() -> Config {
    let dir = std::env::temp_dir().join(format!("qore-fuzz-route-{}", std::process::id()));
    let write = |sub: &str, files: &[(&str, &str)]| {
        let at = dir.join(sub);
        std::fs::create_dir_all(&at).unwrap_or_else(|e| panic!("{}: {e}", at.display()));
        for (name, text) in files {
            let path = at.join(name);
            std::fs::write(&path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        }
    };
    write("agents", AGENTS);
    write("providers", PROVIDERS);
    let mut config = Config::load(Some(&dir));
    let _ = std::fs::remove_dir_all(&dir);
    config.dir = None;
    assert!(
        config.errors.is_empty() && config.catalog.errors.is_empty(),
        "the fuzz config loads: {:?} {:?}",
        config.errors,
        config.catalog.errors
    );
    config
}

fn world() -> &'static World {
    static WORLD: OnceLock<World> = OnceLock::new();
    WORLD.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap_or_else(|e| panic!("a runtime: {e}"));
        let notes: qore_session::Notes = Arc::new(|_: &str| {});
        let manager = SessionManager::new(None, load_config(), notes);
        // A project that does not exist: system prompts read no files of the machine's.
        let project = std::env::temp_dir().join("qore-fuzz-route-no-project");
        World {
            runtime,
            manager,
            router: Router::new(Some(project.clone())),
            project,
        }
    })
}

/// What a plan is, comparably: each candidate's name, agent, model, wire and baked options.
type Summary = Vec<(
    String,
    Option<String>,
    String,
    String,
    Option<u32>,
    Option<u64>,
)>;

fn summary(plan: &Result<Vec<Candidate>, ServeError>) -> Result<Summary, ServeError> {
    let plan = plan.as_ref().map_err(Clone::clone)?;
    Ok((plan.iter())
        .map(|c| {
            let target = &c.target;
            (
                c.name.clone(),
                c.agent.clone(),
                target.model.clone(),
                target.client.protocol().name().to_owned(),
                target.options.max_tokens,
                target.options.temperature.map(f64::to_bits),
            )
        })
        .collect())
}

/// The router target.
pub fn route(data: &[u8]) {
    let Some((&flags, name)) = data.split_first() else {
        return;
    };
    let Ok(name) = std::str::from_utf8(name) else {
        return;
    };
    let job = match flags & 1 {
        0 => Job::Chat,
        _ => Job::Fim,
    };
    let high = flags >> 3;
    let baked = Baked {
        max_tokens: (flags & 2 != 0).then_some(u32::from(high) * 64),
        temperature: (flags & 4 != 0).then_some(f64::from(high) / 16.0),
    };
    let world = world();
    let manager = &world.manager;
    let plan = |router: &Router| {
        let planned = world
            .runtime
            .block_on(router.plan_for(manager, name, baked, job));
        summary(&planned)
    };
    let shared = plan(&world.router);
    let fresh = plan(&Router::new(Some(world.project.clone())));
    assert_eq!(
        shared, fresh,
        "{name:?} {job:?} {baked:?}: the cache changed the plan"
    );
    let catalog = &manager.config().catalog;
    let providers = &manager.config().providers;
    let plan = match shared {
        Ok(plan) => plan,
        Err(error) => {
            assert_ne!(error.kind, ErrorKind::Internal, "{name:?}: {error:?}");
            let not_found = error.kind == ErrorKind::NotFound;
            if not_found {
                assert_eq!(error.param.as_deref(), Some("model"), "{error:?}");
            }
            if job == Job::Chat {
                let knows = world.router.knows(manager, name);
                assert_eq!(knows, !not_found, "{name:?}: known, and {error:?}");
            }
            return;
        }
    };
    let (first, rest) = plan
        .split_first()
        .unwrap_or_else(|| panic!("{name:?}: empty plan"));
    assert_eq!(first.0, name, "the plan starts with the name asked");
    let agent = catalog.get(name).filter(|a| !a.is_abstract);
    match (job, agent) {
        (Job::Chat, _) if is_chat_agent(manager, name) => {
            assert_eq!(first.1.as_deref(), Some(name), "{name:?}: the agent wins")
        }
        (Job::Fim, Some(_)) => {
            assert_eq!(first.1.as_deref(), Some(name), "{name:?}: the agent wins")
        }
        _ => {
            assert_eq!(first.1, None, "{name:?}: no agent by that name");
            let provider = split_provider_model(name).map(|(p, _)| p);
            assert!(
                provider.is_some_and(|p| providers.get(p).is_some()),
                "{name:?}: a plan without an agent is provider/model of a known provider"
            );
        }
    }
    let fallbacks = match &first.1 {
        Some(agent) => catalog.get(agent).map(|a| a.fallbacks.clone()),
        None => None,
    };
    let fallbacks = fallbacks.unwrap_or_default();
    let mut pending = fallbacks.iter();
    for candidate in rest {
        assert!(
            pending.any(|f| *f == candidate.0),
            "{name:?}: {} is not one of the fallbacks {fallbacks:?}, in order",
            candidate.0
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The target's config reaches what its properties are about: plans with agents and
    /// fallbacks, `provider/model`, an agent named like `provider/model`, refusals.
    #[test]
    fn the_config_plans_as_written() {
        let world = world();
        let plan = |name: &str, job: Job| {
            let planned = world.runtime.block_on(world.router.plan_for(
                &world.manager,
                name,
                Baked::default(),
                job,
            ));
            planned.map(|plan| {
                let names = plan.iter().map(|c| (c.name.as_str(), c.agent.is_some()));
                names
                    .map(|(n, a)| format!("{n}{}", if a { " (agent)" } else { "" }))
                    .collect::<Vec<_>>()
            })
        };
        // (the name, the job, the plan's names or the error's kind)
        type Case = (
            &'static str,
            Job,
            Result<&'static [&'static str], ErrorKind>,
        );
        let cases: [Case; 7] = [
            (
                "fuzz-chat",
                Job::Chat,
                Ok(&[
                    "fuzz-chat (agent)",
                    "up/other",
                    "fuzz-plain (agent)",
                    "local/default",
                ]),
            ),
            ("up/slash", Job::Chat, Ok(&["up/slash (agent)"])),
            ("up/m", Job::Fim, Ok(&["up/m"])),
            ("fuzz-fim", Job::Fim, Ok(&["fuzz-fim (agent)"])),
            ("fuzz-fim", Job::Chat, Err(ErrorKind::NotFound)),
            ("fuzz-chat", Job::Fim, Err(ErrorKind::InvalidRequest)),
            ("nobody/m", Job::Chat, Err(ErrorKind::NotFound)),
        ];
        for (name, job, want) in cases {
            let got = plan(name, job).map_err(|e| e.kind);
            let want = want.map(|w| w.iter().map(|s| s.to_string()).collect::<Vec<_>>());
            assert_eq!(got, want, "{name} {job:?}");
            route(&[[job as u8].as_slice(), name.as_bytes()].concat());
        }
    }
}
