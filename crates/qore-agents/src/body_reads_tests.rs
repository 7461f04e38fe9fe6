//! What a body reads, written as profiles write it, and the style that follows.

use super::*;

fn reads(body: &str) -> BodyReads {
    let table: toml::Table = toml::from_str(body).unwrap();
    BodyReads::of(Some(&table), &Partials::default())
}

/// `fill`, `history`, `opaque` as named in `flags`.
fn flags(flags: &str) -> BodyReads {
    BodyReads {
        fill: flags.contains("fill"),
        history: flags.contains("history"),
        opaque: flags.contains("opaque"),
    }
}

/// (body, what it reads): each way of reading, as a profile would write it.
const CASES: &[(&str, &str)] = &[
    ("prompt = '{{ tojson(ctx.prefix) }}'", "fill"),
    ("s = '{{ tojson(ctx.suffix) }}'", "fill"),
    (
        "m = '{% for m in ctx.history %}{{ m.content }}{% endfor %}'",
        "history",
    ),
    ("m = '[{% include \"openai_messages.jinja\" %}]'", "history"),
    (
        "m = '[{% include \"partials/google_contents.jinja\" %}]'",
        "history",
    ),
    ("[o]\na = ['{% if ctx.prefix %}1{% endif %}']", "fill"),
    ("m = '{{ tojson(ctx.model) }}'\nt = 0", ""),
    ("m = 'no {{ template'", "opaque"),
    ("m = 'x'\nn = 1", ""),
    ("m = '{{ tojson(ctx) }}'", "opaque"),
    ("m = '{{ ctx[\"prefix\"] }}'", "fill"),
    (
        "m = '{% if existsIn(ctx, \"suffix\") %}1{% endif %}'",
        "fill",
    ),
    ("m = '{{ ctx[key] }}'", "opaque"),
    ("m = '{% include \"missing.jinja\" %}'", "opaque"),
    ("m = '{% include name %}'", "opaque"),
    ("m = '{% from \"x\" import y %}'", "opaque"),
    ("m = '{% set h = ctx.history %}{{ h }}'", "history"),
    ("m = '{# ctx.prefix #}{{ \"ctx.suffix\" }}'", ""),
    (
        "m = '{% if x %}1{% else if ctx.suffix %}2{% endif %}'",
        "fill",
    ),
    (
        "p = '{{ tojson(ctx.prefix) }}'\nm = '{{ tojson(ctx.history) }}'",
        "fill history",
    ),
];

#[test]
fn what_a_body_reads() {
    for (body, read) in CASES {
        assert_eq!(reads(body), flags(read), "{body}");
    }
}

#[test]
fn the_style_follows_the_reads() {
    use CompletionStyle::{Chat, Fill};
    // (reads, style, chats)
    let cases = [
        (flags("fill"), Some(Fill), false),
        (flags("fill history"), Some(Fill), true),
        (flags("history"), Some(Chat), true),
        (flags("opaque"), Some(Chat), true),
        (flags(""), None, true),
        (BodyReads::PROTOCOL_CHAT, Some(Chat), true),
    ];
    for (reads, style, chats) in cases {
        let got = (reads.completion_style(), reads.chats());
        assert_eq!(got, (style, chats), "{reads:?}");
    }
    let no_body = BodyReads::of(None, &Partials::default());
    assert_eq!(no_body, BodyReads::PROTOCOL_CHAT);
}
