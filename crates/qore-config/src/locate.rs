//! Where things are in the text: lines of byte offsets, the start of a top-level section
//! (by `toml::Spanned`), and a second pass over the text that finds a fault's span.
//!
//! Promises: these run only when an error is to be reported; each gives `None` rather than
//! a wrong place.

use std::collections::BTreeMap;
use std::marker::PhantomData;

use serde::de::{DeserializeOwned, DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use toml::Spanned;

/// The 1-based line of byte `offset`.
pub(crate) fn line_of(text: &str, offset: usize) -> Option<usize> {
    text.get(..offset)
        .map(|before| before.matches('\n').count() + 1)
}

/// A parser message on one line.
pub(crate) fn one_line(message: &str) -> String {
    let lines: Vec<&str> = message
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    lines.join("; ")
}

/// The error deserializing section `key` as a `T` straight from the text, which carries
/// the span of the value at fault (the parsed `toml::Value` has no spans).
pub(crate) fn fault<T: DeserializeOwned>(text: &str, key: &str) -> Option<toml::de::Error> {
    select::<T>(text, key).err()
}

/// The byte where section `key` starts: its own span, or, for a table only named by the
/// headers of its children (`[mcp_servers.x]`, `[[refactor.actions]]`), the first child's.
pub(crate) fn start(text: &str, key: &str) -> Option<usize> {
    if let Ok(Some(spanned)) = select::<Spanned<IgnoredAny>>(text, key) {
        return Some(spanned.span().start);
    }
    let children = select::<BTreeMap<String, Spanned<IgnoredAny>>>(text, key).ok()??;
    children.values().map(|child| child.span().start).min()
}

/// Top-level `key` of the document `text` as a `T`, the other keys skipped.
fn select<T: DeserializeOwned>(text: &str, key: &str) -> Result<Option<T>, toml::de::Error> {
    let seed = Select::<T> {
        key,
        found: PhantomData,
    };
    seed.deserialize(toml::Deserializer::new(text))
}

struct Select<'k, T> {
    key: &'k str,
    found: PhantomData<T>,
}

impl<'de, T: DeserializeOwned> DeserializeSeed<'de> for Select<'_, T> {
    type Value = Option<T>;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Option<T>, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, T: DeserializeOwned> Visitor<'de> for Select<'_, T> {
    type Value = Option<T>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a TOML document")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<T>, A::Error> {
        let mut found = None;
        while let Some(key) = map.next_key::<String>()? {
            if key == self.key {
                found = Some(map.next_value::<T>()?);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(found)
    }
}
