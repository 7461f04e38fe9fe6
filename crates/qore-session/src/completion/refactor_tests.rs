//! What `refactor` sends (system prompt, selection markers, instruction, no tools) and what it
//! gives back (the cleaned text fitted to the range, or one error), against a loopback
//! server; and the clamping of a selection.

use std::path::Path;

use qore_client::{protocols, CancellationToken, Client, ClientConfig};
use qore_testkit::chat::{chat_answer, sent_messages};
use qore_testkit::{ReplayServer, Reply};

use super::{clamped, refactor, Refactored, BUILT_IN_SYSTEM};
use crate::completion::context::{Cursor, Range};
use crate::target::{AgentSettings, Target};
use qore_agents::body_reads::BodyReads;

const BOOM: &str = r#"{"error":{"message":"boom"}}"#;
const FILE: &str = "def add(a, b):\n    return a+b\n\nprint(add(1, 2))\n";

fn at(line: u32, character: u32) -> Cursor {
    Cursor { line, character }
}

fn range(from: (u32, u32), to: (u32, u32)) -> Range {
    Range {
        start: at(from.0, from.1),
        end: at(to.0, to.1),
    }
}

/// What a chat body reads.
const CHATS: BodyReads = BodyReads::PROTOCOL_CHAT;
/// What a fill-in-the-middle body that reads no history reads.
const FILLS: BodyReads = BodyReads {
    fill: true,
    history: false,
    opaque: false,
};

/// A target on `url`; `agent`: (system prompt, what its body reads) of an agent, `None`: none.
fn target(url: &str, agent: Option<(Option<&str>, BodyReads)>) -> Target {
    let protocol = protocols::by_name("openai-chat").expect("a known protocol");
    let client = Client::new(protocol, ClientConfig::new(format!("{url}/v1"))).expect("client");
    let mut target = Target::new(client, "m");
    target.agent = agent.map(|(system, reads)| AgentSettings {
        name: "fixer".into(),
        system: system.map(str::to_owned),
        enable_tools: false,
        text_tools: false,
        stream: true,
        reads,
    });
    target
}

struct Case {
    name: &'static str,
    agent: Option<(Option<&'static str>, BodyReads)>,
    file: &'static str,
    selection: Range,
    reply: Reply,
    /// The system message sent; `None`: nothing sent.
    system: Option<&'static str>,
    /// The new text and its range; `Err(words)`: an error whose message holds `words`.
    expected: Result<(&'static str, Range), &'static str>,
}

impl Case {
    /// No agent, [`FILE`], its second line selected, the built-in system prompt sent.
    fn plain(reply: Reply, expected: Result<(&'static str, Range), &'static str>) -> Case {
        Case {
            name: "",
            agent: None,
            file: FILE,
            selection: range((1, 0), (1, 14)),
            reply,
            system: Some(BUILT_IN_SYSTEM),
            expected,
        }
    }
}

#[tokio::test]
async fn refactor_sends_the_selection_and_fits_the_cleaned_reply() {
    let fenced = "Here is the refactored code:\n```python\nreturn a + b\n```\nIt adds spaces.";
    let spaced = Ok(("    return a + b", range((1, 0), (1, 14))));
    let (crlf, whole) = ("x = 1\r\ny = 3\r\n", range((0, 0), (2, 0)));
    let cases = vec![
        Case {
            name: "the agent's system prompt; a fenced reply re-indented from the line start",
            agent: Some((Some("You refactor."), CHATS)),
            selection: range((1, 4), (1, 14)),
            system: Some("You refactor."),
            ..Case::plain(chat_answer(fenced), spaced)
        },
        Case {
            name: "no agent: the built-in system prompt; a backwards selection is read forwards",
            selection: range((1, 14), (1, 0)),
            ..Case::plain(chat_answer("return a + b"), spaced)
        },
        Case {
            name: "after code on its line: no indentation on the first line",
            selection: range((1, 11), (1, 14)),
            ..Case::plain(chat_answer("a + b"), Ok(("a + b", range((1, 11), (1, 14)))))
        },
        Case {
            name: "whole lines keep their last line break, in the file's line ends",
            file: "x = 1\r\ny = 2\r\n",
            selection: whole,
            ..Case::plain(chat_answer("x = 1\ny = 3\n"), Ok((crlf, whole)))
        },
        Case {
            name: "an empty selection inserts at the cursor",
            selection: range((2, 0), (2, 0)),
            ..Case::plain(chat_answer("# sum"), Ok(("# sum", range((2, 0), (2, 0)))))
        },
        Case {
            name: "a reply with no code is an error",
            ..Case::plain(chat_answer("```\n\n```"), Err("the model returned no code"))
        },
        Case {
            name: "a provider error keeps its message",
            ..Case::plain(Reply::json(400, BOOM), Err("boom"))
        },
        Case {
            name: "a fill-in-the-middle body is refused, nothing sent",
            agent: Some((None, FILLS)),
            system: None,
            ..Case::plain(chat_answer("unused"), Err("code-completion agent"))
        },
    ];
    for case in cases {
        let server = ReplayServer::start(vec![case.reply]).await.expect("server");
        let target = target(&server.url(), case.agent);
        let got = refactor(
            &target,
            case.file,
            Path::new("add.py"),
            case.selection,
            "add spaces around +",
            CancellationToken::new(),
        )
        .await;
        let requests = server.requests();
        assert_eq!(
            requests.len(),
            usize::from(case.system.is_some()),
            "{}",
            case.name
        );
        if let (Some(system), Some(request)) = (case.system, requests.first()) {
            let body = request.json().expect("a JSON body");
            assert!(body.get("tools").is_none(), "{}: {body}", case.name);
            let sent = sent_messages(request);
            let roles: Vec<&str> = sent.iter().map(|(role, _)| role.as_str()).collect();
            assert_eq!(roles, ["system", "user"], "{}", case.name);
            assert_eq!(sent[0].1, system, "{}", case.name);
            let user = &sent[1].1;
            let wanted = ["File: add.py", "add spaces around +", "<selection_start>"];
            assert!(
                wanted.iter().all(|w| user.contains(w)),
                "{}: {user}",
                case.name
            );
        }
        match (got, case.expected) {
            (Ok(got), Ok((text, range))) => {
                assert_eq!(
                    got,
                    Refactored {
                        range,
                        text: text.into()
                    },
                    "{}",
                    case.name
                )
            }
            (Err(error), Err(words)) => {
                assert!(error.message.contains(words), "{}: {error:?}", case.name)
            }
            (got, want) => panic!("{}: got {got:?}, want {want:?}", case.name),
        }
    }
}

#[tokio::test]
async fn a_cancelled_refactor_is_an_error() {
    let server = ReplayServer::start(vec![chat_answer("x")])
        .await
        .expect("server");
    let cancel = CancellationToken::new();
    cancel.cancel();
    let target = target(&server.url(), None);
    let got = refactor(
        &target,
        FILE,
        Path::new("a.py"),
        range((0, 0), (0, 3)),
        "x",
        cancel,
    );
    let error = got.await.expect_err("cancelled");
    assert!(error.message.contains("cancelled"), "{error:?}");
}

#[test]
fn a_selection_is_clamped_to_the_text_and_read_forwards() {
    // (selection, clamped): lines from 0, UTF-16 columns.
    let text = "ab\nc😀d\n";
    let cases = [
        (range((0, 1), (0, 2)), range((0, 1), (0, 2))),
        (range((0, 9), (1, 99)), range((0, 2), (1, 4))),
        (range((1, 2), (1, 3)), range((1, 1), (1, 3))),
        (range((7, 0), (0, 0)), range((0, 0), (2, 0))),
        (range((1, 4), (1, 1)), range((1, 1), (1, 4))),
    ];
    for (selection, want) in cases {
        assert_eq!(clamped(text, selection), want, "{selection:?}");
    }
}
