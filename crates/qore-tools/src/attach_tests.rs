use super::*;

/// A project: `src/main.rs`, `src/lib.rs`, `notes.md`, a binary `logo.png`, an ignored
/// `target/` (by `.gitignore`) and `secret.txt` (by `.qoreignore`), and a file beside the
/// project, outside it.
fn project() -> (tempfile::TempDir, Sandbox) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("p");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::create_dir_all(root.join("target")).unwrap();
    std::fs::write(root.join("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(root.join("src/lib.rs"), "pub fn f() {}\n").unwrap();
    std::fs::write(root.join("notes.md"), "one\ntwo\nthree\nfour\n").unwrap();
    std::fs::write(root.join("logo.png"), b"\x89PNG\0\0\0").unwrap();
    std::fs::write(root.join("target/x"), "built\n").unwrap();
    std::fs::write(root.join("secret.txt"), "key\n").unwrap();
    std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
    std::fs::write(root.join(".qoreignore"), "secret.txt\n").unwrap();
    std::fs::write(dir.path().join("outside.txt"), "far\n").unwrap();
    let sandbox = Sandbox::new(&root).unwrap();
    (dir, sandbox)
}

#[test]
fn mentions_attach_files_listings_and_descriptions() {
    let (_dir, sandbox) = project();
    // (message, the message sent)
    let cases: &[(&str, &str)] = &[
        ("no mention", "no mention"),
        (
            "see @src/main.rs.",
            "see @src/main.rs.\n\n<file path=\"src/main.rs\">\nfn main() {}\n</file>",
        ),
        (
            "@src",
            "@src\n\n<directory path=\"src/\">\nsrc/lib.rs\nsrc/main.rs\n</directory>",
        ),
        (
            "@logo.png",
            "@logo.png\n\n<file path=\"logo.png\">[a binary file of 7 bytes, not shown]</file>",
        ),
        (
            "@notes.md and @./notes.md",
            "@notes.md and @./notes.md\n\n<file path=\"notes.md\">\none\ntwo\nthree\nfour\n</file>",
        ),
        ("mail me@notes.md", "mail me@notes.md"),
    ];
    for (text, sent) in cases {
        let got = attach_mentions(&sandbox, text, DEFAULT_BUDGET).unwrap();
        assert_eq!(got.message, *sent, "{text:?}");
        assert_eq!(got.unmatched, Vec::<String>::new(), "{text:?}");
    }
}

#[test]
fn a_mention_of_nothing_goes_as_text_and_is_named() {
    let (_dir, sandbox) = project();
    let text = "class A:\n    @property\n    def f(self): see @notes.md @src/nope.rs";
    let got = attach_mentions(&sandbox, text, DEFAULT_BUDGET).unwrap();
    assert!(got.message.starts_with(text), "{got:?}");
    assert_eq!(got.message.matches("<file path=").count(), 1, "{got:?}");
    assert_eq!(got.unmatched, ["property", "src/nope.rs"]);
}

#[test]
fn the_root_lists_without_what_is_ignored() {
    let (_dir, sandbox) = project();
    let got = attach_mentions(&sandbox, "@.", DEFAULT_BUDGET)
        .unwrap()
        .message;
    let listing =
        "<directory path=\"./\">\n.gitignore\n.qoreignore\nlogo.png\nnotes.md\nsrc/\n</directory>";
    assert_eq!(got, format!("@.\n\n{listing}"));
}

#[test]
fn refused_mentions_say_why() {
    let (_dir, sandbox) = project();
    // (message, words the refusal has)
    let cases: &[(&str, &[&str])] = &[
        ("@target/x", &["@target/x", "target/", ".gitignore"]),
        ("@secret.txt", &["@secret.txt", "secret.txt", ".qoreignore"]),
        (
            "@../outside.txt",
            &["@../outside.txt", "outside the project"],
        ),
        ("@src/main.rs and @../outside.txt", &["@../outside.txt"]),
        ("@.git/config", &[".git"]),
    ];
    for (text, words) in cases {
        let refusal = attach_mentions(&sandbox, text, DEFAULT_BUDGET)
            .unwrap_err()
            .to_string();
        for word in *words {
            assert!(refusal.contains(word), "{text:?}: {refusal}");
        }
    }
}

#[test]
fn files_share_the_budget_and_a_cut_says_so() {
    let (_dir, sandbox) = project();
    // 10 bytes: "one\ntwo\n" fits (8), "three\n" does not; main.rs gets nothing.
    let got = attach_mentions(&sandbox, "@notes.md @src/main.rs", 10)
        .unwrap()
        .message;
    let notes = "<file path=\"notes.md\">\none\ntwo\n[cut: first 2 of 4 lines; the attachments of a message share 10 bytes]\n</file>";
    let main = "<file path=\"src/main.rs\">\n[cut: first 0 of 1 lines; the attachments of a message share 10 bytes]\n</file>";
    assert_eq!(got, format!("@notes.md @src/main.rs\n\n{notes}\n\n{main}"));
}

#[test]
fn completion_offers_what_the_sandbox_allows() {
    let (_dir, sandbox) = project();
    // (typed after @, completions)
    let cases: &[(&str, &[&str])] = &[
        ("sr", &["src/"]),
        ("src/", &["src/lib.rs", "src/main.rs"]),
        ("src/m", &["src/main.rs"]),
        ("t", &[]),
        ("se", &[]),
        ("target/", &[]),
        ("../", &[]),
        ("n", &["notes.md"]),
        ("zz", &[]),
    ];
    for (typed, offered) in cases {
        assert_eq!(complete_mention(&sandbox, typed), *offered, "{typed:?}");
    }
}
