//! `qore lsp`: the editor server on stdin/stdout (qore-lsp). Agents and providers come from
//! the config dir as for every command; notes and the log (`QORE_LOG`, default: qore_lsp at
//! info) go to stderr, never stdout (the protocol's).
//! The process ends when the server does (after `exit`, or at the end of stdin): exit code 0,
//! or 1 with one line on stderr when stdout cannot be written.
//!
//! [`editor_launch`] recognises the command lines that editors' Copilot plugins run, which
//! all mean "the LSP server on stdio".

use std::ffi::OsString;
use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;

use qore_agents::config::default_dir;
use qore_session::SessionManager;

/// Whether `args` (the whole argv, program first) is one of the launches of an editor plugin
/// written for the Copilot server, all of which mean `qore lsp`:
/// - `qore --stdio`: copilot.lua (`server.type = "binary"`), copilot.vim and copilot.el run
///   the server program with `--stdio`;
/// - `qore FILE` and `qore FILE --stdio`, FILE an existing file that is not the name of a
///   subcommand (`is_command`) nor `help`: Qt Creator's Copilot plugin runs
///   `<Node.js path> <agent.js path> [--stdio]`, with qore as its "Node.js".
///
/// Nothing else is: any other argument, or more of them, goes to clap as usual (so a typo
/// or a missing file is still a usage error). `qore lsp --stdio` is clap's own.
pub fn editor_launch(args: &[OsString], is_command: impl Fn(&str) -> bool) -> bool {
    let stdio = |arg: &OsString| arg == "--stdio";
    match args {
        [_, only] => stdio(only) || names_a_file(only, &is_command),
        [_, file, last] => stdio(last) && names_a_file(file, &is_command),
        _ => false,
    }
}

/// `arg` is an existing file's path, not an option, a subcommand's name nor `help`.
fn names_a_file(arg: &OsString, is_command: &impl Fn(&str) -> bool) -> bool {
    let word = arg.to_str();
    if word.is_some_and(|w| w.starts_with('-') || w == "help" || is_command(w)) {
        return false;
    }
    Path::new(arg).is_file()
}

pub async fn lsp() -> ExitCode {
    // Shown, accepted and rejected completions are counted at info (copilot_methods.rs).
    crate::log::init("warn,qore_lsp=info");
    if std::io::stdin().is_terminal() {
        eprintln!("qore: serving LSP on stdin/stdout (an editor starts this; Ctrl-D ends it)");
    }
    let setup = qore_lsp::Setup {
        manager: SessionManager::new(None, crate::agents::load(), crate::connect::notes()),
        config_dir: default_dir(),
    };
    let code = match qore_lsp::serve_stdio(setup).await {
        Ok(()) => 0,
        Err(err) => {
            eprintln!("qore: {err}");
            1
        }
    };
    // tokio's stdin reads on a thread no one can interrupt: waiting for it would keep the
    // process alive after `exit` while the editor holds stdin open. Everything is written.
    std::process::exit(code)
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;

    use super::editor_launch;

    #[test]
    fn only_the_editor_plugins_command_lines_are_an_editor_launch() {
        let dir = tempfile::tempdir().unwrap();
        let agent = dir.path().join("agent.js");
        std::fs::write(&agent, "").unwrap();
        let run = dir.path().join("run");
        std::fs::write(&run, "").unwrap();
        let agent = agent.to_str().unwrap();
        let (run, dir_path) = (run.to_str().unwrap(), dir.path().to_str().unwrap());
        let missing = dir.path().join("missing.js");
        let missing = missing.to_str().unwrap();
        let cases: Vec<(&str, Vec<&str>, bool)> = vec![
            (
                "copilot.lua, copilot.vim, copilot.el",
                vec!["--stdio"],
                true,
            ),
            ("Qt Creator, newer", vec![agent, "--stdio"], true),
            ("Qt Creator, older", vec![agent], true),
            ("no arguments", vec![], false),
            ("a subcommand", vec!["lsp", "--stdio"], false),
            ("a typo of --stdio", vec!["--stdoi"], false),
            ("a missing file", vec![missing, "--stdio"], false),
            ("a directory", vec![dir_path], false),
            (
                "a file then something else",
                vec![agent, "--verbose"],
                false,
            ),
            ("--stdio twice", vec!["--stdio", "--stdio"], false),
            ("more arguments", vec![agent, "--stdio", "x"], false),
        ];
        let no_command = |_: &str| false;
        for (name, argv, expected) in cases {
            let args: Vec<OsString> = std::iter::once("qore")
                .chain(argv)
                .map(Into::into)
                .collect();
            assert_eq!(editor_launch(&args, no_command), expected, "{name}");
        }
        // An existing file that is also a subcommand's name is the subcommand.
        let args: Vec<OsString> = vec!["qore".into(), run.into()];
        assert!(editor_launch(&args, no_command));
        assert!(!editor_launch(&args, |name: &str| name == run));
    }
}
