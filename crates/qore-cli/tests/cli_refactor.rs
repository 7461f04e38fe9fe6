//! `qore refactor FILE --range … --instruction …` as a user meets it: the real binary, a
//! config dir of its own, and a loopback server. The request carries the refactor agent's
//! system prompt, the selection markers and the instruction; a fenced reply with prose is
//! cleaned and re-indented; `--diff`, `--json` and `--write` (a failing provider leaves the
//! file byte for byte as it was); the roster routes the file; bad ranges and an empty
//! instruction are usage errors.

mod common;

use common::config::{qore_in, ConfigDir};
use common::Run;
use qore_testkit::chat::{chat_answer, sent_messages};
use qore_testkit::{ReplayServer, Reply};
use serde_json::Value;

const SOURCE: &str = "def add(a, b):\n    return a+b\n\nprint(add(1, 2))\n";
const AGENT: &str =
    "name = \"mine\"\nextends = \"openai-refactor\"\nprovider = \"loop\"\nmodel = \"tiny\"\n";
const FENCED: &str = "Here is the refactored code:\n```python\nreturn a + b\n```\nIt adds spaces.";

/// A config dir whose `loop` provider is `url`, with agent `mine`, `pipelines`, and
/// `source/add.py`; and that file's path.
fn config_for(url: &str, pipelines: &str) -> (ConfigDir, String) {
    let config = ConfigDir::new(&[
        (
            "providers/loop.toml",
            &format!("name = \"loop\"\nprotocol = \"openai-chat\"\nurl = \"{url}/v1\"\n"),
        ),
        ("agents/mine.toml", AGENT),
        ("pipelines.toml", pipelines),
        ("source/add.py", SOURCE),
    ]);
    let file = config.0.join("source/add.py").display().to_string();
    (config, file)
}

/// `qore refactor` on add.py with `args` after the file, the model answering `reply`.
async fn refactor(reply: Reply, args: &[&str]) -> (ReplayServer, ConfigDir, String, Run) {
    let server = ReplayServer::start(vec![reply]).await.unwrap();
    let (config, file) = config_for(&server.url(), "");
    let mut all = vec!["refactor", file.as_str()];
    all.extend(args);
    let run = qore_in(&config, &all).await;
    (server, config, file, run)
}

const FIX: &[&str] = &[
    "--range",
    "2:5-2:15",
    "--instruction",
    "add spaces around +",
    "--agent",
    "mine",
];

#[tokio::test]
async fn the_request_carries_the_selection_and_the_cleaned_reply_is_printed_in_place() {
    let (server, _config, _file, run) = refactor(chat_answer(FENCED), FIX).await;
    let want = SOURCE.replace("a+b", "a + b");
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (Some(0), want.as_str()),
        "{run:?}"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 1, "{requests:?}");
    let sent = sent_messages(&requests[0]);
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert_eq!(sent[0].0, "system");
    assert!(sent[0].1.starts_with("You refactor code."), "{sent:?}");
    let user = &sent[1].1;
    assert!(user.contains("add spaces around +"), "{user}");
    assert!(
        user.contains("    <selection_start>return a+b<selection_end>\n"),
        "{user}"
    );
}

#[tokio::test]
async fn a_reindented_reply_as_a_diff_and_as_json() {
    let reply = "```python\n  def add(a, b):\n      return a + b\n```";
    let whole = [
        "--range",
        "1:1-3:1",
        "--instruction",
        "tidy",
        "--agent",
        "mine",
    ];
    let (_server, _config, file, run) =
        refactor(chat_answer(reply), &[&whole[..], &["--diff"]].concat()).await;
    assert_eq!(run.code, Some(0), "{run:?}");
    let file = file.trim_start_matches('/');
    let want = format!(
        "--- a/{file}\n+++ b/{file}\n@@ -1,4 +1,4 @@\n def add(a, b):\n-    return a+b\n+    return a + b\n \n print(add(1, 2))\n"
    );
    assert_eq!(run.stdout, want, "{run:?}");
    let (_server, _config, _file, run) =
        refactor(chat_answer(reply), &[&whole[..], &["--json"]].concat()).await;
    let line: Value = serde_json::from_str(run.stdout.trim()).expect("one JSON line");
    assert_eq!(line["text"], "def add(a, b):\n    return a + b\n", "{line}");
    assert_eq!(
        (
            line["range"].as_str(),
            line["agent"].as_str(),
            line["model"].as_str()
        ),
        (Some("1:1-3:1"), Some("mine"), Some("tiny"))
    );
}

#[tokio::test]
async fn write_replaces_the_file_and_a_failing_provider_leaves_it_as_it_was() {
    let write = [FIX, &["--write"]].concat();
    let (_server, config, file, run) = refactor(chat_answer(FENCED), &write).await;
    assert_eq!((run.code, run.stdout.as_str()), (Some(0), ""), "{run:?}");
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        SOURCE.replace("a+b", "a + b")
    );
    let entries = std::fs::read_dir(config.0.join("source")).unwrap().count();
    assert_eq!(entries, 1, "no temporary file is left");

    let failing = Reply::json(400, r#"{"error":{"message":"bad model"}}"#);
    let (_server, _config, file, run) = refactor(failing, &write).await;
    failed_saying(&run, &["bad model"]);
    assert_eq!(std::fs::read(&file).unwrap(), SOURCE.as_bytes());
}

#[tokio::test]
async fn the_refactor_roster_routes_the_file_else_one_error() {
    let server = ReplayServer::start(vec![chat_answer("return a - b")])
        .await
        .unwrap();
    let routed = "refactor = [\"mine\"]\n";
    let (config, file) = config_for(&server.url(), routed);
    let flags = ["--range", "2:5-2:15", "--instruction", "x"];
    let args = [&["refactor", file.as_str()][..], &flags].concat();
    let run = qore_in(&config, &args).await;
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.stdout.contains("    return a - b\n"), "{run:?}");
    let only_rust = format!("{AGENT}[match]\nfile_patterns = [\"*.rs\"]\n");
    std::fs::write(config.0.join("agents/mine.toml"), only_rust).unwrap();
    let run = qore_in(&config, &args).await;
    failed_saying(&run, &["refactor roster", "add.py"]);
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn bad_ranges_and_an_empty_instruction_are_usage_errors_and_send_nothing() {
    let server = ReplayServer::start(vec![]).await.unwrap();
    let (config, file) = config_for(&server.url(), "");
    let range_words = "L1:C1-L2:C2";
    // (--range, --instruction, what stderr says)
    let cases = [
        ("2:5", "x", range_words),
        ("0:1-1:1", "x", range_words),
        ("2:x-3:1", "x", range_words),
        ("1:1-2:2-3:3", "x", range_words),
        ("", "x", range_words),
        ("1:1-2:1", " ", "--instruction is empty"),
    ];
    for (range, instruction, words) in cases {
        let flags = [
            "--range",
            range,
            "--instruction",
            instruction,
            "--agent",
            "mine",
        ];
        let args = [&["refactor", file.as_str()][..], &flags].concat();
        let run = qore_in(&config, &args).await;
        let what = format!("{range:?} {instruction:?}: {run:?}");
        assert_eq!((run.code, run.stdout.as_str()), (Some(2), ""), "{what}");
        assert!(run.stderr.contains(words), "{what}");
    }
    assert!(server.requests().is_empty());
}

/// Exit 1, nothing on stdout, one line on stderr holding each of `words`.
fn failed_saying(run: &Run, words: &[&str]) {
    assert_eq!((run.code, run.stdout.as_str()), (Some(1), ""), "{run:?}");
    assert_eq!(run.stderr.trim().lines().count(), 1, "{run:?}");
    assert!(words.iter().all(|w| run.stderr.contains(w)), "{run:?}");
}
