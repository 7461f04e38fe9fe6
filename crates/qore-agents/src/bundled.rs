//! The profiles compiled into the binary: every file of `bundled/agents/` (listed by
//! `build.rs`), as (file name, text).

include!(concat!(env!("OUT_DIR"), "/bundled_agents.rs"));
