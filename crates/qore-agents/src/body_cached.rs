//! [`BodyTemplate::render_cached`]: a body whose conversation splits
//! ([`crate::body_split`]), rendered through the history owner's [`EncodeCache`].
//!
//! Promises:
//! - the bytes are those of rendering the whole context then finishing the body (the
//!   caller's `finish`: what the session adds, extra fields); anything that could differ
//!   renders and finishes whole;
//! - the fragments live in the cache under the caller's tag (what the context besides the
//!   history depends on); beside them, the finished text around the conversation, valid
//!   for one `finish` key: a request whose context and finish are those of the one before
//!   renders only its new messages and copies the rest.

use minijinja::{context, Value as J};
use qore_client::EncodeCache;

use crate::body::{BodyTemplate, RenderError, SplitRun};
use crate::body_split::{Fragments, Frame, Split};

/// Stands for the conversation while the text around it is finished (a JSON string no
/// profile writes; found exactly once, or nothing is kept).
const STAND_IN: &str = "\"\\u0000qore: the conversation\\u0000\"";

/// What finishes a rendered body, and a key of what it depends on.
pub struct Finish<'f> {
    /// A key of everything `apply` depends on, so a cached finish is reused only for the same inputs.
    pub key: u64,
    /// The finished body; `None` when it cannot be (the caller then renders whole).
    pub apply: &'f dyn Fn(Vec<u8>) -> Option<Vec<u8>>,
}

impl BodyTemplate {
    /// The finished body for the context `header` gives with `fragments` as its history,
    /// through `cache` under `tag` (see the module doc); `header` is asked only for what
    /// the cache lacks. `Ok(None)` when the body does not split, the split did not render
    /// or `finish` failed: render the whole context.
    pub fn render_cached(
        &self,
        fragments: &dyn Fragments,
        cache: &mut EncodeCache,
        tag: &str,
        header: &dyn Fn() -> J,
        finish: &Finish<'_>,
    ) -> Result<Option<Vec<u8>>, RenderError> {
        let Some((key, split)) = &self.split else {
            return Ok(None);
        };
        cache.begin(tag, fragments.count());
        if let Some(bytes) = reuse(self, split, fragments, cache, header, finish.key) {
            return Ok(Some(bytes));
        }
        let inner = header();
        let ctx = context! { ctx => inner.clone() };
        let mut run = Some(SplitRun {
            ctx: &inner,
            fragments,
            cache,
            failed: false,
            placed: None,
        });
        let mut out = Vec::with_capacity(4096);
        self.write(&self.root, &ctx, &mut run, &mut out)?;
        let Some(run) = run.filter(|r| !r.failed) else {
            return Ok(None);
        };
        // The finish reads the top-level members: `system` it may rewrite whole. With the
        // conversation stood in for, the finished text around it is kept, and the body is
        // that text around the conversation (finishing never reads inside a member).
        if let Some((frame, start, end)) = run.placed.filter(|_| key != "system") {
            let probe = [&out[..start], STAND_IN.as_bytes(), &out[end..]].concat();
            let done = (finish.apply)(probe).unwrap_or_default();
            let mut found = memchr::memmem::find_iter(&done, STAND_IN.as_bytes());
            if let (Some(at), None) = (found.next(), found.next()) {
                let (head, tail) = (&done[..at], &done[at + STAND_IN.len()..]);
                // Finishing usually leaves the text around as it was: then the rendered
                // text is the body.
                let body = if head == &out[..start] && tail == &out[end..] {
                    None
                } else {
                    Some([head, &out[start..end], tail].concat())
                };
                let beside = run.cache.beside();
                beside.clear();
                beside.push(finish.key.to_le_bytes().to_vec());
                beside.push(head.to_vec());
                beside.extend([frame.pre, frame.post].map(String::into_bytes));
                beside.push(tail.to_vec());
                beside.push(vec![u8::from(frame.checked)]);
                return Ok(Some(body.unwrap_or(out)));
            }
        }
        Ok((finish.apply)(out))
    }
}

/// The finished body from the text kept beside the fragments, when it is there for
/// `finish_key` and the conversation renders to something.
fn reuse(
    body: &BodyTemplate,
    split: &Split,
    fragments: &dyn Fragments,
    cache: &mut EncodeCache,
    header: &dyn Fn() -> J,
    finish_key: u64,
) -> Option<Vec<u8>> {
    let parts = std::mem::take(cache.beside());
    let [key, head, pre, post, tail, checked] = &parts[..] else {
        return None;
    };
    if key[..] != finish_key.to_le_bytes() {
        return None;
    }
    let text = |b: &[u8]| String::from_utf8(b.to_vec()).ok();
    let frame = Frame {
        pre: text(pre)?,
        post: text(post)?,
        checked: checked.first() == Some(&1),
    };
    let mut inner: Option<J> = None;
    let mut ctx = || inner.get_or_insert_with(header).clone();
    let mut out = Vec::with_capacity(head.len() + cache.bytes_held() + tail.len());
    out.extend_from_slice(head);
    split.join(&body.env, &frame, &mut ctx, fragments, cache, &mut out)?;
    if out.len() == head.len() {
        return None;
    }
    out.extend_from_slice(tail);
    *cache.beside() = parts;
    Some(out)
}
