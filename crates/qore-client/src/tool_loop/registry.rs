//! [`ToolRegistry`]: the one place tools are registered, whatever their source.
//!
//! Promises: built-in tools, MCP tools and skills all arrive the same way ([`ToolRegistry::add`]
//! or [`ToolRegistry::extend`]); names are unique (a second tool with a taken name is
//! refused with a Config error naming both, never silently shadowed); [`ToolRegistry::specs`]
//! lists the definitions in registration order, which keeps encoded requests byte-stable.
//! Each tool's argument schema is compiled once, here, so a broken schema fails at
//! registration and every call is validated against it. A [`ToolSource`] whose tools can
//! change (an MCP server's `notifications/tools/list_changed`) is registered with
//! [`ToolRegistry::add_source`]; [`ToolRegistry::refresh`] swaps in its new list when its
//! version moved (its tools move to the end; the others keep their order), and leaves the
//! registry untouched otherwise.

use std::collections::HashMap;
use std::sync::Arc;

use qore_core::{ErrorInfo, Tool, ToolSource, ToolSpec};

/// A registered tool and its compiled argument validator.
pub struct Registered {
    /// The tool.
    pub tool: Arc<dyn Tool>,
    /// Its argument schema compiled; calls whose arguments fail it are not run.
    pub validator: jsonschema::Validator,
}

/// The tools on offer for one session.
#[derive(Default)]
pub struct ToolRegistry {
    tools: Vec<Registered>,
    by_name: HashMap<String, usize>,
    specs: Vec<ToolSpec>,
    /// Per tool: the index in `sources` it came from.
    origin: Vec<Option<usize>>,
    /// Each source and the version its registered tools reflect.
    sources: Vec<(Arc<dyn ToolSource>, u64)>,
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Register one tool.
    pub fn add(&mut self, tool: Arc<dyn Tool>) -> Result<(), ErrorInfo> {
        self.add_from(tool, None)
    }

    fn add_from(&mut self, tool: Arc<dyn Tool>, origin: Option<usize>) -> Result<(), ErrorInfo> {
        let spec = tool.spec().clone();
        if spec.name.is_empty() {
            return Err(ErrorInfo::config("a tool has an empty name"));
        }
        if self.by_name.contains_key(&spec.name) {
            return Err(ErrorInfo::config(format!(
                "two tools are called {:?}; tool names must be unique",
                spec.name
            )));
        }
        let validator = jsonschema::validator_for(&spec.input_schema).map_err(|err| {
            ErrorInfo::config(format!(
                "tool {:?} has an invalid argument schema: {err}",
                spec.name
            ))
        })?;
        self.by_name.insert(spec.name.clone(), self.tools.len());
        self.specs.push(spec);
        self.tools.push(Registered { tool, validator });
        self.origin.push(origin);
        Ok(())
    }

    /// Register `source`'s current tools; the errors name the tools refused (the others
    /// are registered).
    pub fn add_source(&mut self, source: Arc<dyn ToolSource>) -> Vec<ErrorInfo> {
        let (version, tools) = source.snapshot();
        let index = self.sources.len();
        self.sources.push((source, version));
        self.take_from(index, tools)
    }

    /// Fetch again the sources whose version moved and register their new tools in place
    /// of their old ones; the errors name the new tools refused.
    pub async fn refresh(&mut self) -> Vec<ErrorInfo> {
        let mut errors = Vec::new();
        for index in 0..self.sources.len() {
            let (source, seen) = self.sources[index].clone();
            if source.version() == seen {
                continue;
            }
            source.refetch().await;
            let (version, tools) = source.snapshot();
            if version == seen {
                continue;
            }
            self.sources[index].1 = version;
            self.drop_from(index);
            errors.extend(self.take_from(index, tools));
        }
        errors
    }

    fn take_from(&mut self, index: usize, tools: Vec<Arc<dyn Tool>>) -> Vec<ErrorInfo> {
        (tools.into_iter())
            .filter_map(|tool| self.add_from(tool, Some(index)).err())
            .collect()
    }

    /// Remove the tools of source `index`.
    fn drop_from(&mut self, index: usize) {
        let kept = (self.tools.drain(..).zip(self.specs.drain(..)))
            .zip(self.origin.drain(..))
            .filter(|(_, origin)| *origin != Some(index))
            .collect::<Vec<_>>();
        self.by_name.clear();
        for ((registered, spec), origin) in kept {
            self.by_name.insert(spec.name.clone(), self.tools.len());
            self.tools.push(registered);
            self.specs.push(spec);
            self.origin.push(origin);
        }
    }

    /// Register every tool of a source.
    pub fn extend(
        &mut self,
        tools: impl IntoIterator<Item = Arc<dyn Tool>>,
    ) -> Result<(), ErrorInfo> {
        tools.into_iter().try_for_each(|tool| self.add(tool))
    }

    /// The tool registered as `name`.
    pub fn get(&self, name: &str) -> Option<&Registered> {
        self.by_name.get(name).map(|&i| &self.tools[i])
    }

    /// The definitions to put into requests, in registration order.
    pub fn specs(&self) -> &[ToolSpec] {
        &self.specs
    }

    /// Whether no tool is registered.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}

#[cfg(test)]
#[path = "registry_tests.rs"]
mod tests;
