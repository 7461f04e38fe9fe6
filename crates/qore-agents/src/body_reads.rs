//! What a profile's `[body]` reads of the request context, found once when the profile
//! loads (after `extends` merged it, through the partials it includes), and what follows from
//! it: how a completion is asked of the agent, and whether it can chat. The seed: "FIM versus
//! instruct is purely agent configuration (the body), not feature code".
//!
//! Rules:
//! - a body that reads `ctx.prefix` or `ctx.suffix` fills in the middle: a completion sends it
//!   the text around the cursor ([`CompletionStyle::Fill`]);
//! - any other body is asked by chat ([`CompletionStyle::Chat`]: the `<cursor>` prompt as a
//!   user message, which it reads as `ctx.history`); a body that reads the history chats, and
//!   one that reads the prefix or suffix but not the history does not;
//! - a profile without `[body]` sends its protocol's own chat request, which carries the
//!   history: it chats;
//! - native fragments ([`crate::native_fragments`]) write what the bundled partials'
//!   templates say, so a body reads what its templates and partials read, however written;
//! - "reads" is minijinja's static analysis (`undeclared_variables`, nested): a name as an
//!   attribute path (`ctx.prefix`, `{% for msg in ctx.history %}`), in any branch; a literal
//!   `{% include %}` is followed (the bundled partials, then the user's `partials/`). What
//!   cannot be seen through makes the body *opaque* (it may read anything): `ctx` handed on
//!   whole (`tojson(ctx)`, `ctx[key]`; `ctx["prefix"]` and `existsIn(ctx, "prefix")` read
//!   `ctx.prefix`), an include by a computed
//!   name or of a partial that cannot be loaded, `import`/`from`/`extends`, a template that
//!   does not parse (the body's compilation reports that one);
//! - the `completion` tag decides none of this: it chooses the defaults of the
//!   code_completion roster (`qore config init` writes the tagged agents there,
//!   [`crate::config::tagged_completers`]). A concrete profile a completion would use — tagged
//!   `completion`, or named in `pipelines.toml`'s `code_completion` — whose body reads neither
//!   the prefix/suffix nor the history, and is not opaque, is refused at load with its file
//!   and the line of its `[body]` ([`crate::agent::completion_refusal`]); abstract profiles never are
//!   (their children fill in what they leave out).

use std::collections::HashMap;
use std::sync::OnceLock;

use minijinja::Environment;
use regex::Regex;

use crate::partials::Partials;
use crate::template_text::{from_inja, includes, regex};

/// Includes followed this deep at most (a deeper chain is opaque, as is a cycle).
const MAX_INCLUDE_DEPTH: usize = 8;

/// What a body reads (see the module doc).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BodyReads {
    /// `ctx.prefix` or `ctx.suffix`.
    pub fill: bool,
    /// `ctx.history`.
    pub history: bool,
    /// Something that may read anything.
    pub opaque: bool,
}

/// How a completion is asked of an agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompletionStyle {
    /// A fill-in-the-middle request: the prefix and suffix.
    Fill,
    /// One chat message with the code and a `<cursor>` marker.
    Chat,
}

impl BodyReads {
    /// What the protocol's own chat request reads (a profile without `[body]`).
    pub const PROTOCOL_CHAT: BodyReads = BodyReads {
        fill: false,
        history: true,
        opaque: false,
    };

    /// How a completion is asked; `None`: the body reads neither the prefix/suffix nor the
    /// history, so no completion can be asked of it.
    pub fn completion_style(self) -> Option<CompletionStyle> {
        match self {
            BodyReads { fill: true, .. } => Some(CompletionStyle::Fill),
            BodyReads {
                history, opaque, ..
            } if history || opaque => Some(CompletionStyle::Chat),
            _ => None,
        }
    }

    /// Whether a completion is asked of it as fill-in-the-middle.
    pub fn fills(self) -> bool {
        self.completion_style() == Some(CompletionStyle::Fill)
    }

    /// Whether it can be asked by chat messages: it reads the history, or does not read the
    /// prefix/suffix (a body of literals sends what it is).
    pub fn chats(self) -> bool {
        self.history || self.opaque || !self.fill
    }

    fn add(&mut self, other: BodyReads) {
        self.fill |= other.fill;
        self.history |= other.history;
        self.opaque |= other.opaque;
    }

    /// What `body` reads, its includes found through `partials` (see the module doc).
    pub fn of(body: Option<&toml::Table>, partials: &Partials) -> BodyReads {
        Reader::new(partials).body(body)
    }
}

/// Reads bodies, each body string and each partial read once (profiles that extend one
/// parent share its strings).
pub(crate) struct Reader<'p> {
    partials: &'p Partials,
    /// Partials by name.
    seen: HashMap<String, BodyReads>,
    /// Body strings by their text.
    strings: HashMap<String, BodyReads>,
}

impl<'p> Reader<'p> {
    pub(crate) fn new(partials: &'p Partials) -> Self {
        Reader {
            partials,
            seen: HashMap::new(),
            strings: HashMap::new(),
        }
    }

    /// What `body` reads ([`BodyReads::PROTOCOL_CHAT`] without one).
    pub(crate) fn body(&mut self, body: Option<&toml::Table>) -> BodyReads {
        let Some(table) = body else {
            return BodyReads::PROTOCOL_CHAT;
        };
        let mut templates = Vec::new();
        table
            .values()
            .for_each(|v| collect_templates(v, &mut templates));
        let mut reads = BodyReads::default();
        for source in templates {
            let found = match self.strings.get(source) {
                Some(found) => *found,
                None => {
                    let found = self.template(&from_inja(source), 0);
                    self.strings.insert(source.to_owned(), found);
                    found
                }
            };
            reads.add(found);
        }
        reads
    }

    /// What one template reads, with what it includes.
    fn template(&mut self, source: &str, depth: usize) -> BodyReads {
        let mut reads = self.own(source);
        for name in includes(source) {
            reads.add(self.partial(name, depth + 1));
        }
        reads
    }

    fn partial(&mut self, name: &str, depth: usize) -> BodyReads {
        if depth > MAX_INCLUDE_DEPTH {
            return opaque();
        }
        if let Some(reads) = self.seen.get(name) {
            return *reads;
        }
        let reads = match self.partials.load(name) {
            Ok(text) => self.template(&from_inja(&text), depth),
            Err(_) => opaque(),
        };
        self.seen.insert(name.to_owned(), reads);
        reads
    }

    /// What `source` itself reads (its includes aside).
    fn own(&self, source: &str) -> BodyReads {
        static UNSEEN: OnceLock<Regex> = OnceLock::new();
        let unseen = regex(
            &UNSEEN,
            r#"\{%[-+]?\s*(import|from|extends)\b|\{%[-+]?\s*include\s+[^'"\s]"#,
        );
        // `existsIn(ctx, "key")` and `ctx["key"]` read one key: spelled `ctx.key` for the
        // analysis, so only `ctx` handed on whole is opaque.
        static ONE_KEY: OnceLock<Regex> = OnceLock::new();
        let one_key = regex(
            &ONE_KEY,
            r#"existsIn\(\s*ctx\s*,\s*['"](\w+)['"]\s*\)|\bctx\s*\[\s*['"](\w+)['"]\s*\]"#,
        );
        let source = one_key.replace_all(source, |c: &regex::Captures<'_>| {
            let key = c.get(1).or_else(|| c.get(2)).map_or("", |m| m.as_str());
            format!("ctx.{key}")
        });
        // Parsing needs no filters or functions: an empty environment.
        let env = Environment::empty();
        let Ok(template) = env.template_from_str(&source) else {
            return opaque();
        };
        let names = template.undeclared_variables(true);
        let reads_path = |path: &str| {
            (names.iter())
                .any(|n| n == path || n.strip_prefix(path).is_some_and(|r| r.starts_with('.')))
        };
        BodyReads {
            fill: reads_path("ctx.prefix") || reads_path("ctx.suffix"),
            history: reads_path("ctx.history"),
            opaque: names.contains("ctx") || unseen.is_match(&source),
        }
    }
}

fn opaque() -> BodyReads {
    BodyReads {
        opaque: true,
        ..BodyReads::default()
    }
}

/// Every template string of a `[body]` value (as [`crate::body`] decides what is one).
fn collect_templates<'v>(value: &'v toml::Value, out: &mut Vec<&'v str>) {
    match value {
        toml::Value::String(s) if s.contains("{{") || s.contains("{%") => out.push(s),
        toml::Value::Table(table) => table.values().for_each(|v| collect_templates(v, out)),
        toml::Value::Array(items) => items.iter().for_each(|v| collect_templates(v, out)),
        _ => {}
    }
}

#[cfg(test)]
#[path = "body_reads_tests.rs"]
mod tests;
