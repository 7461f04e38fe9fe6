//! The seed's spellings of provider instances, mapped to qore's: `client_api` names (the
//! seed's client table) to wire protocols, the built-in instances (with their vendors'
//! documented base URLs and the seed's display names), and `api_key_ref` (where a key is
//! stored) to a [`KeySource`].
//!
//! Promises:
//! - every `client_api` of the seed's table maps to the protocol that speaks its wire
//!   (compared case-insensitively); an unknown one is an error listing the known ones;
//! - `api_key_ref` is `env:VAR`, `file:PATH`, `keyring:NAME` or a bare keyring entry name
//!   (service `qore`); an empty reference or an empty part after the prefix is an error;
//! - [`name_key`] is the loose form names are compared in when no exact name matches:
//!   lower case, runs of spaces, `_` and `-` as one `_` (`"OpenAI Base Chat"` finds the
//!   file `openai_base_chat.toml`); [`only_loose_match`] is the one rule agents and
//!   providers follow: a loose name finds the only entry having it, none when several do.
//!
//! It knows nothing of the modules that use it ([`crate::providers`], [`crate::catalog`]).

use std::path::PathBuf;

use serde::Serialize;

/// The seed's `client_api` names and the protocol each one speaks.
pub const CLIENT_APIS: &[(&str, &str)] = &[
    ("Claude", "anthropic"),
    ("Google AI", "gemini"),
    ("llama.cpp", "llamacpp"),
    ("Mistral AI", "mistral"),
    ("Codestral", "mistral"),
    ("Ollama (Native)", "ollama"),
    ("Ollama (OpenAI-compatible)", "openai-chat"),
    ("OpenAI (Chat Completions)", "openai-chat"),
    ("OpenAI (Responses API)", "openai-responses"),
    ("OpenAI Compatible", "openai-chat"),
    ("OpenRouter", "openai-chat"),
    ("LM Studio (Chat Completions)", "openai-chat"),
    ("LM Studio (Responses API)", "openai-responses"),
];

/// The built-in instances but Ollama's and the local server's: (name, display name,
/// protocol, base URL, key variable). Display names are the seed's names for them.
pub const BUILT_IN: &[(&str, &str, &str, &str, Option<&str>)] = &[
    (
        "anthropic",
        "Claude",
        "anthropic",
        "https://api.anthropic.com",
        Some("ANTHROPIC_API_KEY"),
    ),
    (
        "openai",
        "OpenAI (Chat Completions)",
        "openai-chat",
        "https://api.openai.com/v1",
        Some("OPENAI_API_KEY"),
    ),
    (
        "openai-responses",
        "OpenAI (Responses API)",
        "openai-responses",
        "https://api.openai.com/v1",
        Some("OPENAI_API_KEY"),
    ),
    (
        "gemini",
        "Google AI",
        "gemini",
        "https://generativelanguage.googleapis.com/v1beta",
        Some("GEMINI_API_KEY"),
    ),
    (
        "mistral",
        "Mistral AI",
        "mistral",
        "https://api.mistral.ai/v1",
        Some("MISTRAL_API_KEY"),
    ),
    (
        "codestral",
        "Codestral",
        "mistral",
        "https://codestral.mistral.ai/v1",
        Some("CODESTRAL_API_KEY"),
    ),
    (
        "openrouter",
        "OpenRouter",
        "openai-chat",
        "https://openrouter.ai/api/v1",
        Some("OPENROUTER_API_KEY"),
    ),
    (
        "deepseek",
        "DeepSeek",
        "openai-chat",
        "https://api.deepseek.com",
        Some("DEEPSEEK_API_KEY"),
    ),
    (
        "llamacpp",
        "llama.cpp",
        "llamacpp",
        "http://127.0.0.1:8080/v1",
        None,
    ),
    (
        "lmstudio",
        "LM Studio (Chat Completions)",
        "openai-chat",
        "http://127.0.0.1:1234/v1",
        None,
    ),
    (
        "lmstudio-responses",
        "LM Studio (Responses API)",
        "openai-responses",
        "http://127.0.0.1:1234/v1",
        None,
    ),
];

/// The protocol of the seed's `client_api` name.
pub fn protocol_of(client_api: &str) -> Result<&'static str, String> {
    CLIENT_APIS
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(client_api.trim()))
        .map(|(_, protocol)| *protocol)
        .ok_or_else(|| {
            let known: Vec<&str> = CLIENT_APIS.iter().map(|(n, _)| *n).collect();
            format!(
                "unknown client_api {client_api:?} (known: {})",
                known.join(", ")
            )
        })
}

/// Where an instance's key comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum KeySource {
    /// No key (local servers).
    None,
    /// An environment variable holding the key (`env:NAME`).
    Env(String),
    /// A file whose first line is the key (`file:PATH`).
    File(PathBuf),
    /// An entry of the operating system's keyring (`keyring:SERVICE/USER`).
    Keyring {
        /// The keyring service.
        service: String,
        /// The keyring user.
        user: String,
    },
}

/// Where `api_key_ref` says the key is.
pub fn key_ref(reference: &str) -> Result<KeySource, String> {
    let reference = reference.trim();
    let part = |rest: &str, what: &str| match rest.trim() {
        "" => Err(format!("api_key_ref {reference:?} names no {what}")),
        rest => Ok(rest.to_owned()),
    };
    if let Some(var) = reference.strip_prefix("env:") {
        return part(var, "variable").map(KeySource::Env);
    }
    if let Some(path) = reference.strip_prefix("file:") {
        return part(path, "file").map(|p| KeySource::File(PathBuf::from(p)));
    }
    let entry = reference.strip_prefix("keyring:").unwrap_or(reference);
    part(entry, "keyring entry").map(|user| KeySource::Keyring {
        service: "qore".to_owned(),
        user,
    })
}

/// The loose form of a name (see the module doc).
pub fn name_key(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.trim().chars() {
        if matches!(c, ' ' | '_' | '-') {
            if !out.ends_with('_') {
                out.push('_');
            }
        } else {
            out.extend(c.to_lowercase());
        }
    }
    out
}

/// The only one of `entries` that `named(entry, loose)` says is loosely called `name`
/// (`loose` is `name`'s [`name_key`]); `None` when none or several are.
pub fn only_loose_match<T>(
    entries: impl IntoIterator<Item = T>,
    name: &str,
    named: impl Fn(&T, &str) -> bool,
) -> Option<T> {
    let loose = name_key(name);
    let mut found = entries.into_iter().filter(|e| named(e, &loose));
    match (found.next(), found.next()) {
        (Some(one), None) => Some(one),
        _ => None,
    }
}

/// The 1-based line of top-level `key` in the TOML `text`, when it is there.
pub fn key_line(text: &str, key: &str) -> Option<usize> {
    let doc = toml_edit::ImDocument::parse(text).ok()?;
    let span = doc.as_table().key(key)?.span()?;
    Some(crate::error::line_and_column(text, span.start).0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_apis_map_to_protocols_that_exist() {
        for (name, protocol) in CLIENT_APIS {
            assert_eq!(protocol_of(name), Ok(*protocol), "{name}");
            assert!(
                qore_client::protocols::by_name(protocol).is_some(),
                "{name}"
            );
        }
        assert_eq!(protocol_of("claude"), Ok("anthropic"));
        let err = protocol_of("Claud").unwrap_err();
        assert!(
            err.contains("unknown client_api") && err.contains("Claude"),
            "{err}"
        );
    }

    #[test]
    fn key_references() {
        let keyring = |user: &str| {
            Ok(KeySource::Keyring {
                service: "qore".into(),
                user: user.into(),
            })
        };
        let cases = [
            (
                "env:ANTHROPIC_API_KEY",
                Ok(KeySource::Env("ANTHROPIC_API_KEY".into())),
            ),
            (
                "file:/run/keys/k",
                Ok(KeySource::File("/run/keys/k".into())),
            ),
            ("keyring:claude", keyring("claude")),
            ("Claude API key", keyring("Claude API key")),
        ];
        for (reference, want) in cases {
            assert_eq!(key_ref(reference), want, "{reference}");
        }
        for bad in ["", "env:", "file: ", "keyring:"] {
            assert!(key_ref(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn loose_names() {
        assert_eq!(name_key("OpenAI Base Chat"), "openai_base_chat");
        assert_eq!(name_key("openai_base-chat"), "openai_base_chat");
        assert_eq!(name_key("  Claude  Sonnet "), "claude_sonnet");
    }
}
