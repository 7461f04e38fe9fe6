//! Every way out of the project root is refused, by the sandbox and by each tool that takes
//! a path; and nothing outside the root is read or changed by the attempt.

mod common;

#[cfg(unix)]
use common::symlink;
use common::Project;
use qore_tools::SandboxError;
use serde_json::json;

const SECRET: &str = "TOP SECRET";

/// Every tool that takes a path, tried on `path`: all must refuse, none may leak the secret,
/// and `outside/secret.txt` must be unchanged afterwards.
async fn every_path_tool_refuses(p: &Project, path: &str) -> Vec<String> {
    let calls = [
        ("read_file", json!({"path": path})),
        ("list_files", json!({"path": path})),
        ("search", json!({"pattern": "SECRET", "path": path})),
        ("find_file", json!({"pattern": "*", "path": path})),
        ("write_file", json!({"path": path, "content": "pwned\n"})),
        ("create_file", json!({"path": path, "content": "pwned\n"})),
        (
            "edit_file",
            json!({"path": path, "old_string": "TOP", "new_string": "pwned"}),
        ),
    ];
    let mut messages = Vec::new();
    for (tool, input) in calls {
        let text = p.err(tool, input).await;
        assert!(!text.contains(SECRET), "{tool} on {path} leaked: {text}");
        messages.push(text);
    }
    assert_eq!(
        std::fs::read_to_string(p.outside.join("secret.txt")).unwrap(),
        "TOP SECRET\n"
    );
    messages
}

#[tokio::test]
async fn dot_dot_out_of_the_root_is_refused() {
    let p = Project::new();
    let sb = p.sandbox();
    assert!(matches!(
        sb.resolve("../outside/secret.txt"),
        Err(SandboxError::OutsideRoot { .. })
    ));
    assert!(matches!(
        sb.resolve(".."),
        Err(SandboxError::OutsideRoot { .. })
    ));
    for msg in every_path_tool_refuses(&p, "../outside/secret.txt").await {
        assert!(msg.contains("outside the project root"), "{msg}");
    }
    // A file to be created out there is refused too, and not created.
    p.err(
        "create_file",
        json!({"path": "../outside/new.txt", "content": "x"}),
    )
    .await;
    p.err(
        "write_file",
        json!({"path": "../outside/new.txt", "content": "x"}),
    )
    .await;
    assert!(!p.outside.join("new.txt").exists());
}

#[tokio::test]
async fn hidden_traversal_through_a_subdirectory_is_refused() {
    let p = Project::new();
    p.write("a/inner.txt", "inner\n");
    let sb = p.sandbox();
    assert!(matches!(
        sb.resolve("a/../../outside/secret.txt"),
        Err(SandboxError::OutsideRoot { .. })
    ));
    // Leaving the root and coming back in is refused as well: a relative path never leaves.
    assert!(matches!(
        sb.resolve("a/../../project/a/inner.txt"),
        Err(SandboxError::OutsideRoot { .. })
    ));
    // `..` after a part that does not exist has no meaning to check.
    assert!(matches!(
        sb.resolve("nothing/../../outside/secret.txt"),
        Err(SandboxError::ParentAfterMissing { .. })
    ));
    every_path_tool_refuses(&p, "a/../../outside/secret.txt").await;
    every_path_tool_refuses(&p, "nothing/../../outside/secret.txt").await;
    // `..` that stays inside is fine.
    assert_eq!(
        sb.resolve("a/../a/inner.txt").unwrap(),
        p.root.join("a/inner.txt")
    );
}

#[tokio::test]
async fn absolute_paths_outside_are_refused_and_inside_are_accepted() {
    let p = Project::new();
    p.write("in.txt", "inside\n");
    let sb = p.sandbox();
    let secret = p.outside.join("secret.txt");
    let secret = secret.to_str().unwrap();
    assert!(matches!(
        sb.resolve(secret),
        Err(SandboxError::OutsideRoot { .. })
    ));
    assert!(matches!(
        sb.resolve("/"),
        Err(SandboxError::OutsideRoot { .. })
    ));
    every_path_tool_refuses(&p, secret).await;
    every_path_tool_refuses(&p, "/etc/passwd").await;
    let inside = p.root.join("in.txt");
    let text = p
        .ok("read_file", json!({"path": inside.to_str().unwrap()}))
        .await;
    assert_eq!(text, "1\tinside\n");
}

#[cfg(unix)]
#[tokio::test]
async fn a_symlinked_file_leading_out_is_refused() {
    let p = Project::new();
    symlink(&p.outside.join("secret.txt"), &p.root.join("link.txt"));
    assert!(matches!(
        p.sandbox().resolve("link.txt"),
        Err(SandboxError::SymlinkEscape { .. })
    ));
    for msg in every_path_tool_refuses(&p, "link.txt").await {
        assert!(msg.contains("symlink that points outside"), "{msg}");
    }
    // The link itself is still there and still a link.
    assert!(p
        .root
        .join("link.txt")
        .symlink_metadata()
        .unwrap()
        .file_type()
        .is_symlink());
}

#[cfg(unix)]
#[tokio::test]
async fn a_symlinked_directory_leading_out_is_refused_and_not_walked() {
    let p = Project::new();
    p.write("real.txt", "real\n");
    symlink(&p.outside, &p.root.join("ext"));
    let sb = p.sandbox();
    assert!(matches!(
        sb.resolve("ext"),
        Err(SandboxError::SymlinkEscape { .. })
    ));
    assert!(matches!(
        sb.resolve("ext/new.txt"),
        Err(SandboxError::SymlinkEscape { .. })
    ));
    // Out through the link and back in through `..` is still out.
    assert!(matches!(
        sb.resolve("ext/../project/real.txt"),
        Err(SandboxError::SymlinkEscape { .. })
    ));
    every_path_tool_refuses(&p, "ext/secret.txt").await;
    every_path_tool_refuses(&p, "ext").await;
    p.err(
        "create_file",
        json!({"path": "ext/new.txt", "content": "x"}),
    )
    .await;
    assert!(!p.outside.join("new.txt").exists());

    // Walks list the link but never go through it.
    let listing = p.ok("list_files", json!({"recursive": true})).await;
    assert_eq!(listing, "ext@\nreal.txt");
    let found = p.ok("search", json!({"pattern": "SECRET"})).await;
    assert!(found.starts_with("No matches"), "{found}");
    let found = p.ok("find_file", json!({"pattern": "secret"})).await;
    assert!(found.starts_with("No files match"), "{found}");
}

#[cfg(unix)]
#[tokio::test]
async fn symlinks_that_stay_inside_are_followed() {
    let p = Project::new();
    p.write("real.txt", "real\n");
    symlink(&p.root.join("real.txt"), &p.root.join("alias.txt"));
    assert_eq!(
        p.sandbox().resolve("alias.txt").unwrap(),
        p.root.join("real.txt")
    );
    assert_eq!(
        p.ok("read_file", json!({"path": "alias.txt"})).await,
        "1\treal\n"
    );
}

#[cfg(unix)]
#[tokio::test]
async fn a_dangling_symlink_is_refused_and_not_written_through() {
    let p = Project::new();
    let target = p.outside.join("planted.txt");
    symlink(&target, &p.root.join("dangling"));
    assert!(matches!(
        p.sandbox().resolve("dangling"),
        Err(SandboxError::BrokenSymlink { .. })
    ));
    p.err("create_file", json!({"path": "dangling", "content": "x"}))
        .await;
    p.err("write_file", json!({"path": "dangling", "content": "x"}))
        .await;
    assert!(!target.exists());
}

#[tokio::test]
async fn gitignored_paths_are_refused_and_never_listed() {
    let p = Project::new();
    p.write(".gitignore", "*.env\n!public.env\nbuild/\n");
    p.write("secret.env", "TOP SECRET\n");
    p.write("public.env", "visible\n");
    p.write("build/out.txt", "TOP SECRET\n");
    p.write("src/main.rs", "fn main() {}\n");
    let sb = p.sandbox();
    match sb.resolve("secret.env") {
        Err(SandboxError::Ignored { rule, file, .. }) => {
            assert_eq!((rule.as_str(), file.as_str()), ("*.env", ".gitignore"));
        }
        other => panic!("expected Ignored, got {other:?}"),
    }
    // A file to be created in an ignored directory is refused too.
    assert!(matches!(
        sb.resolve("build/new.txt"),
        Err(SandboxError::Ignored { .. })
    ));
    for path in ["secret.env", "build/out.txt", "build"] {
        for msg in every_path_tool_refuses(&p, path).await {
            assert!(msg.contains("is excluded by the rule"), "{msg}");
        }
    }
    assert!(!p.root.join("build/new.txt").exists());
    assert_eq!(
        p.ok("read_file", json!({"path": "public.env"})).await,
        "1\tvisible\n"
    );

    let listing = p.ok("list_files", json!({"recursive": true})).await;
    assert_eq!(listing, ".gitignore\npublic.env\nsrc/\nsrc/main.rs");
    let hits = p.ok("search", json!({"pattern": "SECRET"})).await;
    assert!(hits.starts_with("No matches"), "{hits}");
    let found = p.ok("find_file", json!({"pattern": "*.env"})).await;
    assert_eq!(found, "public.env");
}

#[tokio::test]
async fn qoreignore_rules_apply_at_every_level_and_beat_gitignore() {
    let p = Project::new();
    p.write(".qoreignore", "private/\nnotes.txt\n");
    p.write(".gitignore", "!notes.txt\n");
    p.write("private/key.pem", "TOP SECRET\n");
    p.write("notes.txt", "TOP SECRET\n");
    p.write("sub/.qoreignore", "local.txt\n");
    p.write("sub/local.txt", "TOP SECRET\n");
    p.write("sub/shared.txt", "shared\n");
    p.write("local.txt", "root local\n");
    for path in ["private/key.pem", "notes.txt", "sub/local.txt"] {
        let msgs = every_path_tool_refuses(&p, path).await;
        assert!(msgs[0].contains(".qoreignore"), "{}", msgs[0]);
    }
    // The nested file's rules only apply below it.
    assert_eq!(
        p.ok("read_file", json!({"path": "local.txt"})).await,
        "1\troot local\n"
    );
    // Listing a subdirectory still applies the root's rules (the walk starts at the root).
    p.write("sub/private/deep.txt", "x\n");
    let listing = p
        .ok("list_files", json!({"path": "sub", "recursive": true}))
        .await;
    assert_eq!(listing, "sub/.qoreignore\nsub/shared.txt");
    let hits = p.ok("search", json!({"pattern": "SECRET"})).await;
    assert!(hits.starts_with("No matches"), "{hits}");
}

#[tokio::test]
async fn nested_gitignore_applies_when_listing_below_it() {
    let p = Project::new();
    p.write(".gitignore", "*.log\n");
    p.write("a/b/keep.rs", "x\n");
    p.write("a/b/trace.log", "x\n");
    let listing = p.ok("list_files", json!({"path": "a/b"})).await;
    assert_eq!(listing, "a/b/keep.rs");
}

#[tokio::test]
async fn qoreignore_files_cannot_be_changed_by_tools() {
    let p = Project::new();
    p.write(".qoreignore", "private/\n");
    let msg = p
        .err("write_file", json!({"path": ".qoreignore", "content": ""}))
        .await;
    assert!(msg.contains("tools cannot change it"), "{msg}");
    p.err(
        "edit_file",
        json!({"path": ".qoreignore", "old_string": "private/", "new_string": "x"}),
    )
    .await;
    p.err(
        "create_file",
        json!({"path": "sub/.qoreignore", "content": "x"}),
    )
    .await;
    assert_eq!(p.read(".qoreignore"), "private/\n");
    assert!(!p.root.join("sub").exists());
    // Reading it is fine.
    assert_eq!(
        p.ok("read_file", json!({"path": ".qoreignore"})).await,
        "1\tprivate/\n"
    );
}

#[tokio::test]
async fn the_git_directory_is_off_limits() {
    let p = Project::new();
    p.write(".git/config", "[core]\n");
    p.write("f.txt", "f\n");
    assert!(matches!(
        p.sandbox().resolve(".git/config"),
        Err(SandboxError::GitDir { .. })
    ));
    p.err("read_file", json!({"path": ".git/config"})).await;
    p.err(
        "create_file",
        json!({"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\n"}),
    )
    .await;
    assert!(!p.root.join(".git/hooks").exists());
    assert_eq!(
        p.ok("list_files", json!({"recursive": true})).await,
        "f.txt"
    );
}

#[tokio::test]
async fn empty_and_nul_paths_are_refused_with_a_hint() {
    let p = Project::new();
    let sb = p.sandbox();
    assert!(matches!(sb.resolve(""), Err(SandboxError::EmptyPath)));
    assert!(matches!(sb.resolve("  "), Err(SandboxError::EmptyPath)));
    assert!(matches!(
        sb.resolve("a\0b"),
        Err(SandboxError::InvalidPath { .. })
    ));
    let msg = p.err("read_file", json!({"path": ""})).await;
    assert!(msg.contains("relative to the project root"), "{msg}");
}

#[tokio::test]
async fn commands_with_shell_metacharacters_are_refused_before_running() {
    let p = Project::new();
    let cases = [
        "a; rm -rf .",
        "a | cat",
        "a && echo b",
        "a & echo b",
        "$(whoami)",
        "`whoami`",
        "a > out.txt",
        "a < in.txt",
        "a\necho b",
    ];
    for arg in cases {
        let out = p.call("run_command", json!({"argv": ["echo", arg]})).await;
        let text = out.text_content();
        assert!(out.is_error, "{arg:?} ran: {text}");
        assert!(text.contains("shell metacharacter"), "{arg:?}: {text}");
        assert!(out.structured.is_none(), "{arg:?} must not have run");
    }
    // The program slot is checked too.
    let msg = p.err("run_command", json!({"argv": ["echo;ls"]})).await;
    assert!(msg.contains("not an allowed program"), "{msg}");
}

#[tokio::test]
async fn command_arguments_naming_paths_outside_or_ignored_are_refused() {
    let p = Project::new();
    p.write(".gitignore", "secret.env\n");
    p.write("secret.env", "TOP SECRET\n");
    let abs = p.outside.join("secret.txt");
    let abs = abs.to_str().unwrap().to_string();
    #[allow(unused_mut)]
    let mut argvs = vec![
        json!(["cat", "../outside/secret.txt"]),
        json!(["cat", abs]),
        json!(["cat", "secret.env"]),
        json!(["grep", format!("--file={abs}"), "x"]),
        json!(["ls", "~"]),
        json!(["cat", "a/../../outside/secret.txt"]),
    ];
    #[cfg(unix)]
    {
        symlink(&p.outside.join("secret.txt"), &p.root.join("link.txt"));
        argvs.push(json!(["cat", "link.txt"]));
    }
    for argv in argvs {
        let out = p.call("run_command", json!({ "argv": argv })).await;
        let text = out.text_content();
        assert!(out.is_error && !text.contains(SECRET), "{argv} ran: {text}");
        assert!(out.structured.is_none(), "{argv} must not have run: {text}");
    }
}
