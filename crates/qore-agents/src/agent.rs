//! [`Agent`]: one resolved profile of the catalog, what it sends and how; and
//! [`completion_refusal`], the error of a concrete profile a completion would use whose
//! `[body]` reads neither the prefix/suffix nor the history ([`crate::body_reads`] finds
//! what a body reads; [`crate::catalog`] resolves the profiles and refuses those).
//!
//! Promises: the refusal names the agent, why a completion would use it (its
//! `completion` tag or `pipelines.toml`'s roster) and the file and line of its `[body]`
//! (else of its `tags`) in its own file; abstract profiles and bodies a completion can be
//! asked of are never refused.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::body_reads::BodyReads;
use crate::error::AgentError;
use crate::profile::{CacheBreakpoint, CacheTtl, MatchRules, ToolProtocolSetting};

/// A resolved profile.
#[derive(Debug, Clone)]
pub struct Agent {
    /// The profile's `name`, what `--agent` and `model` fields select it by.
    pub name: String,
    /// One line saying what the agent is for.
    pub description: String,
    /// The provider instance it talks to (`providers.toml` or a bundled one).
    pub provider: Option<String>,
    /// The model asked when the request names none.
    pub model: Option<String>,
    /// The request path or URL overriding the protocol's own (`${MODEL}` is replaced).
    pub endpoint: Option<String>,
    /// The system prompt template (building blocks such as `{{ role('developer') }}`), rendered per project.
    pub system_prompt: Option<String>,
    /// Tags (`chat`, `completion`, `compression`, `refactor`) that pipelines and listings select by.
    pub tags: Vec<String>,
    /// Whether the agent offers tools to the model.
    pub enable_tools: bool,
    /// How tools reach the model: native tool calling or the text protocol.
    pub tool_protocol: ToolProtocolSetting,
    /// Whether the agent asks the model to reason before answering, where the wire has a switch.
    pub enable_thinking: bool,
    /// Whether the agent asks the provider to cache the prompt prefix.
    pub cache_prompt: bool,
    /// How long provider cache entries should live (Anthropic).
    pub cache_ttl: Option<CacheTtl>,
    /// Where cache marks go (system prompt, tools, last user message).
    pub cache_breakpoints: Vec<CacheBreakpoint>,
    /// The model's context window in tokens (`context_window`), when the profile sets it.
    pub context_window: Option<u64>,
    /// Dollars per million tokens (`[pricing]`), when the profile gives them.
    pub pricing: Option<crate::pricing::Pricing>,
    /// Agents or `provider/model` names tried in order when this one cannot answer
    /// (`fallbacks`; `qore serve`).
    pub fallbacks: Vec<String>,
    /// Whether the profile is only a base for others (`abstract = true`): never run itself.
    pub is_abstract: bool,
    /// Whether listings leave the agent out.
    pub hidden: bool,
    /// The `[match]` rules: which files, paths and projects the agent is picked for.
    pub matcher: MatchRules,
    /// The `[body]` table: the request body, Jinja strings rendered from the conversation.
    pub body: Option<toml::Table>,
    /// What `body` reads of the request context: how a completion is asked of the agent,
    /// whether it can chat ([`crate::body_reads`]).
    pub reads: BodyReads,
    /// The merged table, as `qore agents show` prints it.
    pub merged: toml::Table,
    /// The profile's own file, then each ancestor's.
    pub sources: Vec<PathBuf>,
    /// The bundled file this user profile replaces.
    pub replaces: Option<PathBuf>,
    /// For each top-level key: the file and line that set it (the child's, when several do).
    pub key_lines: BTreeMap<String, (PathBuf, usize)>,
}

impl Agent {
    /// What a list shows beside the agent (the seed's UI badges): `thinking` when it has
    /// `enable_thinking`, and its tags (`tags: chat completion`).
    pub fn badges(&self) -> Vec<String> {
        let thinking = self.enable_thinking.then(|| "thinking".to_owned());
        let tags = (!self.tags.is_empty()).then(|| format!("tags: {}", self.tags.join(" ")));
        thinking.into_iter().chain(tags).collect()
    }

    /// The file and line that set top-level `key`; the profile's own file when none did.
    pub fn where_set(&self, key: &str) -> (PathBuf, Option<usize>) {
        match self.key_lines.get(key) {
            Some((file, line)) => (file.clone(), Some(*line)),
            None => (self.sources[0].clone(), None),
        }
    }
}

/// Why a completion would use `agent`, for the refusal's message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompletionUse {
    /// It is tagged `completion`.
    Tagged,
    /// `pipelines.toml`'s `code_completion` names it.
    Roster,
}

/// The refusal of a concrete `agent` that `why` says a completion would use, when its body
/// reads neither the prefix/suffix nor the history (see the module doc); `None` otherwise.
pub fn completion_refusal(agent: &Agent, why: CompletionUse) -> Option<AgentError> {
    if agent.is_abstract || agent.reads.completion_style().is_some() {
        return None;
    }
    let own = &agent.sources[0];
    let line_in_own = |key: &str| (agent.key_lines.get(key)).filter(|(file, _)| file == own);
    let line = (line_in_own("body").or_else(|| line_in_own("tags"))).map(|(_, line)| *line);
    // The name is in the message: a lookup of the refused agent finds why by it.
    let name = &agent.name;
    let used = match why {
        CompletionUse::Tagged => format!("{name:?} is tagged \"completion\""),
        CompletionUse::Roster => format!("pipelines.toml's code_completion names {name:?}"),
    };
    Some(AgentError::Profile {
        file: own.clone(),
        line,
        message: format!(
            "{used}, but its [body] reads neither ctx.prefix/ctx.suffix (fill in the middle) \
             nor ctx.history (chat), so no completion can be asked of it"
        ),
    })
}
