//! Profile templates read as text, before minijinja sees them: the seed's inja spellings
//! ([`from_inja`]), a partial cut around its one history loop ([`cut`]), the partials a
//! template includes by a literal name ([`includes`]).
//!
//! Promises: each is a pure function of its text (no partial is loaded, nothing compiled);
//! this module knows nothing of the modules that use it ([`crate::body`],
//! [`crate::body_split`], [`crate::native_fragments`]), so the render path reads top to
//! bottom: body, body_split, native_fragments, this.

use std::sync::OnceLock;

use regex::Regex;

/// A regex compiled once into `cell` (`pattern` is fixed, so it compiles).
pub(crate) fn regex(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).unwrap_or_else(|_| unreachable!("a fixed pattern")))
}

/// The inja spellings the seed's profiles use, in minijinja's: `{% else if` is `{% elif`,
/// `loop.is_last`/`loop.is_first` are `loop.last`/`loop.first`.
pub fn from_inja(template: &str) -> String {
    if !template.contains("else if") && !template.contains("loop.is_") {
        return template.to_owned();
    }
    let mut out = template
        .replace("loop.is_last", "loop.last")
        .replace("loop.is_first", "loop.first");
    for open in ["{%", "{%-", "{%+"] {
        for gap in [" ", ""] {
            out = out.replace(
                &format!("{open}{gap}else if "),
                &format!("{open}{gap}elif "),
            );
        }
    }
    out
}

/// A partial cut around its one top-level `{% for msg in ctx.history %}` loop, whitespace
/// control applied as the whole template would.
pub(crate) struct Cut {
    pub pre: String,
    /// The loop's body: what renders once per message.
    pub item: String,
    pub post: String,
}

/// The cut of a partial's text (inja spellings already read); `None` without exactly one
/// such loop.
pub(crate) fn cut(text: &str) -> Option<Cut> {
    static FOR: OnceLock<Regex> = OnceLock::new();
    static TAG: OnceLock<Regex> = OnceLock::new();
    let text = text
        .strip_suffix('\n')
        .map_or(text, |t| t.strip_suffix('\r').unwrap_or(t));
    let start = regex(&FOR, r"\{%(-?)\s*for\s+msg\s+in\s+ctx\.history\s*(-?)%\}");
    let mut loops = start.captures_iter(text);
    let open = loops.next()?;
    if loops.next().is_some() {
        return None;
    }
    let tags = regex(&TAG, r"\{%(-?)\s*(for|endfor)\b[^%]*?(-?)%\}");
    let (whole_open, body_start) = (open.get(0)?, open.get(0)?.end());
    let mut depth = 0;
    let close = tags.captures_iter(&text[body_start..]).find(|t| {
        depth += if &t[2] == "for" { 1 } else { -1 };
        depth < 0
    })?;
    let close_at = body_start + close.get(0)?.start();
    let after_at = body_start + close.get(0)?.end();
    let trim = |s: &str, start: bool, end: bool| {
        let s = if start { s.trim_start() } else { s };
        (if end { s.trim_end() } else { s }).to_owned()
    };
    Some(Cut {
        pre: trim(&text[..whole_open.start()], false, &open[1] == "-"),
        item: trim(
            &text[body_start..close_at],
            &open[2] == "-",
            &close[1] == "-",
        ),
        post: trim(&text[after_at..], &close[3] == "-", false),
    })
}

/// The names of the partials `text` includes by a literal name.
pub(crate) fn includes(text: &str) -> Vec<&str> {
    static INCLUDE: OnceLock<Regex> = OnceLock::new();
    let include = regex(&INCLUDE, r#"\{%-?\s*include\s+['"]([^'"]+)['"]"#);
    (include.captures_iter(text))
        .filter_map(|c| c.get(1).map(|m| m.as_str()))
        .collect()
}
