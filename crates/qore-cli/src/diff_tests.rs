use super::*;

#[test]
fn long_diffs_are_cut_with_the_count_left_out() {
    let diff: String = (1..=10).map(|i| format!("+line {i}\n")).collect();
    let cases = [
        (10, diff.clone()),
        (20, diff.clone()),
        (
            9,
            (1..=9).map(|i| format!("+line {i}\n")).collect::<String>() + "… 1 more line\n",
        ),
        (3, "+line 1\n+line 2\n+line 3\n… 7 more lines\n".to_owned()),
        (0, "… 10 more lines\n".to_owned()),
    ];
    for (budget, want) in cases {
        assert_eq!(cut(&diff, budget), want, "budget {budget}");
    }
}

#[test]
fn lines_are_coloured_by_kind_only_when_styled() {
    let diff = "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n same\n-old\n+new\n… 3 more lines\n";
    assert_eq!(coloured(diff, false), diff);
    assert_eq!(
        coloured(diff, true),
        "\x1b[1m--- a/f\x1b[0m\n\x1b[1m+++ b/f\x1b[0m\n\x1b[36m@@ -1,2 +1,2 @@\x1b[0m\n same\n\
         \x1b[31m-old\x1b[0m\n\x1b[32m+new\x1b[0m\n\x1b[2m… 3 more lines\x1b[0m\n"
    );
}

#[test]
fn a_new_file_is_all_additions() {
    assert_eq!(
        file_diff("n.txt", None, "a\nb\n"),
        "--- a/n.txt\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n"
    );
}

#[test]
fn command_lines_quote_what_a_shell_would_split() {
    let argv = |words: &[&str]| words.iter().map(|w| w.to_string()).collect::<Vec<_>>();
    let cases = [
        (
            argv(&["cargo", "test", "-p", "qore-cli"]),
            "cargo test -p qore-cli",
        ),
        (argv(&["echo", "hello world"]), "echo 'hello world'"),
        (argv(&["echo", "it's"]), r"echo 'it'\''s'"),
        (argv(&["printf", ""]), "printf ''"),
    ];
    for (argv, want) in cases {
        assert_eq!(command_line(&argv), want);
    }
}
