//! The crate's modules that once imported each other in a circle go one way: the lower
//! module names nothing of the upper one in its code (doc comments may point up), so a
//! reader follows the render path top to bottom once: body → body_split →
//! native_fragments → template_text; render_cached → render; profile → error; providers →
//! provider_names.

use std::path::Path;

/// Whether a code line (comments aside) of `text` names `crate::{module}`.
fn names_module(text: &str, module: &str) -> Option<String> {
    let needle = format!("crate::{module}");
    text.lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .find(|line| {
            line.match_indices(&needle).any(|(at, _)| {
                let next = line[at + needle.len()..].chars().next();
                !next.is_some_and(|c| c.is_alphanumeric() || c == '_')
            })
        })
        .map(str::to_owned)
}

#[test]
fn a_lower_module_names_nothing_of_the_upper() {
    // (a lower module's files, the modules above it)
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["template_text.rs"],
            &["body", "body_split", "native_fragments"],
        ),
        (
            &[
                "native_fragments/mod.rs",
                "native_fragments/anthropic.rs",
                "native_fragments/gemini.rs",
                "native_fragments/ollama.rs",
                "native_fragments/openai.rs",
                "native_fragments/responses.rs",
            ],
            &["body", "body_split"],
        ),
        (&["body_split.rs"], &["body"]),
        (&["render.rs"], &["render_cached"]),
        (&["error.rs"], &["profile"]),
        (&["provider_names.rs"], &["providers"]),
    ];
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for (files, uppers) in cases {
        for file in *files {
            let text = std::fs::read_to_string(src.join(file)).expect("a source file");
            for upper in *uppers {
                let line = names_module(&text, upper);
                assert_eq!(line, None, "{file} names crate::{upper}");
            }
        }
    }
}
