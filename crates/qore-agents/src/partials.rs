//! Where `{% include %}` finds partials, and what it refuses.
//!
//! Promises:
//! - only relative names of plain components resolve: a name with a `..` or `.` component,
//!   a leading `/` or `\`, any backslash, a scheme (`file:`), a drive letter (`C:`) or an
//!   empty component is refused with `AgentError::Include`-style text naming it;
//! - a leading `partials/` is optional (`"partials/x.jinja"` and `"x.jinja"` are the same
//!   partial), so profiles written for the seed's layout carry over;
//! - roots are searched in order: the partials bundled into the binary, then the user's
//!   `partials/` directory, then the seed's names of bundled partials ([`SEED_NAMES`]:
//!   `google_contents.jinja` is qore's `gemini_contents.jinja`); a user file that resolves
//!   (through symlinks) outside its root is refused;
//! - a partial that is found nowhere is an error at load time (validation renders every
//!   profile), never an empty string.

use std::path::{Path, PathBuf};

/// The partials compiled into the binary: (name, text).
pub const BUNDLED: &[(&str, &str)] = &[
    (
        "openai_messages.jinja",
        include_str!("../bundled/partials/openai_messages.jinja"),
    ),
    (
        "anthropic_messages.jinja",
        include_str!("../bundled/partials/anthropic_messages.jinja"),
    ),
    (
        "anthropic_cache.jinja",
        include_str!("../bundled/partials/anthropic_cache.jinja"),
    ),
    (
        "anthropic_tools.jinja",
        include_str!("../bundled/partials/anthropic_tools.jinja"),
    ),
    (
        "anthropic_system.jinja",
        include_str!("../bundled/partials/anthropic_system.jinja"),
    ),
    (
        "gemini_contents.jinja",
        include_str!("../bundled/partials/gemini_contents.jinja"),
    ),
    (
        "gemini_system.jinja",
        include_str!("../bundled/partials/gemini_system.jinja"),
    ),
    (
        "ollama_messages.jinja",
        include_str!("../bundled/partials/ollama_messages.jinja"),
    ),
    (
        "responses_input.jinja",
        include_str!("../bundled/partials/responses_input.jinja"),
    ),
];

/// The seed's partial names with a bundled equivalent: (seed name, bundled name). The
/// seed's `openai_messages.jinja` and `anthropic_messages.jinja` are bundled under their
/// own names.
pub const SEED_NAMES: &[(&str, &str)] = &[("google_contents.jinja", "gemini_contents.jinja")];

/// The include resolver: bundled partials, then an optional user directory.
#[derive(Debug, Clone, Default)]
pub struct Partials {
    user_dir: Option<PathBuf>,
}

impl Partials {
    /// Bundled partials, then `user_dir` (when given).
    pub fn new(user_dir: Option<PathBuf>) -> Self {
        Partials { user_dir }
    }

    /// The text of the partial `name`, or why it cannot be had.
    pub fn load(&self, name: &str) -> Result<String, String> {
        let name = checked_name(name)?;
        if let Some((_, text)) = BUNDLED.iter().find(|(n, _)| *n == name) {
            return Ok((*text).to_owned());
        }
        if let Some(dir) = &self.user_dir {
            if let Some(text) = read_inside(dir, name)? {
                return Ok(text);
            }
        }
        let bundled = |seed: &str| BUNDLED.iter().find(|(n, _)| *n == seed);
        let seed = SEED_NAMES.iter().find(|(seed, _)| *seed == name);
        if let Some((_, text)) = seed.and_then(|(_, ours)| bundled(ours)) {
            return Ok((*text).to_owned());
        }
        let searched = match &self.user_dir {
            Some(dir) => format!("the bundled partials and {}", dir.display()),
            None => "the bundled partials".to_owned(),
        };
        Err(format!("partial {name:?} not found in {searched}"))
    }
}

/// `name` without an optional `partials/` prefix, if it is a safe relative name.
pub fn checked_name(name: &str) -> Result<&str, String> {
    let refuse = |why: &str| Err(format!("include {name:?} refused: {why}"));
    if name.starts_with('/') || name.contains('\\') {
        return refuse("only relative names are allowed");
    }
    if let Some(colon) = name.find(':') {
        let why = if colon == 1 {
            "a drive letter"
        } else {
            "a scheme"
        };
        return refuse(&format!("{why} is not allowed"));
    }
    let name = name.strip_prefix("partials/").unwrap_or(name);
    for component in name.split('/') {
        match component {
            "" => return refuse("empty path component"),
            "." | ".." => return refuse("`.` and `..` are not allowed"),
            _ => {}
        }
    }
    Ok(name)
}

fn read_inside(dir: &Path, name: &str) -> Result<Option<String>, String> {
    let path = dir.join(name);
    if !path.exists() {
        return Ok(None);
    }
    let (Ok(root), Ok(real)) = (dir.canonicalize(), path.canonicalize()) else {
        return Ok(None);
    };
    if !real.starts_with(&root) {
        return Err(format!(
            "include {name:?} refused: {} resolves outside {}",
            path.display(),
            dir.display()
        ));
    }
    std::fs::read_to_string(&real)
        .map(Some)
        .map_err(|err| format!("cannot read partial {}: {err}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsafe_names_are_refused() {
        for name in [
            "../x.jinja",
            "partials/../../etc/passwd",
            "/etc/passwd",
            "a/./b",
            "a//b",
            "C:/x",
            "c:x",
            "file:///etc/passwd",
            "https://example.com/x",
            "a\\b",
        ] {
            let err = checked_name(name).expect_err(name);
            assert!(err.contains("refused"), "{name}: {err}");
        }
        assert_eq!(checked_name("partials/a/b.jinja"), Ok("a/b.jinja"));
        assert_eq!(checked_name("b.jinja"), Ok("b.jinja"));
    }

    #[test]
    fn bundled_first_then_the_user_dir_and_nothing_outside_it() {
        let base = std::env::temp_dir().join(format!("qore-partials-{}", std::process::id()));
        let dir = base.join("partials");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("mine.jinja"), "mine").unwrap();
        std::fs::write(dir.join("openai_messages.jinja"), "shadow").unwrap();
        std::fs::write(base.join("secret.jinja"), "secret").unwrap();
        let partials = Partials::new(Some(dir.clone()));
        assert_eq!(partials.load("partials/mine.jinja").unwrap(), "mine");
        assert_ne!(partials.load("openai_messages.jinja").unwrap(), "shadow");
        let gemini = partials.load("gemini_contents.jinja").unwrap();
        assert_eq!(partials.load("partials/google_contents.jinja"), Ok(gemini));
        std::fs::write(dir.join("google_contents.jinja"), "seed's own").unwrap();
        assert_eq!(
            partials.load("google_contents.jinja").unwrap(),
            "seed's own"
        );
        assert!(partials
            .load("missing.jinja")
            .unwrap_err()
            .contains("not found"));
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(base.join("secret.jinja"), dir.join("link.jinja")).unwrap();
            let err = partials.load("link.jinja").unwrap_err();
            assert!(err.contains("outside"), "{err}");
        }
        std::fs::remove_dir_all(&base).unwrap();
    }
}
