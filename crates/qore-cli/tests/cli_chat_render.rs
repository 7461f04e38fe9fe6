//! Answers rendered on a terminal, and kept exactly as they came everywhere else: the real
//! binary in tmux (`tests/common/tmux.rs`, escape codes read back with `capture-pane -e`)
//! and through pipes, against a loopback server streaming a hand-written Markdown answer
//! (reasoning first, then the text in pieces of a few characters, the wire cut into slices of
//! 1..=7 bytes, so fences and UTF-8 sequences arrive split).
#![cfg(target_os = "linux")]

mod common;

use common::chat::Dirs;
use common::chat_term;
use common::live::run_with_stdin;
use common::tmux::Tmux;
use common::turns::{chunk, MODEL};
use common::{text_stdout, IRREGULAR};
use qore_testkit::{ReplayServer, Reply};
use serde_json::{json, Value};

/// The answer: a heading, bold, a link, a list, a table and a Rust code block.
const ANSWER: &str = "# Heading Here\n\n\
    Some **bold words**, a [link](https://example.com/x) and café — naïve 日本.\n\n\
    - first item\n\
    - second item\n\n\
    | Col A | Col B |\n\
    |---|---|\n\
    | a1 | b1 |\n\n\
    ```rust\n\
    fn main() { let answer = 42; }\n\
    ```\n\n\
    Done.";

const REASONING: &str = "Thinking it over.\n";

/// A Chat Completions stream of `reasoning` then `text`, each in pieces of `piece` chars.
fn stream(reasoning: &str, text: &str, piece: usize) -> Reply {
    let mut body = chunk(json!({"role": "assistant", "content": ""}), Value::Null);
    let pieces = |s: &str| -> Vec<String> {
        let chars: Vec<char> = s.chars().collect();
        chars.chunks(piece).map(|c| c.iter().collect()).collect()
    };
    for part in pieces(reasoning) {
        body += &chunk(json!({"reasoning_content": part}), Value::Null);
    }
    for part in pieces(text) {
        body += &chunk(json!({"content": part}), Value::Null);
    }
    body += &chunk(json!({}), json!("stop"));
    body += "data: [DONE]\n\n";
    Reply::sse(body).with_slicing(IRREGULAR)
}

/// A server answering every request with `reply`; its base URL.
async fn serving(reply: Reply) -> (ReplayServer, String) {
    let server = ReplayServer::start_repeating(reply).await.expect("server");
    let url = format!("{}/v1", server.url());
    (server, url)
}

/// The config dir no test's user config can be in.
fn no_config() -> String {
    let dir = std::env::temp_dir().join("qore-tests-no-config");
    dir.to_str().expect("UTF-8 path").to_owned()
}

/// `qore run` on `url` in tmux (`cols` wide) with `extra` flags, under `env` (`K=V`, set by
/// env(1) so that tmux's own TERM does not win); the terminal once it has ended.
async fn run_in_tmux(url: &str, extra: &[&str], env: &[&str], cols: u16) -> Option<Tmux> {
    let data = tempfile::tempdir().expect("data dir");
    let config = format!("QORE_CONFIG_DIR={}", no_config());
    let mut argv = vec!["env", &config];
    argv.extend_from_slice(env);
    argv.extend_from_slice(&[common::QORE, "run", "--url", url, "--model", MODEL]);
    argv.extend_from_slice(&["--ephemeral", "--tools", "off"]);
    argv.extend_from_slice(extra);
    argv.push("Show me.");
    let term = Tmux::start(&argv, &[], data.path(), (cols, 40))?;
    assert_eq!(term.wait_exit().await, 0, "{}", term.text());
    Some(term)
}

/// The SGR attributes set on `line` before `needle` (38 and 48 stand for any colour).
fn attributes_before(line: &str, needle: &str) -> Vec<u32> {
    let end = line.find(needle).unwrap_or(line.len());
    let mut found = Vec::new();
    for escape in line[..end].split("\x1b[").skip(1) {
        let Some((params, _)) = escape.split_once('m') else {
            continue;
        };
        let mut params = params.split(';').map(|p| p.parse::<u32>().unwrap_or(0));
        while let Some(code) = params.next() {
            if code == 38 || code == 48 {
                let skip = if params.next() == Some(5) { 1 } else { 3 };
                params.by_ref().take(skip).for_each(drop);
            }
            found.push(code);
        }
    }
    found
}

/// The line of `screen` that contains `needle`.
fn line_with<'a>(screen: &'a str, needle: &str) -> &'a str {
    (screen.lines().find(|line| line.contains(needle)))
        .unwrap_or_else(|| panic!("no line with {needle:?}:\n{screen}"))
}

#[tokio::test]
async fn a_chat_answer_is_rendered_with_its_markers_gone_and_its_code_coloured() {
    let (server, url) = serving(stream(REASONING, ANSWER, 5)).await;
    let data = tempfile::tempdir().expect("data dir");
    let project = tempfile::tempdir().expect("project dir");
    let config = no_config();
    let env = [("QORE_CONFIG_DIR", config.as_str())];
    let Some(term) = chat_term::chat_on(&url, project.path(), data.path(), (&[], &env), (100, 50))
    else {
        return;
    };
    term.wait_for("> ").await;
    term.keys("Show me.");
    term.key("Enter");
    let text = term.wait_for("Done.").await;
    let screen = term.screen();
    // The heading without `#`, bold without `**`, no fences; the link's address shown.
    assert!(
        line_with(&text, "Heading Here").trim() == "Heading Here",
        "{text}"
    );
    for marker in ["**", "```", "|---"] {
        assert!(!text.contains(marker), "{marker:?} shown:\n{text}");
    }
    assert!(text.contains("https://example.com/x"), "{text}");
    assert!(line_with(&text, "first item").contains('•'), "{text}");
    assert!(line_with(&text, "a1").contains('│'), "{text}");
    // Styles: the heading and the bold words in bold (SGR 1), the code line coloured
    // (an SGR foreground colour), the reasoning dimmed (SGR 2).
    for (needle, sgr) in [
        ("Heading Here", 1),
        ("bold words", 1),
        ("42", 38),
        ("Thinking it over.", 2),
    ] {
        let line = line_with(&screen, needle);
        let set = attributes_before(line, needle);
        assert!(set.contains(&sgr), "{needle:?} without SGR {sgr}: {line:?}");
    }
    // Ctrl-D only once the editor shows its prompt again (typed before, it reaches the
    // terminal's line discipline as an end of file nobody reads, and the chat goes on).
    term.wait_for_count("> ", 2).await;
    term.key("C-d");
    assert_eq!(term.wait_exit().await, 0, "{}", term.text());
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn plain_no_color_and_a_dumb_terminal_show_the_raw_markdown() {
    let (_server, url) = serving(stream(REASONING, ANSWER, 5)).await;
    let cases: [(&str, &[&str], &[&str]); 3] = [
        ("--plain", &["--plain"], &[]),
        ("NO_COLOR", &[], &["NO_COLOR=1"]),
        ("TERM=dumb", &[], &["TERM=dumb"]),
    ];
    for (name, extra, env) in cases {
        let Some(term) = run_in_tmux(&url, extra, env, 100).await else {
            return;
        };
        let (text, screen) = (term.text(), term.screen());
        for raw in ["# Heading Here", "**bold words**", "```rust", "|---|---|"] {
            assert!(text.contains(raw), "{name}: {raw:?} missing:\n{text}");
        }
        for (needle, sgr) in [("42", 38), ("Thinking it over.", 2)] {
            let line = line_with(&screen, needle);
            let set = attributes_before(line, needle);
            assert!(
                !set.contains(&sgr),
                "{name}: {needle:?} has SGR {sgr}: {line:?}"
            );
        }
    }
    // The same run rendered: the difference is the styling, not the stream.
    let Some(term) = run_in_tmux(&url, &[], &[], 100).await else {
        return;
    };
    let screen = term.screen();
    let line = line_with(&screen, "42");
    assert!(attributes_before(line, "42").contains(&38), "{line:?}");
}

#[tokio::test]
async fn at_40_columns_a_long_paragraph_wraps_within_40() {
    let words = "every word of this paragraph stays whole while the lines fit the pane";
    let paragraph = format!("{words} {words} {words}.");
    let (_server, url) = serving(stream("", &format!("{paragraph}\n- {words}\n"), 7)).await;
    let Some(term) = run_in_tmux(&url, &[], &[], 40).await else {
        return;
    };
    // capture-pane -J joins lines the terminal wrapped itself: only qore's own newlines
    // keep them under 40.
    let text = term.text();
    let shown: Vec<&str> = (text.lines()).filter(|l| !l.trim().is_empty()).collect();
    for line in &shown {
        assert!(line.chars().count() <= 40, "{line:?} in\n{text}");
    }
    let joined = shown.join(" ");
    assert!(joined.contains(&paragraph), "{joined}");
    assert!(shown.len() >= 6, "{text}");
}

#[tokio::test]
async fn piped_output_is_the_model_text_byte_for_byte() {
    for piece in [1, 3, 5] {
        let (_server, url) = serving(stream(REASONING, ANSWER, piece)).await;
        let args = [
            "run",
            "--url",
            &url,
            "--model",
            MODEL,
            "--ephemeral",
            "Show me.",
        ];
        let json_args: Vec<&str> = args.iter().copied().chain(["--json"]).collect();
        let result = common::qore(&json_args).await.last_json();
        assert_eq!(result["text"], ANSWER, "pieces of {piece}");
        let text = common::qore(&args).await;
        assert_eq!(text.code, Some(0), "{text:?}");
        assert_eq!(text.stdout, text_stdout(ANSWER), "run, pieces of {piece}");

        let chat = Dirs::new().chat(&url, &["--ephemeral"]);
        let chatted = run_with_stdin(chat, "Show me.\n").await;
        assert_eq!(
            chatted.stdout,
            text_stdout(ANSWER),
            "chat, pieces of {piece}"
        );
    }
}
