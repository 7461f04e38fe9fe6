//! Skills: folders holding a `SKILL.md` (YAML front matter with `name` and `description`,
//! then the instructions; other files beside it) under `<config dir>/skills/`, then the
//! project's `.claude/skills/` and `.qore/skills/`.
//!
//! Promises:
//! - a later folder's skill replaces an earlier one of the same name (the project's win);
//!   skills are listed by name;
//! - a broken `SKILL.md` (no front matter, bad YAML, no name or description) is a warning
//!   naming the file, and the other skills still load;
//! - [`Skills::prompt_layer`] is one system prompt layer naming each skill and saying what
//!   it is for; the read-only `skill` tool ([`SkillTool`]) returns a skill's instructions,
//!   or with `file` one file of its folder (paths outside the folder are refused).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use qore_core::{CancellationToken, Tool, ToolFuture, ToolOutput, ToolSpec};
use qore_tools::Sandbox;
use serde::Deserialize;
use serde_json::{json, Value};

/// One skill.
#[derive(Debug, Clone, PartialEq)]
pub struct Skill {
    /// The skill's name, what the `skill` tool is called with.
    pub name: String,
    /// One line saying when to use it (from the front matter).
    pub description: String,
    /// The instructions (what follows the front matter).
    pub instructions: String,
    /// Its folder.
    pub dir: PathBuf,
}

/// The skills found, and the warnings about the ones that could not be read.
#[derive(Debug, Default)]
pub struct Skills {
    /// Every skill read, by name.
    pub skills: Vec<Skill>,
    /// Skills that could not be read, one line each.
    pub warnings: Vec<String>,
}

#[derive(Deserialize)]
struct FrontMatter {
    name: Option<String>,
    description: Option<String>,
}

/// Parse one `SKILL.md` of folder `dir`.
pub fn parse(text: &str, dir: &Path) -> Result<Skill, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
        .ok_or("no front matter (it must start with a `---` line)")?;
    let end = rest
        .find("\n---")
        .ok_or("the front matter has no closing `---` line")?;
    let (yaml, body) = (&rest[..end], &rest[end + 4..]);
    let body = body.split_once('\n').map_or("", |(_, body)| body);
    let front: FrontMatter =
        serde_norway::from_str(yaml).map_err(|e| format!("front matter: {e}"))?;
    let field = |value: Option<String>, key: &str| {
        value
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
            .ok_or(format!("the front matter has no `{key}`"))
    };
    Ok(Skill {
        name: field(front.name, "name")?,
        description: field(front.description, "description")?,
        instructions: body.trim().to_string(),
        dir: dir.to_path_buf(),
    })
}

impl Skills {
    /// The skills of `config_dir` and `project` (see the module doc).
    pub fn load(config_dir: Option<&Path>, project: Option<&Path>) -> Skills {
        let mut roots = Vec::new();
        roots.extend(config_dir.map(|d| d.join("skills")));
        if let Some(project) = project {
            roots.push(project.join(".claude/skills"));
            roots.push(project.join(".qore/skills"));
        }
        let mut found = Skills::default();
        for root in roots {
            let Ok(entries) = std::fs::read_dir(&root) else {
                continue;
            };
            let mut dirs: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
            dirs.sort();
            for dir in dirs.into_iter().filter(|d| d.join("SKILL.md").is_file()) {
                let file = dir.join("SKILL.md");
                let parsed = std::fs::read_to_string(&file)
                    .map_err(|e| e.to_string())
                    .and_then(|text| parse(&text, &dir));
                match parsed {
                    Ok(skill) => {
                        found.skills.retain(|s| s.name != skill.name);
                        found.skills.push(skill);
                    }
                    Err(why) => found
                        .warnings
                        .push(format!("skill {} left out: {why}", file.display())),
                }
            }
        }
        found.skills.sort_by(|a, b| a.name.cmp(&b.name));
        found
    }

    /// The skill named `name`.
    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.skills.iter().find(|s| s.name == name)
    }

    /// The system prompt layer listing the skills, or `None` without skills.
    pub fn prompt_layer(&self) -> Option<String> {
        if self.skills.is_empty() {
            return None;
        }
        let mut text = String::from(
            "Skills: instructions for particular tasks. When a task fits one, load its \
             instructions with the `skill` tool before you start.\n",
        );
        for skill in &self.skills {
            text.push_str(&format!("- {}: {}\n", skill.name, skill.description));
        }
        Some(text.trim_end().to_string())
    }
}

/// The read-only `skill` tool.
pub struct SkillTool {
    skills: Arc<Vec<Skill>>,
    spec: ToolSpec,
}

impl SkillTool {
    /// The `skill` tool over `skills`.
    pub fn new(skills: &Skills) -> SkillTool {
        SkillTool {
            skills: Arc::new(skills.skills.clone()),
            spec: ToolSpec {
                name: "skill".into(),
                description: "Load a skill's instructions (the skills are listed in the system \
                              prompt), or with `file` one file of the skill's folder."
                    .into(),
                input_schema: json!({
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "description": "The skill's name."},
                        "file": {"type": "string", "description": "A file in the skill's folder (relative path)."}
                    },
                    "required": ["name"]
                }),
            },
        }
    }
}

fn run(skills: &[Skill], input: &Value) -> ToolOutput {
    let Some(name) = input.get("name").and_then(Value::as_str) else {
        return ToolOutput::error("skill: give the skill's `name`");
    };
    let Some(skill) = skills.iter().find(|s| s.name == name) else {
        let known: Vec<&str> = skills.iter().map(|s| s.name.as_str()).collect();
        return ToolOutput::error(format!("no skill {name:?} (skills: {})", known.join(", ")));
    };
    let Some(file) = input.get("file").and_then(Value::as_str) else {
        return ToolOutput::text(format!(
            "# Skill {name}\n(Its folder: {}; read its files with `file`.)\n\n{}",
            skill.dir.display(),
            skill.instructions
        ));
    };
    let path = Sandbox::new(&skill.dir)
        .and_then(|sandbox| sandbox.resolve(file))
        .map_err(|e| e.to_string());
    match path.and_then(|p| std::fs::read_to_string(p).map_err(|e| e.to_string())) {
        Ok(text) => ToolOutput::text(text),
        Err(why) => ToolOutput::error(format!("skill {name}: {file}: {why}")),
    }
}

impl Tool for SkillTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn destructive(&self) -> bool {
        false
    }

    fn parallel_safe(&self) -> bool {
        true
    }

    fn call(&self, input: Value, _cancel: CancellationToken) -> ToolFuture {
        let skills = self.skills.clone();
        Box::pin(async move { run(&skills, &input) })
    }
}

#[cfg(test)]
#[path = "skills_tests.rs"]
mod tests;
