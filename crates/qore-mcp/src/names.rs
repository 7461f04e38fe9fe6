//! Tool names as models see them: `<server>__<tool>`, valid for every provider.
//!
//! Promises: every name matches `^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$` (the strictest providers'
//! rules: OpenAI's and Anthropic's characters and length, and Gemini's start with a letter
//! or `_`): other characters become `_`, a name starting otherwise gets a `_` in front; a name longer than 64 keeps its start and ends in `_` and 8
//! hex digits of a hash of the full name (FNV-1a, stable across runs and platforms); a name
//! already given out gets `_2`, `_3`, … (shortened to fit), so the same servers and tools in
//! the same order always get the same names.

use std::collections::HashSet;

/// The longest name any provider accepts.
pub const MAX_NAME: usize = 64;

/// Names given out so far.
#[derive(Debug, Default)]
pub struct NameTable {
    taken: HashSet<String>,
}

impl NameTable {
    /// A table that must also avoid `taken` (e.g. the built-in tools' names).
    pub fn avoiding(taken: impl IntoIterator<Item = String>) -> Self {
        NameTable {
            taken: taken.into_iter().collect(),
        }
    }

    /// The model-facing name of `tool` on `server`, unique in this table.
    pub fn claim(&mut self, server: &str, tool: &str) -> String {
        let base = valid(&format!("{server}__{tool}"));
        let mut name = base.clone();
        let mut n = 2;
        while self.taken.contains(&name) {
            let suffix = format!("_{n}");
            let keep = MAX_NAME.saturating_sub(suffix.len()).min(base.len());
            name = format!("{}{suffix}", &base[..keep]);
            n += 1;
        }
        self.taken.insert(name.clone());
        name
    }
}

/// `raw` made valid (see the module doc).
pub fn valid(raw: &str) -> String {
    let mut name: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if !name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        name.insert(0, '_');
    }
    if name.len() > MAX_NAME {
        let hash = format!("_{:08x}", fnv1a(raw.as_bytes()) as u32);
        name.truncate(MAX_NAME - hash.len());
        name.push_str(&hash);
    }
    name
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf29ce484222325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x100000001b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(name: &str) -> bool {
        (1..=MAX_NAME).contains(&name.len())
            && name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    }

    #[test]
    fn names_are_valid_unique_and_stable() {
        let long = "t".repeat(80);
        let cases: &[(&str, &str, &str)] = &[
            ("fs", "read_file", "fs__read_file"),
            ("my server", "get.weather", "my_server__get_weather"),
            ("x", "café/ünï", "x__caf___n_"),
            ("fs", "read_file", "fs__read_file_2"),
            ("fs", "read.file", "fs__read_file_3"),
            ("", "", "__"),
            ("1password", "get", "_1password__get"),
            ("-x", "y", "_-x__y"),
        ];
        let mut table = NameTable::default();
        for (server, tool, want) in cases {
            let got = table.claim(server, tool);
            assert_eq!(&got, want, "{server}/{tool}");
            assert!(ok(&got), "{got}");
        }
        // Long names: cut with a stable hash; collisions of cut names still unique.
        let a = table.claim("srv", &long);
        let b = table.claim("srv", &long);
        assert!(ok(&a) && ok(&b) && a != b, "{a} {b}");
        assert_eq!(a, valid(&format!("srv__{long}")));
        assert_ne!(
            valid(&format!("srv__{long}")),
            valid(&format!("srv__{long}x"))
        );
        let mut builtin = NameTable::avoiding(["s__t".to_string()]);
        assert_eq!(builtin.claim("s", "t"), "s__t_2");
    }
}
