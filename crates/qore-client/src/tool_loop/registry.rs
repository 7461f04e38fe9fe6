//! [`ToolRegistry`]: the one place tools are registered, whatever their source.
//!
//! Promises: built-in tools, MCP tools and skills all arrive the same way ([`ToolRegistry::add`]
//! or [`ToolRegistry::extend`]); names are unique (a second tool with a taken name is
//! refused with a Config error naming both, never silently shadowed); [`ToolRegistry::specs`]
//! lists the definitions in registration order, which keeps encoded requests byte-stable.
//! Each tool's argument schema is compiled once, here, so a broken schema fails at
//! registration and every call is validated against it.

use std::collections::HashMap;
use std::sync::Arc;

use qore_core::{ErrorInfo, Tool, ToolSpec};

/// A registered tool and its compiled argument validator.
pub struct Registered {
    pub tool: Arc<dyn Tool>,
    pub validator: jsonschema::Validator,
}

/// The tools on offer for one session.
#[derive(Default)]
pub struct ToolRegistry {
    tools: Vec<Registered>,
    by_name: HashMap<String, usize>,
    specs: Vec<ToolSpec>,
}

impl ToolRegistry {
    pub fn new() -> Self {
        Self::default()
    }

    /// Register one tool.
    pub fn add(&mut self, tool: Arc<dyn Tool>) -> Result<(), ErrorInfo> {
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
        Ok(())
    }

    /// Register every tool of a source.
    pub fn extend(
        &mut self,
        tools: impl IntoIterator<Item = Arc<dyn Tool>>,
    ) -> Result<(), ErrorInfo> {
        tools.into_iter().try_for_each(|tool| self.add(tool))
    }

    pub fn get(&self, name: &str) -> Option<&Registered> {
        self.by_name.get(name).map(|&i| &self.tools[i])
    }

    /// The definitions to put into requests, in registration order.
    pub fn specs(&self) -> &[ToolSpec] {
        &self.specs
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}
