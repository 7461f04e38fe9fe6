//! System prompt building blocks: a profile's `system_prompt` is a template too.
//!
//! Promises:
//! - `${PROJECT_DIR}`, `${CONFIG_DIR}` and `${HOME}` are replaced first (by the empty string
//!   when unknown);
//! - then, if it holds `{{` or `{%`, it renders with minijinja, with `read_file(path)`,
//!   `file_exists(path)`, `read_dir(path)` (sorted entry names; directories end in `/`),
//!   `role(id)` (alias `agent_role`: `roles/<id>.md` of the config dir, else the seed's
//!   `agent_roles/<id>.json` there (its `systemPrompt`), else the bundled one, else an
//!   error naming the id and where it was looked for), and the variables `project_dir`, `config_dir` and `agents_md` (the
//!   project's `AGENTS.md`, absent when there is none);
//! - file functions are sandboxed: a relative path is taken in the project dir; any path
//!   must resolve (symlinks followed) inside the project dir, the config dir, or be a
//!   bundled resource (`bundled:roles/developer.md`); anything else is an error naming the
//!   path, as is a file over 256 KiB;
//! - `file_exists` never errors: outside the sandbox is "no".

use std::path::{Path, PathBuf};

use minijinja::{Environment, Error as JinjaError, ErrorKind};

/// Bundled role texts: (id, text).
pub const BUNDLED_ROLES: &[(&str, &str)] = &[
    ("developer", include_str!("../bundled/roles/developer.md")),
    ("compressor", include_str!("../bundled/roles/compressor.md")),
    ("refactorer", include_str!("../bundled/roles/refactorer.md")),
];

const MAX_FILE: u64 = 256 * 1024;

/// Where the building blocks look.
#[derive(Debug, Clone, Default)]
pub struct PromptEnv {
    /// The project directory (`AGENTS.md` and the project's own prompt files).
    pub project_dir: Option<PathBuf>,
    /// The config directory (the user's role files).
    pub config_dir: Option<PathBuf>,
    /// The home directory.
    pub home: Option<PathBuf>,
}

impl PromptEnv {
    /// Render `template` (see the module doc).
    pub fn render(&self, template: &str) -> Result<String, String> {
        let show = |p: &Option<PathBuf>| {
            p.as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_default()
        };
        let text = template
            .replace("${PROJECT_DIR}", &show(&self.project_dir))
            .replace("${CONFIG_DIR}", &show(&self.config_dir))
            .replace("${HOME}", &show(&self.home));
        if !text.contains("{{") && !text.contains("{%") {
            return Ok(text);
        }
        let mut env = Environment::new();
        env.set_undefined_behavior(minijinja::UndefinedBehavior::SemiStrict);
        let this = self.clone();
        env.add_function("read_file", move |path: &str| {
            this.read_file(path).map_err(invalid)
        });
        let this = self.clone();
        env.add_function("file_exists", move |path: &str| {
            this.resolve(path).is_ok_and(|p| p.is_file())
        });
        let this = self.clone();
        env.add_function("read_dir", move |path: &str| {
            this.read_dir(path).map_err(invalid)
        });
        let this = self.clone();
        env.add_function("role", move |id: &str| this.role(id).map_err(invalid));
        let this = self.clone();
        env.add_function("agent_role", move |id: &str| this.role(id).map_err(invalid));
        let agents_md = (self.project_dir.as_ref())
            .map(|d| d.join("AGENTS.md"))
            .filter(|p| p.is_file())
            .and_then(|p| self.read_file(&p.to_string_lossy()).ok());
        let ctx = minijinja::context! {
            project_dir => show(&self.project_dir),
            config_dir => show(&self.config_dir),
            agents_md => agents_md,
        };
        env.render_str(&text, ctx).map_err(|err| {
            let mut message = err.to_string();
            if let Some(detail) = std::error::Error::source(&err) {
                message.push_str(&format!(": {detail}"));
            }
            message
        })
    }

    fn roots(&self) -> Vec<PathBuf> {
        [&self.project_dir, &self.config_dir]
            .into_iter()
            .flatten()
            .filter_map(|d| d.canonicalize().ok())
            .collect()
    }

    /// The real path of `path` if it is inside a root.
    fn resolve(&self, path: &str) -> Result<PathBuf, String> {
        let given = Path::new(path);
        let joined = match (&self.project_dir, given.is_absolute()) {
            (_, true) => given.to_path_buf(),
            (Some(project), false) => project.join(given),
            (None, false) => return Err(format!("{path}: no project directory to resolve it in")),
        };
        let real = joined
            .canonicalize()
            .map_err(|err| format!("{}: {err}", joined.display()))?;
        if self.roots().iter().any(|root| real.starts_with(root)) {
            Ok(real)
        } else {
            Err(format!(
                "{path}: outside the project and config directories (refused)"
            ))
        }
    }

    fn read_file(&self, path: &str) -> Result<String, String> {
        if let Some(name) = path.strip_prefix("bundled:roles/") {
            let id = name.strip_suffix(".md").unwrap_or(name);
            return bundled_role(id).ok_or_else(|| format!("{path}: no such bundled file"));
        }
        let real = self.resolve(path)?;
        let size = real
            .metadata()
            .map_err(|err| format!("{path}: {err}"))?
            .len();
        if size > MAX_FILE {
            return Err(format!("{path}: {size} bytes is over the 256 KiB limit"));
        }
        std::fs::read_to_string(&real).map_err(|err| format!("{path}: {err}"))
    }

    fn read_dir(&self, path: &str) -> Result<Vec<String>, String> {
        let real = self.resolve(path)?;
        let mut names: Vec<String> = std::fs::read_dir(&real)
            .map_err(|err| format!("{path}: {err}"))?
            .flatten()
            .map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                match e.file_type().is_ok_and(|t| t.is_dir()) {
                    true => format!("{name}/"),
                    false => name,
                }
            })
            .collect();
        names.sort();
        Ok(names)
    }

    fn role(&self, id: &str) -> Result<String, String> {
        if id.is_empty()
            || !id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(format!("role {id:?}: ids are letters, digits, - and _"));
        }
        if let Some(dir) = &self.config_dir {
            let path = dir.join("roles").join(format!("{id}.md"));
            if path.is_file() {
                return self
                    .read_file(&path.to_string_lossy())
                    .map(|t| t.trim_end().to_owned());
            }
            let path = dir.join("agent_roles").join(format!("{id}.json"));
            if path.is_file() {
                let text = self.read_file(&path.to_string_lossy())?;
                let role: SeedRole = serde_json::from_str(&text)
                    .map_err(|err| format!("{}: {err}", path.display()))?;
                return Ok(role.system_prompt.trim_end().to_owned());
            }
        }
        let looked = match &self.config_dir {
            Some(dir) => format!(
                "{0}/roles/{id}.md, {0}/agent_roles/{id}.json or ",
                dir.display()
            ),
            None => String::new(),
        };
        bundled_role(id)
            .map(|t| t.trim_end().to_owned())
            .ok_or_else(|| format!("unknown role {id:?}: not in {looked}the bundled roles"))
    }
}

/// A role file of the seed's `agent_roles/`.
#[derive(serde::Deserialize)]
struct SeedRole {
    #[serde(rename = "systemPrompt")]
    system_prompt: String,
}

fn bundled_role(id: &str) -> Option<String> {
    BUNDLED_ROLES
        .iter()
        .find(|(n, _)| *n == id)
        .map(|(_, t)| (*t).to_owned())
}

fn invalid(message: String) -> JinjaError {
    JinjaError::new(ErrorKind::InvalidOperation, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dirs() -> (PathBuf, PromptEnv) {
        let base = std::env::temp_dir().join(format!(
            "qore-prompt-{}-{}",
            std::process::id(),
            fastrand_like()
        ));
        let project = base.join("project");
        let config = base.join("config");
        std::fs::create_dir_all(project.join("src")).unwrap();
        std::fs::create_dir_all(config.join("roles")).unwrap();
        std::fs::write(project.join("AGENTS.md"), "Use tabs.").unwrap();
        std::fs::write(project.join("notes.txt"), "note").unwrap();
        std::fs::write(config.join("roles/reviewer.md"), "Review hard.\n").unwrap();
        std::fs::create_dir_all(config.join("agent_roles")).unwrap();
        let seed = r#"{"name": "Researcher", "systemPrompt": "Dig deep.\n"}"#;
        std::fs::write(config.join("agent_roles/researcher.json"), seed).unwrap();
        std::fs::write(base.join("secret.txt"), "secret").unwrap();
        let env = PromptEnv {
            project_dir: Some(project),
            config_dir: Some(config),
            home: Some(PathBuf::from("/home/u")),
        };
        (base, env)
    }

    fn fastrand_like() -> u128 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    }

    #[test]
    fn building_blocks_compose() {
        let (base, env) = dirs();
        let out = env
            .render("{{ role('developer')[:12] }}|{{ role('reviewer') }}|{{ read_file('notes.txt') }}|{{ 'yes' if file_exists('notes.txt') else 'no' }}{{ 'yes' if file_exists('nope') else 'no' }}|{{ read_dir('.') | join(',') }}|{{ agents_md }}|${HOME}")
            .unwrap();
        assert_eq!(
            out,
            "You are an e|Review hard.|note|yesno|AGENTS.md,notes.txt,src/|Use tabs.|/home/u"
        );
        assert_eq!(env.render("plain ${HOME}").unwrap(), "plain /home/u");
        let seed = env.render("{{ agent_role('researcher') }}|{{ role('reviewer') }}");
        assert_eq!(seed.unwrap(), "Dig deep.|Review hard.");
        let unknown = env.render("{{ agent_role('reviwer') }}").unwrap_err();
        assert!(unknown.contains("unknown role \"reviwer\""), "{unknown}");
        std::fs::remove_dir_all(base).unwrap();
    }

    #[test]
    fn files_outside_the_sandbox_are_refused() {
        let (base, env) = dirs();
        let secret = base.join("secret.txt");
        for template in [
            "{{ read_file('../secret.txt') }}".to_owned(),
            format!("{{{{ read_file('{}') }}}}", secret.display()),
            "{{ read_dir('/etc') }}".to_owned(),
        ] {
            let err = env.render(&template).unwrap_err();
            assert!(err.contains("refused"), "{template}: {err}");
        }
        let exists = "{{ 'yes' if file_exists('../secret.txt') else 'no' }}";
        assert_eq!(env.render(exists).unwrap(), "no");
        assert!(env
            .render("{{ role('../x') }}")
            .unwrap_err()
            .contains("ids are"));
        std::fs::remove_dir_all(base).unwrap();
    }
}
