//! Whether and where the console's page is served: `[serve] console` and `console_path`.
//!
//! Promises: the console is on by default at `/ui`; `console = false` turns the page off;
//! `console_path` moves it (a path starting with `/`, without a trailing one, of plain
//! path characters only: anything else is a settings error naming the key). Reads no other
//! module of the crate, so the settings (crate::config) and the console (crate::admin)
//! both depend on it and not on each other.

/// Where the console's page is served unless `[serve] console_path` says otherwise.
pub const DEFAULT_CONSOLE_PATH: &str = "/ui";

/// Whether and where the console is served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsoleSettings {
    pub enabled: bool,
    /// The page's path (`/ui`, or e.g. `/gateway/ui` behind a proxy's sub-path).
    pub path: String,
}

impl Default for ConsoleSettings {
    fn default() -> Self {
        ConsoleSettings {
            enabled: true,
            path: DEFAULT_CONSOLE_PATH.to_owned(),
        }
    }
}

impl ConsoleSettings {
    /// `[serve] console` and `console_path` over the defaults; a bad path is an error
    /// naming it.
    pub fn of(enabled: Option<bool>, path: Option<&str>) -> Result<ConsoleSettings, String> {
        let path = path.unwrap_or(DEFAULT_CONSOLE_PATH);
        let plain = |c: char| c.is_ascii_alphanumeric() || "/-_.~".contains(c);
        let good = path.starts_with('/')
            && path.len() > 1
            && !path.ends_with('/')
            && !path.contains("//")
            && path.chars().all(plain);
        if !good {
            return Err(format!(
                "[serve] console_path {path:?}: expected a path like \"/ui\" or \"/gateway/ui\""
            ));
        }
        Ok(ConsoleSettings {
            enabled: enabled.unwrap_or(true),
            path: path.to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_console_path_is_checked() {
        // (console_path, accepted)
        let cases = [
            (None, Some("/ui")),
            (Some("/gateway/ui"), Some("/gateway/ui")),
            (Some("ui"), None),
            (Some("/ui/"), None),
            (Some("/"), None),
            (Some("/a//b"), None),
            (Some("/a b"), None),
            (Some("/a\"<"), None),
        ];
        for (path, accepted) in cases {
            let got = ConsoleSettings::of(None, path).ok().map(|c| c.path);
            assert_eq!(got.as_deref(), accepted, "{path:?}");
        }
    }
}
