//! The render benchmark's workload, shared with the tests that render it: a system prompt
//! of ~2 KB and a conversation of at least [`TURNS`] entries (user and assistant
//! alternating, a third of the assistant turns calling one or two tools, each call answered
//! by a user turn of tool results, one in six an error; texts of a few hundred bytes with
//! quotes, backslashes, newlines and non-ASCII), ending on a user turn; and a coding
//! agent's nine tools, with schemas of a real agent's size.

#![allow(dead_code)]

use qore_core::{ContentBlock, History, Message, Role, ToolResultPart, ToolSpec};
use serde_json::{json, Value};

/// Non-system entries the conversation has at least (it ends on a user turn).
pub const TURNS: usize = 200;

const SNIPPETS: &[&str] = &[
    "The lexer in `src/lexer.rs` treats \"\\n\" inside raw strings as two characters, which \
     breaks the span of every token after it. ",
    "Überprüfe bitte `parse_header`: bei leeren Zeilen gibt sie „None“ zurück, statt den \
     Fehler zu melden. ",
    "日本語のコメントも残っています：「未実装」と書かれた関数が三つあります。",
    "let path = \"C:\\\\Users\\\\dev\\\\project\\\\Cargo.toml\"; // Windows paths need \
     their backslashes escaped. ",
    "The test `handles_quotes` expects 'single' and \"double\" quotes to survive a round trip \
     through the config writer. ",
    "Ça marche presque : il reste un cas où l'index dépasse la longueur (off-by-one à la fin \
     du tampon). ",
    "Run `cargo test -p qore-agents -- --nocapture` to see the rendered bodies, then compare \
     them with the recorded ones. ",
    "Symbols must pass through untouched: ✓ ✗ → ≤ ≥ 🙂, and so must a literal {{ braces }} \
     pair or {% tag %}. ",
];

/// Deterministic text of at least `len` bytes, starting at snippet `i`.
pub fn text(i: usize, len: usize) -> String {
    let mut s = String::new();
    let mut j = i;
    while s.len() < len {
        s.push_str(SNIPPETS[j % SNIPPETS.len()]);
        j += 3;
    }
    s
}

fn code(i: usize) -> String {
    format!(
        "// src/module_{i}.rs\nuse std::collections::HashMap;\n\n/// Parses \"key = value\" \
         lines; see the tests.\npub fn parse_{i}(input: &str) -> HashMap<String, String> {{\n    \
         let mut out = HashMap::new();\n    for line in input.lines() {{\n        if let \
         Some((k, v)) = line.split_once('=') {{\n            out.insert(k.trim().to_owned(), \
         v.trim().trim_matches('\"').to_owned());\n        }}\n    }}\n    out\n}}\n\n\
         #[test]\nfn parses_{i}() {{\n    let m = parse_{i}(\"name = \\\"qore\\\"\\nversion = \
         1\");\n    assert_eq!(m[\"name\"], \"qore\"); // ünïcödé ✓\n}}\n"
    )
}

/// One tool call of cycle `c`, number `j`.
fn call(c: usize, j: usize) -> ContentBlock {
    let (name, input) = match (c + j) % 4 {
        0 => ("read_file", json!({"path": format!("src/module_{c}.rs")})),
        1 => (
            "grep",
            json!({"pattern": format!("fn parse_{c}\\("), "path": "src", "case_sensitive": true}),
        ),
        2 => (
            "run_command",
            json!({"command": format!("cargo test -p qore-agents parses_{c}"), "cwd": ".", "timeout_secs": 120}),
        ),
        _ => (
            "edit_file",
            json!({
                "path": format!("src/module_{c}.rs"),
                "old_string": "v.trim().trim_matches('\"')",
                "new_string": "v.trim().trim_matches(|ch| ch == '\"' || ch == '\\'')",
            }),
        ),
    };
    ContentBlock::tool_use(format!("call_{c:03}_{j}"), name, input)
}

fn result(c: usize, j: usize) -> ContentBlock {
    let is_error = (c + j) % 6 == 5;
    let text = if is_error {
        format!("error: src/module_{c}.rs: no such file or directory (os error 2)")
    } else {
        code(c)
    };
    ContentBlock::ToolResult {
        tool_use_id: format!("call_{c:03}_{j}"),
        content: vec![ToolResultPart::Text { text }],
        is_error,
    }
}

/// The system prompt and a conversation of at least [`TURNS`] entries, then a user turn.
pub fn history() -> History {
    let mut messages = vec![Message::system(text(0, 2000))];
    let mut c = 0;
    while messages.len() - 1 < TURNS {
        messages.push(Message::user(text(c, 300)));
        let calls = match c % 3 {
            0 => 0,
            1 => 1,
            _ => 2,
        };
        if calls == 0 {
            messages.push(Message::assistant(text(c + 1, 400)));
        } else {
            let mut blocks = vec![ContentBlock::text(text(c + 2, 120))];
            blocks.extend((0..calls).map(|j| call(c, j)));
            messages.push(Message::new(Role::Assistant, blocks));
            messages.push(Message::new(
                Role::User,
                (0..calls).map(|j| result(c, j)).collect(),
            ));
            messages.push(Message::assistant(text(c + 5, 300)));
        }
        c += 1;
    }
    messages.push(Message::user(text(c, 300)));
    History::from(messages)
}

fn tool(name: &str, description: &str, properties: Value, required: &[&str]) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: description.into(),
        input_schema: json!({
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false,
        }),
    }
}

/// The tools on offer: a coding agent's nine.
pub fn tools() -> Vec<ToolSpec> {
    let path = json!({"type": "string", "description": "Path relative to the workspace root; \
        absolute paths and `..` are refused."});
    vec![
        tool(
            "read_file",
            "Read a text file of the workspace. Returns numbered lines; long files are cut at \
             2,000 lines unless `offset` and `limit` are given. Binary files are refused.",
            json!({
                "path": path,
                "offset": {"type": "integer", "minimum": 1, "description": "First line to read (1-based)."},
                "limit": {"type": "integer", "minimum": 1, "maximum": 10000, "description": "How many lines to read."},
            }),
            &["path"],
        ),
        tool(
            "write_file",
            "Create or overwrite a file with the given content. Parent directories are \
             created. Prefer `edit_file` for changes to existing files.",
            json!({
                "path": path,
                "content": {"type": "string", "description": "The whole new content of the file."},
            }),
            &["path", "content"],
        ),
        tool(
            "edit_file",
            "Replace an exact string in a file. `old_string` must occur exactly once unless \
             `replace_all` is set; whitespace and indentation must match.",
            json!({
                "path": path,
                "old_string": {"type": "string", "description": "The text to replace, exactly as in the file."},
                "new_string": {"type": "string", "description": "The replacement text."},
                "replace_all": {"type": "boolean", "default": false, "description": "Replace every occurrence."},
            }),
            &["path", "old_string", "new_string"],
        ),
        tool(
            "list_dir",
            "List a directory: names, kinds and sizes, directories first. Ignores what \
             .gitignore ignores unless `all` is set.",
            json!({
                "path": path,
                "depth": {"type": "integer", "minimum": 1, "maximum": 5, "default": 1, "description": "How deep to recurse."},
                "all": {"type": "boolean", "default": false, "description": "Include ignored and hidden entries."},
            }),
            &["path"],
        ),
        tool(
            "grep",
            "Search file contents with a regular expression (Rust regex syntax). Returns \
             matching lines with their file and line number, at most 500 matches.",
            json!({
                "pattern": {"type": "string", "description": "The regular expression."},
                "path": {"type": "string", "description": "File or directory to search; default the workspace."},
                "glob": {"type": "string", "description": "Only files matching this glob, e.g. \"*.rs\"."},
                "case_sensitive": {"type": "boolean", "default": true},
                "context": {"type": "integer", "minimum": 0, "maximum": 20, "description": "Lines of context around each match."},
            }),
            &["pattern"],
        ),
        tool(
            "glob",
            "Find files by name with a glob pattern such as \"src/**/*.rs\"; results sorted by \
             modification time, newest first.",
            json!({
                "pattern": {"type": "string", "description": "The glob pattern."},
                "path": {"type": "string", "description": "Directory to search from."},
            }),
            &["pattern"],
        ),
        tool(
            "run_command",
            "Run a shell command in the workspace and return its exit status, stdout and \
             stderr (each cut at 30,000 characters). Needs approval unless allowed by policy.",
            json!({
                "command": {"type": "string", "description": "The command line, run with `sh -c`."},
                "cwd": {"type": "string", "description": "Working directory, relative to the workspace."},
                "timeout_secs": {"type": "integer", "minimum": 1, "maximum": 3600, "default": 120},
                "env": {"type": "object", "additionalProperties": {"type": "string"}, "description": "Extra environment variables."},
            }),
            &["command"],
        ),
        tool(
            "web_fetch",
            "Fetch a URL over HTTPS and return its content as Markdown (HTML converted, \
             scripts removed). Pages over 5 MB are refused.",
            json!({
                "url": {"type": "string", "format": "uri", "description": "The URL to fetch."},
                "max_chars": {"type": "integer", "minimum": 100, "default": 20000},
            }),
            &["url"],
        ),
        tool(
            "todo",
            "Keep the task list: replace it with the given items. Use it for work of three \
             steps or more, and keep exactly one item in progress.",
            json!({
                "items": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "id": {"type": "string"},
                            "content": {"type": "string", "minLength": 1},
                            "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]},
                        },
                        "required": ["id", "content", "status"],
                    },
                },
            }),
            &["items"],
        ),
    ]
}
