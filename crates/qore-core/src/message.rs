//! Messages and the ordered history of a conversation.
//!
//! [`History`] is the single source of truth for a conversation: requests are encoded from
//! it, and only a finished turn is ever appended to it.

use serde::{Deserialize, Serialize};

use crate::ContentBlock;

/// Who said a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Instructions for the model (the system prompt); providers that take it apart get it apart.
    System,
    /// What the person (or a tool result) says.
    User,
    /// What the model says: text, reasoning, tool calls.
    Assistant,
}

/// One message: a role and its blocks, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who speaks.
    pub role: Role,
    /// What is said, in order.
    pub blocks: Vec<ContentBlock>,
}

impl Message {
    /// A message of `role` made of `blocks`.
    pub fn new(role: Role, blocks: Vec<ContentBlock>) -> Self {
        Message { role, blocks }
    }

    /// A system message holding one text block.
    pub fn system(text: impl Into<String>) -> Self {
        Message::new(Role::System, vec![ContentBlock::text(text)])
    }

    /// A user message holding one text block.
    pub fn user(text: impl Into<String>) -> Self {
        Message::new(Role::User, vec![ContentBlock::text(text)])
    }

    /// An assistant message holding one text block.
    pub fn assistant(text: impl Into<String>) -> Self {
        Message::new(Role::Assistant, vec![ContentBlock::text(text)])
    }

    /// All text blocks concatenated (thinking and tool blocks excluded).
    pub fn text(&self) -> String {
        self.blocks
            .iter()
            .filter_map(ContentBlock::as_text)
            .collect()
    }
}

/// The ordered messages of a conversation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct History {
    messages: Vec<Message>,
}

impl History {
    /// An empty conversation.
    pub fn new() -> Self {
        History::default()
    }

    /// Append `message` at the end.
    pub fn push(&mut self, message: Message) {
        self.messages.push(message);
    }

    /// Every message, oldest first.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// How many messages there are.
    pub fn len(&self) -> usize {
        self.messages.len()
    }

    /// Whether there are no messages.
    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }

    /// The newest message, if any.
    pub fn last(&self) -> Option<&Message> {
        self.messages.last()
    }

    /// The messages, oldest first.
    pub fn iter(&self) -> std::slice::Iter<'_, Message> {
        self.messages.iter()
    }

    /// The tool name of every tool call in the conversation, by call id (what a tool
    /// result's `tool_use_id` refers to).
    pub fn tool_names(&self) -> std::collections::HashMap<&str, &str> {
        (self.messages.iter())
            .flat_map(|m| &m.blocks)
            .filter_map(|b| match b {
                ContentBlock::ToolUse { id, name, .. } => Some((id.as_str(), name.as_str())),
                _ => None,
            })
            .collect()
    }
}

impl From<Vec<Message>> for History {
    fn from(messages: Vec<Message>) -> Self {
        History { messages }
    }
}

impl<'a> IntoIterator for &'a History {
    type Item = &'a Message;
    type IntoIter = std::slice::Iter<'a, Message>;
    fn into_iter(self) -> Self::IntoIter {
        self.messages.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_round_trips_as_a_json_array() {
        let history = History::from(vec![
            Message::system("be brief"),
            Message::user("hi"),
            Message::new(
                Role::Assistant,
                vec![
                    ContentBlock::Thinking {
                        text: "t".into(),
                        signature: Some("s".into()),
                    },
                    ContentBlock::text("hello"),
                ],
            ),
        ]);
        let json = serde_json::to_value(&history).unwrap();
        assert!(json.is_array());
        assert_eq!(json[1]["role"], "user");
        let back: History = serde_json::from_value(json).unwrap();
        assert_eq!(back, history);
        assert_eq!(back.messages()[2].text(), "hello");
    }
}
