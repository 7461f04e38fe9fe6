//! `todo`: the agent's task list for the session, kept in memory.
//!
//! Promises: one list per [`Todo`] instance (clones share it), so a session that builds its
//! tools once has one list; items get ids 1, 2, 3… in the order they are added and keep them;
//! every call answers with the whole list (as text, and as `structured` JSON
//! `{"items": [{"id", "text", "done"}]}`); nothing touches the disk. Not destructive,
//! parallel-safe (a mutex orders concurrent calls).

use std::sync::{Arc, Mutex, MutexGuard};

use qore_core::{CancellationToken, Tool, ToolFuture, ToolOutput, ToolSpec};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::spec;
use crate::util::parse_args;

const NAME: &str = "todo";

/// One task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TodoItem {
    pub id: u64,
    pub text: String,
    pub done: bool,
}

#[derive(Default)]
struct State {
    items: Vec<TodoItem>,
    next_id: u64,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum Action {
    Add,
    Complete,
    List,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    action: Action,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    id: Option<u64>,
}

/// The session's task list.
#[derive(Clone)]
pub struct Todo {
    spec: Arc<ToolSpec>,
    state: Arc<Mutex<State>>,
}

impl Default for Todo {
    fn default() -> Self {
        Todo::new()
    }
}

impl Todo {
    /// An empty list.
    pub fn new() -> Self {
        let spec = spec(
            NAME,
            "Keep a task list for this session: 'add' a task (text), 'complete' a task (id), or \
             'list' the tasks. Every call returns the whole list with ids and [x] for done tasks.",
            json!({
                "type": "object",
                "properties": {
                    "action": {
                        "type": "string",
                        "enum": ["add", "complete", "list"],
                        "description": "What to do."
                    },
                    "text": {
                        "type": "string",
                        "minLength": 1,
                        "description": "With 'add': the task."
                    },
                    "id": {
                        "type": "integer",
                        "minimum": 1,
                        "description": "With 'complete': the id of the task that is done."
                    }
                },
                "required": ["action"],
                "additionalProperties": false
            }),
        );
        Todo {
            spec: Arc::new(spec),
            state: Arc::new(Mutex::new(State {
                items: Vec::new(),
                next_id: 1,
            })),
        }
    }

    /// The tasks as they are now.
    pub fn items(&self) -> Vec<TodoItem> {
        self.lock().items.clone()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // The state is valid after every statement, so a panic elsewhere cannot corrupt it.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn apply(&self, args: Args) -> ToolOutput {
        let mut state = self.lock();
        let note = match args.action {
            Action::Add => {
                let Some(text) = args
                    .text
                    .as_deref()
                    .map(str::trim)
                    .filter(|t| !t.is_empty())
                else {
                    return ToolOutput::error("'add' needs `text`: the task to add");
                };
                let id = state.next_id;
                state.next_id += 1;
                state.items.push(TodoItem {
                    id,
                    text: text.to_string(),
                    done: false,
                });
                format!("Added task {id}.")
            }
            Action::Complete => {
                let Some(id) = args.id else {
                    return ToolOutput::error("'complete' needs `id`: the id of the finished task");
                };
                let known: Vec<String> = state.items.iter().map(|i| i.id.to_string()).collect();
                match state.items.iter_mut().find(|i| i.id == id) {
                    Some(item) if item.done => format!("Task {id} was already done."),
                    Some(item) => {
                        item.done = true;
                        format!("Completed task {id}.")
                    }
                    None if known.is_empty() => {
                        return ToolOutput::error(format!(
                            "there is no task {id}: the list is empty"
                        ))
                    }
                    None => {
                        return ToolOutput::error(format!(
                            "there is no task {id}; the ids are {}",
                            known.join(", ")
                        ))
                    }
                }
            }
            Action::List => String::new(),
        };
        let mut text = note;
        if !text.is_empty() {
            text.push('\n');
        }
        if state.items.is_empty() {
            text.push_str("The task list is empty.");
        } else {
            let done = state.items.iter().filter(|i| i.done).count();
            text.push_str(&format!("Tasks ({done}/{} done):", state.items.len()));
            for item in &state.items {
                let mark = if item.done { 'x' } else { ' ' };
                text.push_str(&format!("\n{}. [{mark}] {}", item.id, item.text));
            }
        }
        ToolOutput {
            structured: Some(json!({ "items": state.items })),
            ..ToolOutput::text(text)
        }
    }
}

impl Tool for Todo {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    fn destructive(&self) -> bool {
        false
    }
    fn parallel_safe(&self) -> bool {
        true
    }
    fn call(&self, input: serde_json::Value, _cancel: CancellationToken) -> ToolFuture {
        let out = match parse_args::<Args>(NAME, input) {
            Ok(args) => self.apply(args),
            Err(out) => out,
        };
        Box::pin(std::future::ready(out))
    }
}
