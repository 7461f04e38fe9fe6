//! `run_command`'s spec: its JSON schema (the allow-list and the timeouts in force, and the
//! request for more rights when escalation is offered) and its description.

use serde_json::json;

use super::{escalate, NAME};
use crate::{spec, ToolOptions};
use qore_core::ToolSpec;

/// The spec `run_command` is offered with under `options`.
pub(super) fn tool_spec(options: &ToolOptions) -> ToolSpec {
    let allowed = options.allowed_commands.join(", ");
    let mut schema = json!({
        "type": "object",
        "properties": {
            "argv": {
                "type": "array",
                "items": { "type": "string" },
                "minItems": 1,
                "description": format!("The program (one of: {allowed}) followed by its arguments.")
            },
            "timeout_secs": {
                "type": "integer",
                "minimum": 1,
                "maximum": options.command_max_timeout.as_secs(),
                "description": format!("Seconds before the program is killed. Default: {}.", options.command_timeout.as_secs())
            }
        },
        "required": ["argv"],
        "additionalProperties": false
    });
    escalate::offer(&mut schema, options.sandbox.as_ref());
    spec(
        NAME,
        &format!(
            "Run a program in the project root and return its exit code, stdout and stderr. \
             There is no shell: give the program and each argument as separate array \
             elements (e.g. [\"git\", \"status\", \"--short\"]); pipes, redirections, ';', \
             '&&', '$(...)' and backticks are refused. Allowed programs: {allowed}. \
             Default timeout {} s.",
            options.command_timeout.as_secs()
        ),
        schema,
    )
}
