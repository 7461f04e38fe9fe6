//! [`AgentRenderer::chat_body_cached`]: a chat body rendered through the history owner's
//! [`EncodeCache`] ([`crate::body_cached`]), with the same bytes as
//! [`AgentRenderer::chat_body`].
//!
//! Promises: the cache's tag is a key of everything the body reads besides the history
//! (profile, model, protocol dialect, cache settings, the offered tools, the system
//! messages), and a fragment's key adds the tool names its results answer; a renderer
//! keeps only its last tool definitions and template context ([`Memo`]), so nothing grows.

use std::collections::HashMap;
use std::sync::Arc;

use minijinja::Value as J;
use qore_client::{EncodeCache, KeyHasher, RequestOptions};
use qore_core::{ContentBlock, ErrorInfo, History, Message, Role, ToolSpec};

use crate::body_cached::Finish;
use crate::body_split::Fragments;
use crate::context::{entry, last_user, TemplateContext};
use crate::native_fragments::Input;
use crate::render::{cache_settings, tool_definitions, AgentRenderer, Memo};

/// The value `cell` keeps for `key`, else `make`'s, kept.
fn memo<T: Clone>(cell: &Memo<T>, key: u64, make: impl FnOnce() -> T) -> T {
    let mut kept = cell.lock().unwrap_or_else(|e| e.into_inner());
    match &*kept {
        Some((at, value)) if *at == key => value.clone(),
        _ => {
            let value = make();
            *kept = Some((key, value.clone()));
            value
        }
    }
}

impl AgentRenderer {
    /// The bytes of [`AgentRenderer::chat_body`], each message of a conversation that
    /// renders per message ([`crate::body_split`]) taken from `cache` or rendered into it,
    /// and the rest of the body too while what it reads (system prompt, tools, model, the
    /// profile) is the same.
    pub fn chat_body_cached(
        &self,
        history: &History,
        tools: &[ToolSpec],
        options: &RequestOptions,
        cache: &mut EncodeCache,
    ) -> Result<Vec<u8>, ErrorInfo> {
        let Some(body) = self.body.as_ref().filter(|b| b.splits()) else {
            return self.chat_body(history, tools, options);
        };
        let offered = self.offered(tools);
        let mut key = KeyHasher::default();
        key.str(&self.agent.name).str(&self.model);
        key.str(&self.agent.sources[0].to_string_lossy());
        key.str(&self.protocol.encoding_tag());
        key.str(&format!("{:?}", cache_settings(&self.agent)));
        for spec in offered {
            key.str(&spec.name)
                .str(&spec.description)
                .value(&spec.input_schema);
        }
        for message in history.iter().filter(|m| m.role == Role::System) {
            key.message(message);
        }
        let tools_key = key.finish();
        let definitions = || {
            memo(&self.definitions, tools_key, || {
                Arc::new(tool_definitions(&*self.protocol, offered))
            })
        };
        let header = || {
            let mut header = TemplateContext::chat_header(history, definitions().to_vec());
            header.model = Some(&self.model);
            header.cache = cache_settings(&self.agent);
            header
        };
        let messages: Vec<&Message> = (history.iter())
            .filter(|m| m.role != Role::System)
            .collect();
        let fragments = HistoryFragments {
            last_user: last_user(&messages),
            messages,
            names: history.tool_names(),
        };
        let as_value = || memo(&self.header, tools_key, || J::from_serialize(header()));
        let mut extra = KeyHasher::default();
        for (name, value) in &options.extra {
            extra.str(name).value(value);
        }
        let settings = cache_settings(&self.agent);
        let apply = |bytes| (self.complete(bytes, &definitions(), &settings, &options.extra)).ok();
        let finish = Finish {
            key: extra.finish(),
            apply: &apply,
        };
        let tag = format!("{tools_key:x}");
        match body.render_cached(&fragments, cache, &tag, &as_value, &finish) {
            Ok(Some(bytes)) => Ok(bytes),
            Ok(None) => self.chat_body(history, tools, options),
            Err(err) => Err(self.render_error(err)),
        }
    }
}

/// The conversation of a history as a split body renders it (non-system messages).
struct HistoryFragments<'h> {
    messages: Vec<&'h Message>,
    last_user: Option<usize>,
    names: HashMap<&'h str, &'h str>,
}

impl Fragments for HistoryFragments<'_> {
    fn count(&self) -> usize {
        self.messages.len()
    }

    fn key(&self, index: usize) -> u64 {
        let message = self.messages[index];
        let mut key = KeyHasher::default();
        key.message(message)
            .tag(u8::from(self.last_user == Some(index)));
        for block in &message.blocks {
            if let ContentBlock::ToolResult { tool_use_id, .. } = block {
                key.opt(self.names.get(tool_use_id.as_str()).copied());
            }
        }
        key.finish()
    }

    fn entry(&self, index: usize) -> J {
        let last_user = self.last_user == Some(index);
        J::from_serialize(entry(self.messages[index], &self.names, last_user))
    }

    fn message(&self, index: usize) -> Option<Input<'_>> {
        Some(Input {
            message: self.messages.get(index)?,
            names: &self.names,
            last_user: self.last_user == Some(index),
        })
    }
}
