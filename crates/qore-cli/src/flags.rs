//! Flags that need more than clap: the value parsers of `--protocol` and the timeouts, and
//! how answers are shown (`--plain`). (The run flags are written into an agent's `[body]` by
//! `qore_agents::request_overrides`.)
//!
//! Promises: an unknown protocol or a timeout that is not a positive number of seconds is a
//! usage error naming what is accepted.

use std::time::Duration;

use qore_client::protocols;

/// How `run` and `chat` show the answer.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct ShowArgs {
    /// Print the answer exactly as the model wrote it, also on a terminal: no Markdown
    /// rendering, no colours (as with NO_COLOR set, TERM=dumb, or stdout not a terminal).
    #[arg(long)]
    pub plain: bool,
}

/// `--protocol`: a name [`protocols::by_name`] knows.
pub fn protocol_name(name: &str) -> Result<String, String> {
    match protocols::by_name(name) {
        Some(_) => Ok(name.to_owned()),
        None => Err(format!(
            "unknown protocol (valid: {})",
            protocols::NAMES.join(", ")
        )),
    }
}

/// `--idle-timeout`, `--connect-timeout`: a positive number of seconds.
pub fn seconds(text: &str) -> Result<Duration, String> {
    let invalid = || format!("{text:?} is not a positive number of seconds");
    let secs: f64 = text.trim().parse().map_err(|_| invalid())?;
    if !(secs.is_finite() && secs > 0.0) {
        return Err(invalid());
    }
    Duration::try_from_secs_f64(secs).map_err(|_| invalid())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_of_the_flags() {
        assert_eq!(seconds("1.5"), Ok(Duration::from_millis(1500)));
        assert_eq!(seconds(" 30 "), Ok(Duration::from_secs(30)));
        for bad in ["0", "-1", "abc", "inf", "NaN", ""] {
            assert!(seconds(bad).is_err(), "{bad}");
        }
        assert_eq!(protocol_name("anthropic").as_deref(), Ok("anthropic"));
        let refused = protocol_name("antropic").unwrap_err();
        assert!(refused.contains("openai-chat, "), "{refused}");
    }
}
