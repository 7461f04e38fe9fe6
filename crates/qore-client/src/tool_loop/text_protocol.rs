//! The text tool protocol, for models or providers without native tool calling: the tools
//! are described in the system prompt, calls are written into the reply as
//! `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` blocks, and results go back in
//! the next user turn as `<tool_result name="..." id="...">...</tool_result>` blocks.
//!
//! Promises:
//! - [`render_protocol_section`] is deterministic: the same specs give the same bytes, so
//!   prompt caches keep hitting;
//! - [`TextToolParser`] gives the same events (up to how [`TextToolEvent::Text`] is cut)
//!   wherever the reply is split into deltas, a tag or a fence split included;
//! - blocks inside code are not calls: not inside a ```` ``` ```` or `~~~` fence (tracked by
//!   lines, any fence length >= 3, also after indentation, `>` or list markers; closed by a
//!   line of the same character at least as long; an unclosed fence runs to the end) nor
//!   inside an inline code span on one line, so a model showing the syntax runs nothing;
//! - inside a block, whitespace around the JSON and anything after the first JSON value
//!   are ignored, as is one leading fence line (```` ```json ````); `args` is an alias of
//!   `arguments`, a missing or null `arguments` is `{}`; the first `</tool_call>` closes
//!   the block (a JSON string writes it `<\/tool_call>`);
//! - a `<tool_call>` whose content does not start like a call (`{` or a fence) and that
//!   meets another `<tool_call>` or the end of the reply before a `</tool_call>` is prose
//!   (a model mentioning the tag): it stays text and what follows it is scanned again;
//! - every block gets an id, `{prefix}text_call_{n}` with n counted from 1 per parser, and
//!   becomes exactly one [`TextToolEvent::Call`] or [`TextToolEvent::Malformed`] (bad
//!   JSON, no string `name`, non-object arguments, never closed), which the loop answers
//!   with [`malformed_result`] so every block gets one result;
//! - [`TextToolEvent::Text`] carries exactly the reply outside the blocks, for display;
//! - [`render_results`] never lets a result close its block early.

use serde_json::{Map, Value};

use super::execute::ToolCall;
pub use super::text_render::{malformed_result, render_protocol_section, render_results};

const OPEN: &str = "<tool_call>";
const CLOSE: &str = "</tool_call>";
const SYNTAX_HINT: &str =
    "Write a call as <tool_call>{\"name\": \"TOOL_NAME\", \"arguments\": {...}}</tool_call>.";

/// What the parser finds in a reply, in reply order.
#[derive(Debug, Clone, PartialEq)]
pub enum TextToolEvent {
    /// Reply text outside the call blocks.
    Text(String),
    /// A well-formed call block.
    Call(ToolCall),
    /// A block that is not a call; `raw` is its content between the tags.
    Malformed {
        /// The id given to the block (it answers like a call).
        id: String,
        /// The block's content between the tags.
        raw: String,
        /// Why it is not a call, for the model to read.
        message: String,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Mode {
    #[default]
    Text,
    /// Inside a fence of this character and length.
    Fence(u8, usize),
    Call,
}

/// Streaming parser of one reply (see the module doc). `Default` is `new("")`.
#[derive(Debug, Default)]
pub struct TextToolParser {
    id_prefix: String,
    blocks: usize,
    /// Input not yet settled starts at `pos`.
    buf: String,
    pos: usize,
    mode: Mode,
    /// Whether `pos` is past the start of a line (fences are only recognised at one).
    mid_line: bool,
    /// The content of the open block.
    body: String,
    finished: bool,
    out: Vec<TextToolEvent>,
}

impl TextToolParser {
    /// A parser whose block ids are `{id_prefix}text_call_{n}`.
    pub fn new(id_prefix: impl Into<String>) -> Self {
        TextToolParser {
            id_prefix: id_prefix.into(),
            ..Self::default()
        }
    }

    /// Take the next delta; returns what it settled (text that might start a tag, a fence
    /// or a code span waits for the next delta).
    pub fn feed(&mut self, delta: &str) -> Vec<TextToolEvent> {
        self.buf.push_str(delta);
        self.pump();
        std::mem::take(&mut self.out)
    }

    /// The reply ended: settle the rest; a block still open is malformed (or prose).
    pub fn finish(mut self) -> Vec<TextToolEvent> {
        self.finished = true;
        self.pump();
        while self.mode == Mode::Call && is_prose(&self.body, "") {
            self.abandon();
            self.pump();
        }
        if self.mode == Mode::Call {
            let id = self.next_id();
            let message = format!("The <tool_call> block was never closed with {CLOSE}.");
            self.out.push(TextToolEvent::Malformed {
                id,
                raw: std::mem::take(&mut self.body),
                message: format!("{message} {SYNTAX_HINT}"),
            });
        }
        self.out
    }

    fn pump(&mut self) {
        while self.pos < self.buf.len() {
            let progressed = match self.mode {
                Mode::Text if !self.mid_line => self.text_line_start(),
                Mode::Text => self.text(),
                Mode::Fence(ch, len) if !self.mid_line => self.fence_line_start(ch, len),
                Mode::Fence(..) => self.fence_line(),
                Mode::Call => self.call(),
            };
            if !progressed {
                break;
            }
        }
        self.buf.drain(..self.pos);
        self.pos = 0;
    }

    fn next_id(&mut self) -> String {
        self.blocks += 1;
        format!("{}text_call_{}", self.id_prefix, self.blocks)
    }

    /// Settle the next `n` bytes of input as visible text.
    fn emit(&mut self, n: usize) -> bool {
        let text = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        push_text(&mut self.out, text);
        true
    }

    fn past_line_start(&mut self) -> bool {
        self.mid_line = true;
        true
    }

    /// At a line start outside fences: does the line open a fence?
    fn text_line_start(&mut self) -> bool {
        let rest = &self.buf.as_bytes()[self.pos..];
        match fence_at(rest, b" \t>-*+.)0123456789", self.finished) {
            None => false,
            // A backtick in a backtick fence's info string makes it inline code instead.
            Some(Some(f)) if f.ch == b'~' || !f.info.contains(&b'`') => {
                self.mode = Mode::Fence(f.ch, f.run);
                self.emit(f.end)
            }
            Some(_) => self.past_line_start(),
        }
    }

    /// At a line start inside a fence: does the line close it?
    fn fence_line_start(&mut self, ch: u8, len: usize) -> bool {
        let rest = &self.buf.as_bytes()[self.pos..];
        match fence_at(rest, b" \t>", self.finished) {
            None => false,
            Some(Some(f))
                if f.ch == ch && f.run >= len && f.info.iter().all(u8::is_ascii_whitespace) =>
            {
                self.mode = Mode::Text;
                self.emit(f.end)
            }
            Some(_) => self.past_line_start(),
        }
    }

    /// Inside a fence, past the line start: the rest of the line is text.
    fn fence_line(&mut self) -> bool {
        let rest = &self.buf.as_bytes()[self.pos..];
        let n = match rest.iter().position(|&b| b == b'\n') {
            Some(k) => {
                self.mid_line = false;
                k + 1
            }
            None => rest.len(),
        };
        self.emit(n)
    }

    /// Outside fences, past the line start: text, a code span, or a block's opening tag.
    fn text(&mut self) -> bool {
        let rest = &self.buf.as_bytes()[self.pos..];
        let n = match rest.iter().position(|&b| matches!(b, b'\n' | b'`' | b'<')) {
            None => rest.len(),
            Some(0) if rest[0] == b'\n' => {
                self.mid_line = false;
                1
            }
            Some(0) if rest.starts_with(OPEN.as_bytes()) => {
                self.pos += OPEN.len();
                self.mode = Mode::Call;
                return true;
            }
            Some(0) if rest[0] == b'<' && OPEN.as_bytes().starts_with(rest) => {
                if !self.finished {
                    return false;
                }
                rest.len()
            }
            Some(0) if rest[0] == b'<' => 1,
            Some(0) => match code_span_len(rest, self.finished) {
                Some(n) => n,
                None => return false,
            },
            Some(i) => i,
        };
        self.emit(n)
    }

    /// Inside a block: collect its content until the closing tag.
    fn call(&mut self) -> bool {
        let rest = &self.buf[self.pos..];
        let close = rest.find(CLOSE);
        if let Some(i) = rest.find(OPEN).filter(|_| is_prose(&self.body, rest)) {
            if close.is_none_or(|c| i < c) {
                self.body.push_str(&rest[..i]);
                self.pos += i;
                self.abandon();
                return true;
            }
        }
        if let Some(i) = close {
            self.body.push_str(&rest[..i]);
            self.pos += i + CLOSE.len();
            self.mode = Mode::Text;
            let (id, body) = (self.next_id(), std::mem::take(&mut self.body));
            self.out.push(parse_block(id, body));
            return true;
        }
        // Keep back what may be the start of a tag split across deltas.
        let keep = match rest.rfind('<') {
            Some(i)
                if !self.finished && [CLOSE, OPEN].iter().any(|t| t.starts_with(&rest[i..])) =>
            {
                rest.len() - i
            }
            _ => 0,
        };
        let take = rest.len() - keep;
        self.body.push_str(&rest[..take]);
        self.pos += take;
        take > 0
    }

    /// The opening tag was prose: show it, and scan what followed it again as text.
    fn abandon(&mut self) {
        push_text(&mut self.out, OPEN);
        let rest = self.buf.split_off(self.pos);
        self.buf = std::mem::take(&mut self.body) + &rest;
        self.pos = 0;
        self.mode = Mode::Text;
        self.mid_line = true;
    }
}

/// Whether a block's content (`body` then `rest`) starts like prose, not like a call (`{`
/// or a fence, after whitespace); unknown (false) while it is all whitespace.
fn is_prose(body: &str, rest: &str) -> bool {
    let head = match body.trim_start() {
        "" => rest.trim_start(),
        lead => lead,
    };
    head.starts_with(|c: char| !matches!(c, '{' | '`' | '~'))
}

/// Parse a whole reply at once.
pub fn parse_reply(text: &str, id_prefix: &str) -> Vec<TextToolEvent> {
    let mut parser = TextToolParser::new(id_prefix);
    let mut events = parser.feed(text);
    for event in parser.finish() {
        match event {
            TextToolEvent::Text(text) => push_text(&mut events, &text),
            other => events.push(other),
        }
    }
    events
}

fn push_text(out: &mut Vec<TextToolEvent>, text: &str) {
    match out.last_mut() {
        _ if text.is_empty() => {}
        Some(TextToolEvent::Text(last)) => last.push_str(text),
        _ => out.push(TextToolEvent::Text(text.to_owned())),
    }
}

fn run_len(b: &[u8], from: usize, ch: u8) -> usize {
    b[from..].iter().take_while(|&&c| c == ch).count()
}

/// A line that starts (after bytes of `prefix`) with a run of backticks or tildes.
struct Fence<'a> {
    ch: u8,
    run: usize,
    /// The rest of the line after the run.
    info: &'a [u8],
    /// Where the line ends, after its newline.
    end: usize,
}

/// The fence line at the start of `b`: `Some(None)` when it is not one, `None` when more
/// input is needed to tell.
fn fence_at<'a>(b: &'a [u8], prefix: &[u8], finished: bool) -> Option<Option<Fence<'a>>> {
    let i = b.iter().take_while(|c| prefix.contains(c)).count();
    let ch = match b.get(i) {
        Some(&c) if c == b'`' || c == b'~' => c,
        Some(_) => return Some(None),
        None => return finished.then_some(None),
    };
    let run = run_len(b, i, ch);
    if run < 3 && i + run < b.len() {
        return Some(None);
    }
    let end = match b[i..].iter().position(|&c| c == b'\n') {
        Some(k) => i + k + 1,
        None if finished => b.len(),
        None => return None,
    };
    let info = &b[i + run..end];
    Some((run >= 3).then_some(Fence { ch, run, info, end }))
}

/// `b` starts with a backtick run: the length of the code span it opens on this line, or
/// of the run alone when no run of the same length closes it; `None` when more input is
/// needed.
fn code_span_len(b: &[u8], finished: bool) -> Option<usize> {
    let n = run_len(b, 0, b'`');
    let mut j = n;
    loop {
        let Some(k) = b[j..].iter().position(|&c| c == b'`' || c == b'\n') else {
            return finished.then_some(n);
        };
        let at = j + k;
        if b[at] == b'\n' {
            return Some(n);
        }
        let m = run_len(b, at, b'`');
        if at + m == b.len() && !finished {
            return None;
        }
        if m == n {
            return Some(at + m);
        }
        j = at + m;
    }
}

/// A block's content as a call, or why it is not one.
fn parse_block(id: String, raw: String) -> TextToolEvent {
    let mut json = raw.trim_start();
    if json.starts_with("```") || json.starts_with("~~~") {
        json = json.find('\n').map_or("", |i| &json[i + 1..]);
    }
    let call = match serde_json::Deserializer::from_str(json)
        .into_iter::<Value>()
        .next()
    {
        None => Err("The <tool_call> block is empty.".to_owned()),
        Some(Err(err)) => Err(format!("The <tool_call> block is not valid JSON ({err}).")),
        Some(Ok(Value::Object(object))) => call_of(object),
        Some(Ok(other)) => Err(format!(
            "The <tool_call> block must hold a JSON object, not {other}."
        )),
    };
    match call {
        Ok((name, input)) => TextToolEvent::Call(ToolCall {
            id,
            name,
            input,
            raw_input: None,
        }),
        Err(message) => TextToolEvent::Malformed {
            id,
            raw,
            message: format!("{message} {SYNTAX_HINT}"),
        },
    }
}

fn call_of(mut object: Map<String, Value>) -> Result<(String, Value), String> {
    let name = match object.remove("name") {
        Some(Value::String(name)) if !name.trim().is_empty() => name,
        _ => return Err("The <tool_call> object needs a non-empty string \"name\".".into()),
    };
    match object.remove("arguments").or_else(|| object.remove("args")) {
        None | Some(Value::Null) => Ok((name, Value::Object(Map::new()))),
        Some(arguments @ Value::Object(_)) => Ok((name, arguments)),
        Some(other) => Err(format!(
            "The \"arguments\" of {name} must be a JSON object, not {other}."
        )),
    }
}

#[cfg(test)]
#[path = "text_protocol_tests.rs"]
mod tests;
