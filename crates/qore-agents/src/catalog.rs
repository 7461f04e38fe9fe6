//! All profiles: the bundled ones, then the user's, resolved through `extends`.
//!
//! Promises:
//! - a user profile with a bundled profile's name replaces it (and [`Agent::replaces`]
//!   says which file it replaced); two files of the same root with one name are an error
//!   naming both;
//! - `extends` deep-merges tables (the child wins key by key, recursively, `[body]`
//!   included); scalars and arrays replace; `abstract`, `hidden` and `extends` are never
//!   inherited; an unknown parent, a cycle or a chain deeper than [`MAX_DEPTH`] is an
//!   error at the `extends` line of each profile whose chain has it;
//! - a broken profile is refused with its error and the others still load (so one typo
//!   does not take every agent down); a profile whose parent is refused is refused too;
//! - a profile without `name` is named after its file ([`ProfileFile::name`]);
//! - what each profile's merged `[body]` reads ([`Agent::reads`]) is found once, its includes
//!   through the catalog's partials ([`crate::body_reads`]); a concrete profile tagged
//!   `completion` whose body reads neither the prefix/suffix nor the history is refused;
//! - `cache_prompt = true` without `cache_breakpoints` marks the whole stable prefix
//!   (system, tools, the last user message: [`CacheBreakpoint::ALL`]);
//! - `extends` and [`Catalog::get`] take a profile's name, else the only profile whose name
//!   is loosely the same (case, spaces, `_` and `-` aside: `"OpenAI Base Chat"` finds the
//!   file `openai_base_chat.toml`).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use crate::agent::{completion_refusal, CompletionUse};
use crate::body_reads::{BodyReads, Reader};
use crate::error::{AgentError, Warning};
use crate::partials::Partials;
use crate::profile::{CacheBreakpoint, Fields, ProfileFile};
use crate::provider_names::{name_key, only_loose_match};

/// The deepest `extends` chain allowed.
pub const MAX_DEPTH: usize = 32;

/// Where bundled files appear to be, in messages.
pub const BUNDLED_DIR: &str = "<bundled>";

/// The profiles compiled into the binary: (file name, text).
pub const BUNDLED_AGENTS: &[(&str, &str)] = crate::bundled::AGENTS;

pub use crate::agent::Agent;

/// Every profile that loaded, and why the others did not.
#[derive(Debug, Default)]
pub struct Catalog {
    agents: BTreeMap<String, Agent>,
    /// Profiles that could not be loaded (each names its file and line or body key); the others still load.
    pub errors: Vec<AgentError>,
    /// Unknown keys and other problems that did not stop a profile from loading.
    pub warnings: Vec<Warning>,
}

impl Catalog {
    /// The bundled profiles, then every `*.toml` in `user_dir` (when given and present);
    /// includes read from the bundled partials only.
    pub fn load(user_dir: Option<&Path>) -> Catalog {
        Catalog::load_with(user_dir, &Partials::default())
    }

    /// [`Catalog::load`], includes read through `partials` (the config dir's).
    pub fn load_with(user_dir: Option<&Path>, partials: &Partials) -> Catalog {
        let mut errors = Vec::new();
        let mut user = Vec::new();
        if let Some(dir) = user_dir {
            match read_dir_sorted(dir) {
                Ok(paths) => {
                    for path in paths {
                        match ProfileFile::read(&path) {
                            Ok(file) => user.push(file),
                            Err(err) => errors.push(err),
                        }
                    }
                }
                Err(err) => errors.push(err),
            }
        }
        let mut catalog = Catalog::with_user_files_in(user, partials);
        errors.append(&mut catalog.errors);
        catalog.errors = errors;
        catalog
    }

    /// The bundled profiles, then `user` on top, as if those files were in `agents/`.
    pub fn with_user_files(user: Vec<ProfileFile>) -> Catalog {
        Catalog::with_user_files_in(user, &Partials::default())
    }

    fn with_user_files_in(user: Vec<ProfileFile>, partials: &Partials) -> Catalog {
        let mut errors = Vec::new();
        let mut files = Vec::new();
        for (name, text) in BUNDLED_AGENTS {
            let path = Path::new(BUNDLED_DIR).join("agents").join(name);
            match ProfileFile::parse(&path, text) {
                Ok(file) => files.push((file, true)),
                Err(err) => errors.push(err),
            }
        }
        files.extend(user.into_iter().map(|file| (file, false)));
        let mut catalog = Catalog::from_files_in(files, partials);
        errors.append(&mut catalog.errors);
        catalog.errors = errors;
        catalog
    }

    /// Resolve parsed files (`true`: bundled). Later user files replace bundled names.
    pub fn from_files(files: Vec<(ProfileFile, bool)>) -> Catalog {
        Catalog::from_files_in(files, &Partials::default())
    }

    fn from_files_in(files: Vec<(ProfileFile, bool)>, partials: &Partials) -> Catalog {
        let mut reader = Reader::new(partials);
        let mut errors = Vec::new();
        let mut warnings = Vec::new();
        let mut by_name: HashMap<String, (ProfileFile, bool, Option<PathBuf>)> = HashMap::new();
        for (file, bundled) in files {
            warnings.extend(file.warnings.iter().cloned());
            let name = file.name();
            match by_name.remove(&name) {
                Some((earlier, true, _)) if !bundled => {
                    by_name.insert(name, (file, false, Some(earlier.path)));
                }
                Some(earlier) => {
                    errors.push(AgentError::Profile {
                        file: file.path.clone(),
                        line: file.line_of("name"),
                        message: format!(
                            "the name {name:?} is already used by {}",
                            earlier.0.path.display()
                        ),
                    });
                    by_name.insert(name, earlier);
                }
                None => {
                    by_name.insert(name, (file, bundled, None));
                }
            }
        }
        let mut agents = BTreeMap::new();
        for (name, (file, _, replaces)) in &by_name {
            match resolve(file, &by_name) {
                Ok((merged, sources, lines)) => {
                    match agent(name, merged, sources, replaces.clone()) {
                        Ok(mut agent) => {
                            agent.key_lines = lines;
                            agent.reads = reader.body(agent.body.as_ref());
                            let tagged = agent.tags.iter().any(|t| t == "completion");
                            let refused =
                                tagged.then(|| completion_refusal(&agent, CompletionUse::Tagged));
                            match refused.flatten() {
                                Some(refused) => errors.push(refused),
                                None => {
                                    agents.insert(name.clone(), agent);
                                }
                            }
                        }
                        Err(message) => errors.push(AgentError::Profile {
                            file: file.path.clone(),
                            line: None,
                            message,
                        }),
                    }
                }
                Err(err) => errors.push(err),
            }
        }
        errors.sort_by_key(|e| e.to_string());
        Catalog {
            agents,
            errors,
            warnings,
        }
    }

    /// Every loaded profile, abstract and hidden ones included, by name.
    pub fn all(&self) -> impl Iterator<Item = &Agent> {
        self.agents.values()
    }

    /// Take the profile called `name` out (it was refused after loading), with `why`.
    pub(crate) fn refuse(&mut self, name: &str, why: AgentError) {
        self.agents.remove(name);
        self.errors.push(why);
    }

    /// The profile called `name`, else the only one loosely called so ([`name_key`]).
    pub fn get(&self, name: &str) -> Option<&Agent> {
        (self.agents.get(name))
            .or_else(|| find_loosely(self.agents.iter(), name).map(|(_, agent)| agent))
    }
}

fn read_dir_sorted(dir: &Path) -> Result<Vec<PathBuf>, AgentError> {
    if !dir.exists() {
        return Ok(Vec::new());
    }
    let io = |err: std::io::Error| AgentError::Io {
        path: dir.to_owned(),
        message: err.to_string(),
    };
    let mut paths = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let path = entry.map_err(io)?.path();
        if path.extension().is_some_and(|e| e == "toml") && path.is_file() {
            paths.push(path);
        }
    }
    paths.sort();
    Ok(paths)
}

type Files = HashMap<String, (ProfileFile, bool, Option<PathBuf>)>;

/// The merged table of `file` and its ancestors, their paths (own first), and where each
/// top-level key was set.
type Resolved = (
    toml::Table,
    Vec<PathBuf>,
    BTreeMap<String, (PathBuf, usize)>,
);

fn resolve(file: &ProfileFile, files: &Files) -> Result<Resolved, AgentError> {
    let mut chain: Vec<&ProfileFile> = vec![file];
    let mut names = vec![file.name()];
    while let Some(parent) = &chain[chain.len() - 1].fields.extends {
        // Errors are reported at this profile's own `extends`, naming the chain.
        let fail = |message: String| AgentError::Profile {
            file: file.path.clone(),
            line: file.line_of("extends"),
            message,
        };
        let found = (files.get_key_value(parent)).or_else(|| find_loosely(files.iter(), parent));
        let Some((parent, (parent_file, _, _))) = found else {
            let via = match names.len() {
                1 => String::new(),
                _ => format!(" (via {})", names.join(" -> ")),
            };
            return Err(fail(format!("extends unknown profile {parent:?}{via}")));
        };
        if names.contains(parent) {
            names.push(parent.clone());
            return Err(fail(format!("extends cycle: {}", names.join(" -> "))));
        }
        if chain.len() > MAX_DEPTH {
            return Err(fail(format!(
                "the extends chain is deeper than {MAX_DEPTH} profiles"
            )));
        }
        names.push(parent.clone());
        chain.push(parent_file);
    }
    let mut merged = toml::Table::new();
    let mut lines = BTreeMap::new();
    for (depth, ancestor) in chain.iter().enumerate().rev() {
        for (key, line) in &ancestor.key_lines {
            lines.insert(key.clone(), (ancestor.path.clone(), *line));
        }
        let mut table = ancestor.table.clone();
        table.remove("extends");
        if depth > 0 {
            table.remove("abstract");
            table.remove("hidden");
        }
        deep_merge(&mut merged, table);
    }
    merged.insert("name".into(), toml::Value::String(names[0].clone()));
    Ok((
        merged,
        chain.iter().map(|f| f.path.clone()).collect(),
        lines,
    ))
}

/// The only entry whose name is loosely `name` ([`only_loose_match`]: `extends = "OpenAI
/// Base Chat"` finds `openai_base_chat.toml`); `None` when none or several are.
fn find_loosely<'a, T>(
    entries: impl Iterator<Item = (&'a String, T)>,
    name: &str,
) -> Option<(&'a String, T)> {
    only_loose_match(entries, name, |(n, _), loose| name_key(n) == loose)
}

/// Merge `over` into `base`: tables recursively, everything else replaced.
pub fn deep_merge(base: &mut toml::Table, over: toml::Table) {
    for (key, value) in over {
        match (base.get_mut(&key), value) {
            (Some(toml::Value::Table(inner)), toml::Value::Table(over_inner)) => {
                deep_merge(inner, over_inner)
            }
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
}

fn agent(
    name: &str,
    merged: toml::Table,
    sources: Vec<PathBuf>,
    replaces: Option<PathBuf>,
) -> Result<Agent, String> {
    let f: Fields = toml::Value::Table(merged.clone())
        .try_into()
        .map_err(|err: toml::de::Error| format!("after extends: {}", err.message().trim()))?;
    Ok(Agent {
        name: name.to_owned(),
        description: f.description.unwrap_or_default(),
        provider: f.provider,
        model: f.model,
        endpoint: f.endpoint,
        system_prompt: f.system_prompt,
        tags: f.tags.unwrap_or_default(),
        enable_tools: f.enable_tools.unwrap_or(false),
        tool_protocol: f.tool_protocol.unwrap_or_default(),
        enable_thinking: f.enable_thinking.unwrap_or(false),
        cache_prompt: f.cache_prompt.unwrap_or(false),
        cache_ttl: f.cache_ttl,
        cache_breakpoints: match (f.cache_breakpoints, f.cache_prompt) {
            (Some(breakpoints), _) => breakpoints,
            // Prompt caching without places given: the whole stable prefix.
            (None, Some(true)) => CacheBreakpoint::ALL.to_vec(),
            (None, _) => Vec::new(),
        },
        context_window: f.context_window,
        pricing: f.pricing,
        fallbacks: f.fallbacks.unwrap_or_default(),
        is_abstract: f.is_abstract.unwrap_or(false),
        hidden: f.hidden.unwrap_or(false),
        matcher: f.matcher.unwrap_or_default(),
        body: f.body,
        reads: BodyReads::default(),
        merged,
        sources,
        replaces,
        key_lines: BTreeMap::new(),
    })
}

/// Take out of `catalog` every concrete profile `roster` (`pipelines.toml`'s
/// `code_completion`) names whose body reads neither the prefix/suffix nor the history, with
/// [`completion_refusal`]'s error in [`Catalog::errors`].
pub fn refuse_unaskable_completers(catalog: &mut Catalog, roster: &[String]) {
    let refused: Vec<(String, AgentError)> = (roster.iter())
        .filter_map(|name| catalog.get(name))
        .filter_map(|agent| {
            let why = completion_refusal(agent, CompletionUse::Roster)?;
            Some((agent.name.clone(), why))
        })
        .collect();
    for (name, why) in refused {
        catalog.refuse(&name, why);
    }
}

#[cfg(test)]
#[path = "catalog_tests.rs"]
mod tests;
