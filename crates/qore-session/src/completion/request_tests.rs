//! One rule per table: what `complete` asks for (FIM or chat, which path) and what it gives
//! back (the cleaned text, nothing, or one error), against a loopback server.

use std::path::Path;

use qore_client::{protocols, CancellationToken, Client, ClientConfig};
use qore_testkit::chat::chat_answer;
use qore_testkit::{ReplayServer, Reply};
use serde_json::json;

use super::complete;
use crate::completion::clean::Mode;
use crate::completion::context::{CompletionContext, Cursor, Window};
use crate::target::{AgentSettings, Target};

const FILE: &str = "def add(a, b):\n    return \n\nprint(add(1, 2))\n";

fn infill(text: &str) -> Reply {
    let chunk = json!({"index": 0, "content": text, "stop": false});
    let last = json!({"index": 0, "content": "", "stop": true, "stop_type": "eos"});
    Reply::sse(format!("data: {chunk}\n\ndata: {last}\n\n"))
}

fn target(url: &str, protocol: &str, fim: bool) -> Target {
    let protocol = protocols::by_name(protocol).expect("a known protocol");
    let client = Client::new(protocol, ClientConfig::new(format!("{url}/v1"))).expect("client");
    let mut target = Target::new(client, "m");
    target.agent = Some(AgentSettings {
        name: "a".into(),
        system: None,
        enable_tools: false,
        text_tools: false,
        stream: true,
        context_window: None,
        completion: fim,
    });
    target
}

struct Case {
    name: &'static str,
    protocol: &'static str,
    fim: bool,
    reply: Reply,
    /// The request path, or `None` when nothing is sent.
    path: Option<&'static str>,
    /// The inserted text; `Err(words)`: an error whose message holds `words`.
    expected: Result<Option<&'static str>, &'static str>,
}

#[tokio::test]
async fn complete_asks_the_right_endpoint_and_cleans_the_reply() {
    let fenced = "Sure:\n```python\na + b\n```\nThat adds them.";
    let cases = vec![
        Case {
            name: "a FIM agent asks /infill",
            protocol: "llamacpp",
            fim: true,
            reply: infill("a + b"),
            path: Some("/infill"),
            expected: Ok(Some("a + b")),
        },
        Case {
            name: "a chat agent's fenced answer is cleaned",
            protocol: "openai-chat",
            fim: false,
            reply: chat_answer(fenced),
            path: Some("/v1/chat/completions"),
            expected: Ok(Some("a + b")),
        },
        Case {
            name: "an answer of blanks is nothing",
            protocol: "openai-chat",
            fim: false,
            reply: chat_answer("```\n  \n```"),
            path: Some("/v1/chat/completions"),
            expected: Ok(None),
        },
        Case {
            name: "a FIM agent on a chat-only protocol says so, sending nothing",
            protocol: "openai-chat",
            fim: true,
            reply: chat_answer("unused"),
            path: None,
            expected: Err("no fill-in-the-middle endpoint"),
        },
        Case {
            name: "a provider error is the error",
            protocol: "openai-chat",
            fim: false,
            reply: Reply::json(400, r#"{"error":{"message":"boom"}}"#),
            path: Some("/v1/chat/completions"),
            expected: Err("boom"),
        },
    ];
    let cursor = Cursor {
        line: 1,
        character: 11,
    };
    let ctx = CompletionContext::new(FILE, cursor, &Window::default());
    for case in cases {
        let server = ReplayServer::start(vec![case.reply]).await.expect("server");
        let target = target(&server.url(), case.protocol, case.fim);
        let got = complete(
            &target,
            &ctx,
            Path::new("add.py"),
            Mode::Multi,
            &[],
            CancellationToken::new(),
        )
        .await;
        let paths: Vec<String> = server.requests().into_iter().map(|r| r.path).collect();
        let want: Vec<String> = case.path.iter().map(|p| p.to_string()).collect();
        assert_eq!(paths, want, "{}", case.name);
        match (got, case.expected) {
            (Ok(got), Ok(want)) => {
                assert_eq!(got.map(|c| c.text).as_deref(), want, "{}", case.name)
            }
            (Err(error), Err(words)) => {
                assert!(error.message.contains(words), "{}: {error:?}", case.name)
            }
            (got, want) => panic!("{}: got {got:?}, want {want:?}", case.name),
        }
    }
}
