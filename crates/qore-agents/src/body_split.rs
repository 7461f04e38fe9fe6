//! A `[body]` conversation rendered one message at a time, each message's fragment kept in
//! the history owner's [`EncodeCache`] and rendered again only when it changed.
//!
//! What splits: a body string that is literal text around one include
//! (`[{% include 'openai_messages.jinja' %}]`) of a partial whose one top-level
//! `{% for msg in ctx.history %}` loop renders the conversation. The partial is cut into
//! the text before the loop, the loop's body and the text after it, whitespace control
//! applied as the whole template would; the loop's body is rendered per message with `msg`,
//! `ctx` (its `history` empty) and `loop` (`index0`, `index`, `first`, `last`).
//!
//! Promises:
//! - the bytes are those of the whole template ([`crate::body::BodyTemplate::render`]);
//!   anything that could differ does not split (the whole template renders): a `set` before
//!   or after the loop, a loop body (or a partial it includes) reading `ctx.history` or a
//!   `loop` attribute other than the four, an include whose name is not a literal, a
//!   fragment that ends inside a string or opens with a comma, a render error (the whole
//!   render then reports it);
//! - a fragment is keyed by its message's content, the names of the calls its results
//!   answer, its index and whether it is the last; the cache's tag carries the profile,
//!   the body key and a hash of the rest of the context (system prompt, tools, model);
//! - the trailing-comma stripper and the JSON check run once per fragment; a request
//!   strips and checks only the text around the loop, and joins (as bytes, straight into
//!   the body);
//! - when the loop's body is a bundled partial's byte for byte, each message's fragment is
//!   written natively ([`crate::native_fragments`]: the same bytes, no minijinja value of
//!   the message, no stripping or check), the template rendering only what a writer
//!   declines.

use std::sync::OnceLock;

use minijinja::{context, Environment, Value as J};
use qore_client::{EncodeCache, KeyHasher};
use regex::Regex;

use crate::json_commas::{ends_in_a_list, join_pieces, strip_piece, trim_range};
use crate::native_fragments::{self, Dialect, Input, Marks};
use crate::partials::Partials;
use crate::template_text::{cut, from_inja, includes, regex, Cut};

/// Template names of a split, registered in the body's environment.
#[derive(Debug)]
pub struct Split {
    /// The native writer of the per-message template, when it is a bundled partial's
    /// ([`crate::native_fragments`]).
    pub(crate) native: Option<Dialect>,
    before: String,
    after: String,
    pre: String,
    item: String,
    post: String,
    /// Whether a message's fragment may read `loop.last` (then it is keyed by it).
    reads_last: bool,
}

/// What a split render needs of the conversation.
pub trait Fragments {
    /// How many messages the conversation has.
    fn count(&self) -> usize;
    /// The content key of message `index` (with what its entry reads from elsewhere).
    fn key(&self, index: usize) -> u64;
    /// The `ctx.history` entry of message `index`.
    fn entry(&self, index: usize) -> J;
    /// Message `index` as a native writer reads it ([`crate::native_fragments`]).
    fn message(&self, index: usize) -> Option<Input<'_>>;
}

/// The split of the body string at `key` (inja spellings already read), with its pieces
/// compiled into `env`; `None` when it does not split (see the module doc).
pub fn find(
    key: &str,
    source: &str,
    partials: &Partials,
    env: &mut Environment<'static>,
) -> Option<Split> {
    static WHOLE: OnceLock<Regex> = OnceLock::new();
    static SET: OnceLock<Regex> = OnceLock::new();
    let whole = regex(
        &WHOLE,
        r#"^([^{]*)\{%\s*include\s+['"]([^'"]+)['"]\s*%\}([^{]*)$"#,
    );
    let caps = whole.captures(source)?;
    let text = from_inja(&partials.load(&caps[2]).ok()?);
    let Cut { pre, item, post } = cut(&text)?;
    let set = regex(&SET, r"\{%-?\s*set\b");
    let (pre_ok, post_ok) = (!set.is_match(&pre), !set.is_match(&post));
    let around_ok = !reads_history(&pre, partials) && !reads_history(&post, partials);
    if !(pre_ok && post_ok && around_ok && reads_only_its_message(&item, partials)) {
        return None;
    }
    let reads_last = includes_any(&item, partials, 0, &|t: &str| {
        t.contains("loop.last") || t.contains("loop.is_last")
    });
    let name = |part: &str| format!("{key} ({part} of the conversation)");
    let split = Split {
        native: native_fragments::dialect_of(&item, partials),
        before: caps[1].to_owned(),
        after: caps[3].to_owned(),
        pre: name("before"),
        item: name("one message"),
        post: name("after"),
        reads_last,
    };
    for (name, source) in [(&split.pre, pre), (&split.item, item), (&split.post, post)] {
        env.add_template_owned(name.clone(), source).ok()?;
    }
    Some(split)
}

/// Whether a loop body (and what it includes) reads only its message, `ctx` without its
/// history, and `loop.index0`/`index`/`first`/`last`.
fn reads_only_its_message(text: &str, partials: &Partials) -> bool {
    static FORBIDDEN: OnceLock<Regex> = OnceLock::new();
    let forbidden = regex(
        &FORBIDDEN,
        r"ctx\.history|ctx\[|loop\.(length|revindex|previtem|nextitem|changed|cycle|depth)|loop\(|\{%-?\s*(import|from|extends|macro)\b",
    );
    !includes_any(text, partials, 0, &|t| {
        forbidden.is_match(t) || computed_include(t)
    })
}

/// Whether a template (or what it includes) may read `ctx.history`.
pub fn reads_history(text: &str, partials: &Partials) -> bool {
    static READS: OnceLock<Regex> = OnceLock::new();
    let reads = regex(
        &READS,
        r"ctx\.history|ctx\[|\{%-?\s*(import|from|extends)\b",
    );
    includes_any(text, partials, 0, &|t| {
        reads.is_match(t) || computed_include(t)
    })
}

/// Whether `text` includes a partial by a name it computes (not a literal).
fn computed_include(text: &str) -> bool {
    static COMPUTED: OnceLock<Regex> = OnceLock::new();
    regex(&COMPUTED, r#"\{%-?\s*include\s+[^'"\s]"#).is_match(text)
}

/// Whether `test` holds for `text` or a partial it includes (by a literal name; one that
/// cannot be read counts as holding).
fn includes_any(
    text: &str,
    partials: &Partials,
    depth: usize,
    test: &dyn Fn(&str) -> bool,
) -> bool {
    depth > 8
        || test(text)
        || includes(text).into_iter().any(|name| {
            (partials.load(name).ok()).is_none_or(|t| includes_any(&t, partials, depth + 1, test))
        })
}

/// The text around the conversation, rendered and stripped: what a request renders once
/// per context (the system prompt, tools and model), kept beside the fragments.
#[derive(Debug, Clone)]
pub struct Frame {
    /// The rendered text before the first message.
    pub pre: String,
    /// The rendered text after the last message.
    pub post: String,
    /// The text around, with no message, is valid JSON and leaves the messages in a list:
    /// the whole text needs no JSON check.
    pub checked: bool,
}

impl Split {
    /// The text around the conversation for `ctx`; `None` when the whole template must
    /// render instead.
    pub fn frame(&self, env: &Environment<'static>, ctx: &J) -> Option<Frame> {
        let render = |name: &str| env.get_template(name).ok()?.render(context! { ctx }).ok();
        let pre = format!("{}{}", self.before, render(&self.pre)?);
        let post = format!("{}{}", render(&self.post)?, self.after);
        let (pre, post) = (
            strip_piece(&pre)?.into_owned(),
            strip_piece(&post)?.into_owned(),
        );
        let mut skeleton = Vec::new();
        let checked = ends_in_a_list(&pre)
            && join_pieces([pre.as_bytes(), post.as_bytes()], &mut skeleton)
            && serde_json::from_slice::<serde::de::IgnoredAny>(skeleton.trim_ascii()).is_ok();
        Some(Frame { pre, post, checked })
    }

    /// Append the body string's text to `out`, trimmed as `str::trim` would: `frame`
    /// around each message's fragment, taken from `cache` or rendered with the context
    /// `ctx` gives (asked only then); `None` when the whole template must render instead
    /// (see the module doc; what was appended is then to be dropped).
    pub fn join(
        &self,
        env: &Environment<'static>,
        frame: &Frame,
        ctx: &mut dyn FnMut() -> J,
        fragments: &dyn Fragments,
        cache: &mut EncodeCache,
        out: &mut Vec<u8>,
    ) -> Option<()> {
        let n = fragments.count();
        // What the native writers read of the context, read once when first needed.
        let mut marks: Option<Marks> = None;
        // Where a native writer writes (grown once, not once per message); the cache
        // keeps an exact copy.
        let mut scratch = Vec::new();
        let mut size = frame.pre.len() + frame.post.len();
        for index in 0..n {
            let last = index + 1 == n;
            let key = KeyHasher::default()
                .num(fragments.key(index))
                .num(index as u64)
                .tag(u8::from(last && self.reads_last))
                .finish();
            let bytes = cache
                .get_or_fill(index, key, |bytes| {
                    let native = self.native.zip(fragments.message(index));
                    if let Some((dialect, input)) = native {
                        let marks = marks.get_or_insert_with(|| Marks::of(&ctx()));
                        scratch.clear();
                        if native_fragments::write(dialect, &input, marks, &mut scratch) {
                            bytes.extend_from_slice(&scratch);
                            return Ok(());
                        }
                    }
                    let vars = context! { ctx => ctx(), msg => fragments.entry(index),
                    loop => context! { index0 => index, index => index + 1,
                        first => index == 0, last } };
                    let template = env.get_template(&self.item).map_err(|_| ())?;
                    let text = template.render(vars).map_err(|_| ())?;
                    let text = strip_piece(&text).ok_or(())?;
                    if !fragment_is_listed(&text) {
                        return Err(());
                    }
                    bytes.extend_from_slice(text.as_bytes());
                    Ok(())
                })
                .ok()?;
            size += bytes.len();
        }
        // With room for what follows the conversation in the body (tools, options).
        out.reserve(size + size / 4);
        let start = out.len();
        let texts = (0..n).map(|i| cache.get(i).unwrap_or_default());
        let all = std::iter::once(frame.pre.as_bytes())
            .chain(texts)
            .chain(std::iter::once(frame.post.as_bytes()));
        if !join_pieces(all, out) {
            return None;
        }
        let kept = trim_range(&out[start..]);
        out.truncate(start + kept.end);
        out.drain(start..start + kept.start);
        // Elements each followed by a comma, put in a list of a valid skeleton, make a
        // valid list: the check of the whole text is needed only when that is not so.
        (frame.checked || serde_json::from_slice::<serde::de::IgnoredAny>(&out[start..]).is_ok())
            .then_some(())
    }
}

/// Whether a stripped fragment is whitespace, or JSON values each followed by a comma
/// (what a list element of the conversation renders to).
fn fragment_is_listed(text: &str) -> bool {
    let body = text.trim();
    if body.is_empty() {
        return true;
    }
    let Some(values) = body.strip_suffix(',') else {
        return false;
    };
    serde_json::from_str::<serde::de::IgnoredAny>(&format!("[{values}]")).is_ok()
}
