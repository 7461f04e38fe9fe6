//! Keys as the gate sees them: hashing and minting keys, finding the key a request presents,
//! and a key's model patterns (the copy of the store's keys is [`super::cache`]).
//!
//! Promises:
//! - a key's text is only ever hashed ([`hash_key`]: SHA-256, lowercase hex), never logged,
//!   stored or kept; [`new_key`] draws 40 URL-safe characters (240 bits) from the operating
//!   system's CSPRNG;
//! - a request presents its key as `Authorization: Bearer KEY` or `x-api-key: KEY`; when both
//!   are sent, the first one the store knows decides;
//! - a key's model patterns are globs (`*` matches any run of characters, `/` included; `?`,
//!   `[abc]`, `{a,b}`) over the whole name a request gives: an agent or `provider/model`; a
//!   key whose stored pattern does not parse may use no model (fail closed).

use std::collections::HashMap;
use std::sync::Arc;

use axum::http::HeaderMap;
use globset::{Glob, GlobSet, GlobSetBuilder};
use qore_store::KeyRecord;
use sha2::{Digest, Sha256};

/// The characters of a minted key: 64 of them, so each random byte maps to one evenly.
const KEY_ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// How many random characters follow `qore-`.
const KEY_LENGTH: usize = 40;

/// The lowercase hex SHA-256 of a key's text: what the store keeps.
pub fn hash_key(key: &str) -> String {
    format!("{:x}", Sha256::digest(key.as_bytes()))
}

/// A new key: `qore-` and 40 URL-safe characters from the operating system's CSPRNG.
pub fn new_key() -> std::io::Result<String> {
    let mut bytes = [0u8; KEY_LENGTH];
    getrandom::fill(&mut bytes).map_err(|e| {
        std::io::Error::other(format!("cannot read the system's random source: {e}"))
    })?;
    let tail: String = (bytes.iter())
        .map(|b| char::from(KEY_ALPHABET[usize::from(b % 64)]))
        .collect();
    Ok(format!("qore-{tail}"))
}

/// Whether `pattern` is a model pattern a key may carry; the reason when not.
pub fn check_pattern(pattern: &str) -> Result<(), String> {
    if pattern.trim().is_empty() {
        return Err("a model pattern must not be empty".into());
    }
    Glob::new(pattern.trim())
        .map(drop)
        .map_err(|e| format!("bad model pattern {pattern:?}: {}", e.kind()))
}

/// The keys a request presents, in the order they are tried.
pub(crate) fn presented(headers: &HeaderMap) -> Vec<&str> {
    let bearer = (headers.get_all(axum::http::header::AUTHORIZATION).iter())
        .filter_map(|v| v.to_str().ok())
        .filter_map(|v| {
            let (scheme, rest) = v.trim().split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| rest.trim())
        });
    let api_key = (headers.get_all("x-api-key").iter())
        .filter_map(|v| v.to_str().ok())
        .map(str::trim);
    bearer.chain(api_key).filter(|k| !k.is_empty()).collect()
}

/// Which models a key may use.
pub(crate) enum Models {
    All,
    Matching(GlobSet),
    /// A stored pattern does not parse: nothing.
    Broken,
}

/// A stored key with its patterns compiled.
pub(crate) struct KeyEntry {
    pub record: KeyRecord,
    pub models: Models,
}

impl KeyEntry {
    pub fn of(record: KeyRecord) -> KeyEntry {
        let models = if record.models.is_empty() {
            Models::All
        } else {
            let mut set = GlobSetBuilder::new();
            let mut broken = false;
            for pattern in &record.models {
                match Glob::new(pattern) {
                    Ok(glob) => {
                        set.add(glob);
                    }
                    Err(e) => {
                        tracing::warn!(
                            "key {:?}: bad model pattern {pattern:?} ({}): it may use no model",
                            record.name,
                            e.kind()
                        );
                        broken = true;
                    }
                }
            }
            match set.build() {
                Ok(set) if !broken => Models::Matching(set),
                _ => Models::Broken,
            }
        };
        KeyEntry { record, models }
    }

    pub fn permits(&self, model: &str) -> bool {
        match &self.models {
            Models::All => true,
            Models::Matching(set) => set.is_match(model),
            Models::Broken => false,
        }
    }
}

/// The keys at one moment, by hash.
#[derive(Default)]
pub(crate) struct Snapshot {
    pub by_hash: HashMap<String, Arc<KeyEntry>>,
}

impl Snapshot {
    pub fn of(keys: Vec<KeyRecord>) -> Snapshot {
        let by_hash = (keys.into_iter())
            .map(|k| (k.hash.clone(), Arc::new(KeyEntry::of(k))))
            .collect();
        Snapshot { by_hash }
    }

    /// The entry of the first presented key the store knows.
    pub fn find(&self, presented: &[&str]) -> Option<&Arc<KeyEntry>> {
        (presented.iter()).find_map(|key| self.by_hash.get(&hash_key(key)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn a_minted_key_is_qore_and_40_url_safe_characters_and_hashes_to_64_hex() {
        let key = new_key().unwrap();
        let tail = key.strip_prefix("qore-").unwrap();
        assert_eq!(tail.len(), 40);
        assert!(tail.bytes().all(|b| KEY_ALPHABET.contains(&b)), "{key}");
        assert_ne!(new_key().unwrap(), key);
        let hash = hash_key(&key);
        assert_eq!(hash.len(), 64);
        assert!(hash
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
        assert_eq!(
            hash_key("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn keys_are_read_from_either_header_in_order() {
        // (headers, the keys presented)
        type Pairs<'a> = &'a [(&'a str, &'a str)];
        let cases: &[(Pairs, &[&str])] = &[
            (&[("authorization", "Bearer k1")], &["k1"]),
            (&[("authorization", "bearer   k1 ")], &["k1"]),
            (&[("x-api-key", "k2")], &["k2"]),
            (
                &[("authorization", "Bearer k1"), ("x-api-key", "k2")],
                &["k1", "k2"],
            ),
            (&[("authorization", "Basic dXNlcjpwdw==")], &[]),
            (&[("authorization", "Bearer ")], &[]),
            (&[("x-api-key", "")], &[]),
            (&[], &[]),
        ];
        for (headers, expected) in cases {
            let mut map = HeaderMap::new();
            for (name, value) in *headers {
                map.append(*name, HeaderValue::from_static(value));
            }
            assert_eq!(presented(&map), *expected, "{headers:?}");
        }
    }

    #[test]
    fn patterns_match_whole_names() {
        let entry = |models: &[&str]| {
            KeyEntry::of(KeyRecord {
                id: "k".into(),
                name: "k".into(),
                hash: hash_key("k"),
                models: models.iter().map(|m| m.to_string()).collect(),
                rpm: None,
                tpm: None,
                budget_tokens: None,
                created_at: 0,
                revoked_at: None,
            })
        };
        // (patterns, model, permitted)
        let cases: &[(&[&str], &str, bool)] = &[
            (&[], "anything/at-all", true),
            (&["claude-*"], "claude-sonnet-4", true),
            (&["claude-*"], "anthropic/claude-sonnet-4", false),
            (&["claude-*"], "gpt-4o", false),
            (&["local/*"], "local/qwen3", true),
            (&["local/*"], "openai/gpt-4o", false),
            (&["local/*"], "local", false),
            (&["coder", "local/*"], "coder", true),
            (&["coder", "local/*"], "coder2", false),
            (&["*/claude-*"], "anthropic/claude-opus", true),
            (&["{openai,anthropic}/*"], "anthropic/x", true),
            (&["["], "[", false),
        ];
        for (patterns, model, permitted) in cases {
            assert_eq!(
                entry(patterns).permits(model),
                *permitted,
                "{patterns:?} {model}"
            );
        }
        assert!(check_pattern("local/*").is_ok());
        for bad in ["", "  ", "a[", "{a"] {
            assert!(check_pattern(bad).is_err(), "{bad:?}");
        }
    }
}
