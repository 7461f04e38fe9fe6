//! Helpers the tools share: argument parsing, running file-system work off the async
//! threads with cancellation, binary detection and text caps.
//!
//! Promises: argument errors and panics inside a tool body become error outputs, never a
//! panic in the caller; a cancelled call returns [`cancelled`] as soon as the token fires.

use qore_core::{CancellationToken, ToolOutput};
use serde::de::DeserializeOwned;

/// How many leading bytes are checked for NUL to call a file binary.
pub const BINARY_SNIFF_BYTES: usize = 8 * 1024;

/// The output of a call that was cancelled.
pub fn cancelled() -> ToolOutput {
    ToolOutput::error("cancelled: the call was stopped before it finished")
}

/// Parses a tool's arguments object into `T`, or an error output naming the tool and what
/// was wrong.
pub fn parse_args<T: DeserializeOwned>(
    tool: &str,
    input: serde_json::Value,
) -> Result<T, ToolOutput> {
    if !input.is_object() {
        return Err(ToolOutput::error(format!(
            "invalid arguments for {tool}: expected a JSON object, got {}",
            kind_of(&input)
        )));
    }
    serde_json::from_value(input).map_err(|e| {
        ToolOutput::error(format!(
            "invalid arguments for {tool}: {e}; see the tool's input schema"
        ))
    })
}

fn kind_of(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null (the arguments were missing or not valid JSON)",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// The `Tool` impl of a read-only, parallel-safe tool whose struct holds `spec`, `sandbox`
/// and `options`: parse the arguments into `$args`, then run `$body(&sandbox, &options, args,
/// cancel)` on the blocking pool (see [`run_blocking`]).
macro_rules! read_only_tool {
    ($tool:ident, $args:ty, $body:path) => {
        impl qore_core::Tool for $tool {
            fn spec(&self) -> &qore_core::ToolSpec {
                &self.spec
            }
            fn destructive(&self) -> bool {
                false
            }
            fn parallel_safe(&self) -> bool {
                true
            }
            fn call(
                &self,
                input: serde_json::Value,
                cancel: qore_core::CancellationToken,
            ) -> qore_core::ToolFuture {
                let sandbox = self.sandbox.clone();
                let options = self.options.clone();
                Box::pin($crate::util::run_blocking(cancel, move |cancel| {
                    match $crate::util::parse_args::<$args>(NAME, input) {
                        Ok(args) => $body(&sandbox, &options, args, cancel),
                        Err(out) => out,
                    }
                }))
            }
        }
    };
}
pub(crate) use read_only_tool;

/// Runs `body` on the blocking pool. Returns [`cancelled`] as soon as `cancel` fires (the
/// body sees the same token and should stop at its next check); a panic in `body` becomes an
/// error output.
pub async fn run_blocking<F>(cancel: CancellationToken, body: F) -> ToolOutput
where
    F: FnOnce(&CancellationToken) -> ToolOutput + Send + 'static,
{
    if cancel.is_cancelled() {
        return cancelled();
    }
    let token = cancel.clone();
    let task = tokio::task::spawn_blocking(move || body(&token));
    tokio::select! {
        biased;
        _ = cancel.cancelled() => cancelled(),
        joined = task => match joined {
            Ok(out) => {
                if cancel.is_cancelled() { cancelled() } else { out }
            }
            Err(e) => ToolOutput::error(format!("internal error: the tool failed ({e})")),
        },
    }
}

/// Runs `body`, which changes files, on the blocking pool. Cancellation is honoured only
/// before it starts: a change that has begun is finished and reported as it happened, never
/// as "cancelled".
pub async fn run_blocking_to_end<F>(cancel: CancellationToken, body: F) -> ToolOutput
where
    F: FnOnce() -> ToolOutput + Send + 'static,
{
    if cancel.is_cancelled() {
        return cancelled();
    }
    match tokio::task::spawn_blocking(body).await {
        Ok(out) => out,
        Err(e) => ToolOutput::error(format!("internal error: the tool failed ({e})")),
    }
}

/// Whether `bytes` (the start of a file) look binary: a NUL in the first 8 KiB.
pub fn looks_binary(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(BINARY_SNIFF_BYTES)].contains(&0)
}

/// At most `max_chars` characters of `line`, with a note when cut.
pub fn cap_line(line: &str, max_chars: usize) -> String {
    match line.char_indices().nth(max_chars) {
        None => line.to_string(),
        Some((cut, _)) => {
            let rest = line[cut..].chars().count();
            format!("{}… [{rest} more characters]", &line[..cut])
        }
    }
}

/// Splits `text` into lines the way editors count them: `\n` ends a line, a trailing `\r` is
/// part of the ending, and a final newline does not start another line.
pub fn split_lines(text: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    if text.ends_with('\n') || text.is_empty() {
        lines.pop();
    }
    lines
}

/// A size for messages: "256 KiB", "4 MiB", or "100 bytes" when not a whole KiB.
pub fn human_bytes(n: u64) -> String {
    if n >= 1024 * 1024 && n.is_multiple_of(1024 * 1024) {
        format!("{} MiB", n / (1024 * 1024))
    } else if n >= 1024 && n.is_multiple_of(1024) {
        format!("{} KiB", n / 1024)
    } else {
        plural(n as usize, "byte")
    }
}

/// "1 line" / "3 lines".
pub fn plural(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_naturally() {
        assert_eq!(human_bytes(256 * 1024), "256 KiB");
        assert_eq!(human_bytes(4 * 1024 * 1024), "4 MiB");
        assert_eq!(human_bytes(1), "1 byte");
        assert_eq!(human_bytes(1500), "1500 bytes");
    }

    #[test]
    fn binary_means_a_nul_in_the_first_8k() {
        assert!(!looks_binary(b"plain text\n"));
        assert!(looks_binary(b"ab\0cd"));
        let mut late = vec![b'a'; BINARY_SNIFF_BYTES];
        late.push(0);
        assert!(!looks_binary(&late));
    }

    #[test]
    fn lines_are_capped_on_char_boundaries() {
        assert_eq!(cap_line("héllo", 10), "héllo");
        assert_eq!(cap_line("héllo", 2), "hé… [3 more characters]");
    }

    #[test]
    fn lines_split_like_an_editor_counts_them() {
        assert_eq!(split_lines(""), Vec::<&str>::new());
        assert_eq!(split_lines("a"), vec!["a"]);
        assert_eq!(split_lines("a\n"), vec!["a"]);
        assert_eq!(split_lines("a\r\nb\n\n"), vec!["a", "b", ""]);
    }

    #[test]
    fn non_objects_and_bad_fields_are_error_outputs() {
        #[derive(serde::Deserialize, Debug)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        struct A {
            path: String,
        }
        let err = parse_args::<A>("t", serde_json::Value::Null).unwrap_err();
        assert!(err.is_error && err.text_content().contains("expected a JSON object"));
        let err = parse_args::<A>("t", serde_json::json!({})).unwrap_err();
        assert!(err.text_content().contains("missing field `path`"));
        let err = parse_args::<A>("t", serde_json::json!({"path": "a", "x": 1})).unwrap_err();
        assert!(err.text_content().contains("unknown field `x`"));
    }
}
