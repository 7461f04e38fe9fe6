//! Fuzz targets: one function per target, `&[u8]` in, a panic on any broken promise. The
//! libFuzzer binaries under the repository's `fuzz/` and the seeded proptest pass in
//! `tests/fuzz_seeded.rs` call these same functions, so a target is written once.
//!
//! Promises (each checked on every input, beyond "no panic"):
//! - [`json_commas`]: the stripper only ever removes commas, borrows when it removes none,
//!   leaves valid JSON alone, and JSON written with the commas partials leave (after every
//!   element, before the first, doubled) parses to the value it was written from;
//! - [`profile`]: a profile file either parses or is refused with a line inside the file;
//!   one that parses goes through the catalog (beside the bundled profiles, so `extends`
//!   resolves) and, when it becomes an agent, through load-time validation.
//!
//! `#[doc(hidden)]`: test support, not part of the crate's API.

use std::path::Path;
use std::sync::OnceLock;

use serde_json::Value;

use crate::catalog::{BUNDLED_AGENTS, BUNDLED_DIR};
use crate::json_commas::strip_trailing_commas;
use crate::profile::ProfileFile;
use crate::providers::Providers;
use crate::validate::validate_agent;
use crate::{AgentError, Catalog, Partials};

/// The trailing-comma stripper target.
pub fn json_commas(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let stripped = strip_trailing_commas(&text);
    let mut kept = stripped.chars().peekable();
    for c in text.chars() {
        match kept.peek() {
            Some(&k) if k == c => {
                kept.next();
            }
            _ => assert_eq!(c, ',', "only commas go: {text:?} -> {stripped:?}"),
        }
    }
    assert_eq!(
        kept.next(),
        None,
        "nothing is added: {text:?} -> {stripped:?}"
    );
    if serde_json::from_str::<Value>(&text).is_ok() {
        assert!(
            matches!(stripped, std::borrow::Cow::Borrowed(_)),
            "valid JSON is left alone: {text:?}"
        );
    }

    let mut written = String::new();
    let value = Writer { data, at: 0 }.value(0, &mut written);
    let parsed: Result<Value, _> = serde_json::from_str(&strip_trailing_commas(&written));
    assert_eq!(parsed.ok(), Some(value), "{written:?}");
}

/// Writes a JSON value chosen by the input's bytes the way partials do: a comma after
/// every element, sometimes one before the first or a doubled one (an element that
/// rendered to nothing), whitespace between.
struct Writer<'a> {
    data: &'a [u8],
    at: usize,
}

impl Writer<'_> {
    fn next(&mut self) -> u8 {
        let byte = self.data.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        byte
    }

    fn space(&mut self, out: &mut String) {
        out.push_str(["", " ", "\n", "\t ", "\r\n  "][usize::from(self.next() % 5)]);
    }

    fn value(&mut self, depth: usize, out: &mut String) -> Value {
        let choice = self.next();
        match choice % 5 {
            2 | 3 if depth < 4 => {
                let object = choice % 5 == 3;
                let (open, close) = if object { ('{', '}') } else { ('[', ']') };
                out.push(open);
                let flags = self.next();
                if flags & 1 != 0 {
                    out.push(',');
                }
                let mut items = Vec::new();
                for i in 0..usize::from(flags >> 1) % 4 {
                    self.space(out);
                    if object {
                        out.push_str(&format!("\"k{i},]\": "));
                    }
                    let item = self.value(depth + 1, out);
                    items.push((format!("k{i},]"), item));
                    out.push(',');
                    if flags & 0x80 != 0 {
                        self.space(out);
                        out.push(',');
                    }
                }
                self.space(out);
                out.push(close);
                match object {
                    true => Value::Object(items.into_iter().collect()),
                    false => Value::Array(items.into_iter().map(|(_, v)| v).collect()),
                }
            }
            1 => {
                let strings = ["", ",", ",]", "\\\"}", "\\", "a,}b", "[,", "é,\n]"];
                let text = strings[usize::from(self.next() % 8)];
                out.push_str(&Value::from(text).to_string());
                Value::from(text)
            }
            4 => {
                out.push_str("null");
                Value::Null
            }
            _ => {
                let n = i64::from(self.next()) - 128;
                out.push_str(&n.to_string());
                Value::from(n)
            }
        }
    }
}

/// The profile loader target.
pub fn profile(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let path = Path::new("agents/fuzz.toml");
    let file = match ProfileFile::parse(path, &text) {
        Ok(file) => file,
        Err(err) => {
            let lines = text.split('\n').count();
            match &err {
                AgentError::Toml { line, column, .. } => {
                    assert!((1..=lines).contains(line) && *column >= 1, "{err}")
                }
                other => panic!("a parse error that is not a TOML one: {other}"),
            }
            return;
        }
    };
    let name = file.name();
    let mut files: Vec<(ProfileFile, bool)> = bundled().iter().map(|f| (f.clone(), true)).collect();
    files.push((file, false));
    let catalog = Catalog::from_files(files);
    let messages: Vec<String> = catalog.errors.iter().map(ToString::to_string).collect();
    assert!(messages.iter().all(|m| !m.is_empty()));
    if let Some(agent) = catalog.get(&name) {
        let (providers, partials) = validation_parts();
        if let Err(err) = validate_agent(agent, providers, partials) {
            assert!(!err.to_string().is_empty());
        }
    }
}

/// The bundled profiles, parsed once.
fn bundled() -> &'static [ProfileFile] {
    static FILES: OnceLock<Vec<ProfileFile>> = OnceLock::new();
    FILES.get_or_init(|| {
        BUNDLED_AGENTS
            .iter()
            .filter_map(|(name, text)| {
                let path = Path::new(BUNDLED_DIR).join("agents").join(name);
                ProfileFile::parse(&path, text).ok()
            })
            .collect()
    })
}

/// The built-in providers and the bundled partials, loaded once.
fn validation_parts() -> (&'static Providers, &'static Partials) {
    static PARTS: OnceLock<(Providers, Partials)> = OnceLock::new();
    let (providers, partials) = PARTS.get_or_init(|| (Providers::load(None), Partials::new(None)));
    (providers, partials)
}
