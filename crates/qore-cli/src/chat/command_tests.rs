use super::*;

fn command(command: Command) -> Line {
    Line::Command(command)
}

fn invalid(message: &str) -> Line {
    Line::Invalid(message.to_owned())
}

#[test]
fn lines_parse_into_messages_and_commands() {
    let cases: Vec<(&str, Line)> = vec![
        ("hello", Line::Message("hello".into())),
        (
            "  indented /not a command",
            Line::Message("  indented /not a command".into()),
        ),
        ("", Line::Empty),
        ("   \t", Line::Empty),
        (
            "//etc/passwd is a path",
            Line::Message("/etc/passwd is a path".into()),
        ),
        ("/help", command(Command::Help)),
        ("  /help  ", command(Command::Help)),
        ("/new", command(Command::New)),
        ("/sessions", command(Command::Sessions)),
        ("/switch 01jab", command(Command::Switch("01jab".into()))),
        (
            "/switch   my name ",
            command(Command::Switch("my name".into())),
        ),
        ("/agent coder", command(Command::Agent("coder".into()))),
        (
            "/model gpt-4o-mini",
            command(Command::Model("gpt-4o-mini".into())),
        ),
        ("/compress", command(Command::Compress)),
        ("/undo", command(Command::Undo)),
        ("/diff", command(Command::Diff)),
        ("/diff x", invalid("/diff takes no argument")),
        ("/tokens", command(Command::Tokens)),
        (
            "/export out.json",
            command(Command::Export("out.json".into())),
        ),
        ("/exit", command(Command::Exit)),
        ("/approvals", command(Command::Approvals(None))),
        (
            "/approvals revoke  write_file ",
            command(Command::Approvals(Some("write_file".into()))),
        ),
        (
            "/approvals write_file",
            invalid("/approvals lists; /approvals revoke TOOL revokes one"),
        ),
        (
            "/approvals revoke",
            invalid("/approvals lists; /approvals revoke TOOL revokes one"),
        ),
        // Arguments wrong.
        ("/switch", invalid("/switch needs ID: /switch ID")),
        ("/export  ", invalid("/export needs FILE: /export FILE")),
        ("/exit now", invalid("/exit takes no argument")),
        // Typos get the closest name.
        (
            "/hlep",
            invalid("unknown command /hlep; did you mean /help? (/help lists them)"),
        ),
        (
            "/sesions",
            invalid("unknown command /sesions; did you mean /sessions? (/help lists them)"),
        ),
        (
            "/exti",
            invalid("unknown command /exti; did you mean /exit? (/help lists them)"),
        ),
        (
            "/tok",
            invalid("unknown command /tok; did you mean /tokens? (/help lists them)"),
        ),
        (
            "/Undo",
            invalid("unknown command /Undo; did you mean /undo? (/help lists them)"),
        ),
        // Nothing near.
        (
            "/frobnicate",
            invalid("unknown command /frobnicate (/help lists them)"),
        ),
        ("/", invalid("unknown command / (/help lists them)")),
    ];
    for (input, expected) in cases {
        assert_eq!(parse(input), expected, "{input:?}");
    }
}

#[test]
fn help_lists_every_command_and_the_keys() {
    let help = help();
    for (name, ..) in COMMANDS {
        assert!(help.contains(&format!("/{name}")), "{name}: {help}");
    }
    for key in ["Ctrl-C", "Ctrl-D", "Alt-Enter", "\\", "@path", "Tab"] {
        assert!(help.contains(key), "{key}: {help}");
    }
}
