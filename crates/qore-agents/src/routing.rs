//! Rosters and routing (`pipelines.toml`): which agent serves which job.
//!
//! ```toml
//! code_completion = ["rust-fim", "codestral-completion"]   # ordered: first match wins
//! chat = ["claude-chat", "openai-chat"]                      # the first is the default
//! compression = ["claude-compression"]
//! refactor = ["claude-refactor"]
//! ```
//!
//! The seed's roster names are read too: `codeCompletion`, `chatAssistant`,
//! `chatCompression`, `quickRefactor`.
//!
//! Promises: an agent matches a file when its `[match]` accepts it: an empty `[match]` is a
//! catch-all; dimensions (file patterns, path patterns, project names) AND; patterns within
//! one dimension OR; file patterns are case-insensitive globs tested against the file name
//! and against the full path; path patterns are case-insensitive globs on the full path;
//! project names compare exactly. A roster naming an unknown or abstract agent, or a
//! pattern that is not a glob, is an error naming `pipelines.toml`. How a code_completion
//! agent is asked (fill in the middle or chat) is what its `[body]` reads
//! ([`crate::body_reads`]); one whose body reads neither is refused when the config loads.

use std::path::{Path, PathBuf};

use globset::{Glob, GlobBuilder, GlobMatcher};
use serde::Deserialize;

use crate::catalog::{Agent, Catalog};
use crate::error::AgentError;
use crate::profile::MatchRules;

/// The rosters of `pipelines.toml`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pipelines {
    /// Agents for fill-in-the-middle completion, first match first.
    #[serde(default, alias = "codeCompletion")]
    pub code_completion: Vec<String>,
    /// Agents for chat.
    #[serde(default, alias = "chatAssistant")]
    pub chat: Vec<String>,
    /// Agents for compressing a session.
    #[serde(default, alias = "chatCompression")]
    pub compression: Vec<String>,
    /// Agents for quick refactors.
    #[serde(default, alias = "quickRefactor")]
    pub refactor: Vec<String>,
}

/// What a file-bound request is about.
#[derive(Debug, Clone, Default)]
pub struct Target<'a> {
    /// The file the request is about.
    pub file: Option<&'a Path>,
    /// The project's directory name.
    pub project_name: Option<&'a str>,
}

impl Pipelines {
    /// Read `path`; a missing file is empty rosters.
    pub fn read(path: &Path) -> Result<Pipelines, AgentError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Pipelines::default())
            }
            Err(err) => {
                return Err(AgentError::Io {
                    path: path.to_owned(),
                    message: err.to_string(),
                })
            }
        };
        toml::from_str(&text).map_err(|err| AgentError::toml(path, &text, &err))
    }

    /// Every roster entry names a concrete agent whose patterns compile.
    pub fn check(&self, catalog: &Catalog, path: &Path) -> Vec<AgentError> {
        let mut errors = Vec::new();
        for (roster, names) in self.rosters() {
            for name in names {
                let message = match catalog.get(name) {
                    None => format!("{roster}: unknown agent {name:?}"),
                    Some(agent) if agent.is_abstract => format!("{roster}: {name:?} is abstract"),
                    Some(agent) => match Matcher::new(&agent.matcher) {
                        Ok(_) => continue,
                        Err(err) => format!("{roster}: {name:?}: {err}"),
                    },
                };
                errors.push(AgentError::Profile {
                    file: PathBuf::from(path),
                    line: None,
                    message,
                });
            }
        }
        errors
    }

    fn rosters(&self) -> [(&'static str, &Vec<String>); 4] {
        [
            ("code_completion", &self.code_completion),
            ("chat", &self.chat),
            ("compression", &self.compression),
            ("refactor", &self.refactor),
        ]
    }
}

/// The first agent of `roster` whose `[match]` accepts `target`.
pub fn pick<'c>(catalog: &'c Catalog, roster: &[String], target: &Target<'_>) -> Option<&'c Agent> {
    roster
        .iter()
        .filter_map(|name| catalog.get(name))
        .find(|agent| Matcher::new(&agent.matcher).is_ok_and(|m| m.accepts(target)))
}

/// A compiled `[match]`.
pub struct Matcher {
    files: Vec<GlobMatcher>,
    paths: Vec<GlobMatcher>,
    projects: Vec<String>,
}

fn glob(pattern: &str) -> Result<GlobMatcher, String> {
    let built: Result<Glob, _> = GlobBuilder::new(pattern)
        .case_insensitive(true)
        .literal_separator(false)
        .build();
    built
        .map(|g| g.compile_matcher())
        .map_err(|err| format!("bad pattern {pattern:?}: {err}"))
}

impl Matcher {
    /// A matcher of `rules`, or why a glob pattern is invalid.
    pub fn new(rules: &MatchRules) -> Result<Matcher, String> {
        Ok(Matcher {
            files: rules
                .file_patterns
                .iter()
                .map(|p| glob(p))
                .collect::<Result<_, _>>()?,
            paths: rules
                .path_patterns
                .iter()
                .map(|p| glob(p))
                .collect::<Result<_, _>>()?,
            projects: rules.project_names.clone(),
        })
    }

    /// Whether the rules accept `target` (see the module doc).
    pub fn accepts(&self, target: &Target<'_>) -> bool {
        let file_ok = self.files.is_empty()
            || target.file.is_some_and(|f| {
                let name = f.file_name().map(Path::new);
                self.files
                    .iter()
                    .any(|g| g.is_match(f) || name.is_some_and(|n| g.is_match(n)))
            });
        let path_ok = self.paths.is_empty()
            || target
                .file
                .is_some_and(|f| self.paths.iter().any(|g| g.is_match(f)));
        let project_ok = self.projects.is_empty()
            || target
                .project_name
                .is_some_and(|p| self.projects.iter().any(|n| n == p));
        file_ok && path_ok && project_ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(files: &[&str], paths: &[&str], projects: &[&str]) -> Matcher {
        let own = |v: &[&str]| v.iter().map(|s| s.to_string()).collect();
        Matcher::new(&MatchRules {
            file_patterns: own(files),
            path_patterns: own(paths),
            project_names: own(projects),
        })
        .unwrap()
    }

    fn target<'a>(file: &'a str, project: Option<&'a str>) -> Target<'a> {
        Target {
            file: Some(Path::new(file)),
            project_name: project,
        }
    }

    #[test]
    fn the_seed_roster_names_are_read_as_qore_s() {
        let seed = "codeCompletion = [\"a\"]\nchatAssistant = [\"b\"]\nchatCompression = [\"c\"]\nquickRefactor = [\"d\"]\n";
        let ours = "code_completion = [\"a\"]\nchat = [\"b\"]\ncompression = [\"c\"]\nrefactor = [\"d\"]\n";
        let read = |text: &str| toml::from_str::<Pipelines>(text).unwrap();
        assert_eq!(read(seed), read(ours));
        assert_eq!(read(seed).chat, ["b"]);
    }

    #[test]
    fn empty_match_is_a_catch_all() {
        let m = rules(&[], &[], &[]);
        assert!(m.accepts(&target("/x/y.rs", None)));
        assert!(m.accepts(&Target::default()));
    }

    #[test]
    fn file_patterns_are_case_insensitive_on_the_name_or_the_path_and_or_within() {
        let m = rules(&["*.RS", "*.toml"], &[], &[]);
        assert!(m.accepts(&target("/src/Main.rs", None)));
        assert!(m.accepts(&target("/Cargo.TOML", None)));
        assert!(!m.accepts(&target("/src/main.py", None)));
        assert!(
            !m.accepts(&Target::default()),
            "no file: a file rule cannot match"
        );
        let m = rules(&["**/tests/*.py"], &[], &[]);
        assert!(m.accepts(&target("/p/tests/t.py", None)));
    }

    #[test]
    fn dimensions_and_and_projects_are_exact() {
        let m = rules(&["*.rs"], &["/work/**"], &["qore"]);
        assert!(m.accepts(&target("/work/src/a.rs", Some("qore"))));
        assert!(!m.accepts(&target("/work/src/a.rs", Some("Qore"))));
        assert!(!m.accepts(&target("/home/src/a.rs", Some("qore"))));
        assert!(!m.accepts(&target("/work/src/a.py", Some("qore"))));
        assert!(Matcher::new(&MatchRules {
            file_patterns: vec!["a[".into()],
            ..MatchRules::default()
        })
        .is_err());
    }
}
