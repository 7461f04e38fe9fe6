//! The profiles and partials compiled into the binary (files under `bundled/`).

/// `bundled/agents/*.toml`: (file name, text).
pub const AGENTS: &[(&str, &str)] = &[];
