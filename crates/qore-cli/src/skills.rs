//! `qore skills list|show NAME`: the skills a run in this project would offer (the config
//! dir's `skills/`, the project's `.claude/skills/` and `.qore/skills/`).
//!
//! Promises: broken `SKILL.md` files are warnings on stderr naming them (exit 0 for
//! `list`); `show` prints the skill's name, description, folder and instructions, and an
//! unknown name exits 1 listing the known ones.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;
use comfy_table::{presets::NOTHING, Table};
use qore_session::skills::Skills;

use crate::console::outln;

#[derive(Subcommand)]
pub enum SkillsCommand {
    /// The skills, their descriptions and folders.
    List {
        /// The project (default: the current directory).
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
    },
    /// One skill's description and instructions.
    Show {
        name: String,
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
    },
}

fn load(project: Option<PathBuf>) -> Skills {
    let project = project.or_else(|| std::env::current_dir().ok());
    let skills = Skills::load(
        qore_agents::config::default_dir().as_deref(),
        project.as_deref(),
    );
    for warning in &skills.warnings {
        eprintln!("qore: {warning}");
    }
    skills
}

pub fn skills(command: SkillsCommand) -> ExitCode {
    match command {
        SkillsCommand::List { project } => {
            let skills = load(project);
            if skills.skills.is_empty() {
                outln!("no skills (folders with a SKILL.md under <config dir>/skills/, .qore/skills/ or .claude/skills/)");
                return ExitCode::SUCCESS;
            }
            let mut table = Table::new();
            table
                .load_preset(NOTHING)
                .set_header(["NAME", "DESCRIPTION", "FOLDER"]);
            for skill in &skills.skills {
                table.add_row([
                    skill.name.clone(),
                    skill.description.clone(),
                    skill.dir.display().to_string(),
                ]);
            }
            outln!("{table}");
            ExitCode::SUCCESS
        }
        SkillsCommand::Show { name, project } => {
            let skills = load(project);
            let Some(skill) = skills.get(&name) else {
                let known: Vec<&str> = skills.skills.iter().map(|s| s.name.as_str()).collect();
                eprintln!("qore: no skill '{name}' (skills: {})", known.join(", "));
                return ExitCode::from(1);
            };
            outln!(
                "{}: {}\n({})\n\n{}",
                skill.name,
                skill.description,
                skill.dir.display(),
                skill.instructions
            );
            ExitCode::SUCCESS
        }
    }
}
