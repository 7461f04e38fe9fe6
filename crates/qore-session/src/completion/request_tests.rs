//! One rule per table: what `complete` asks for (FIM or chat, which path, what the body
//! carries) and what it gives back (the cleaned text, nothing, or one error), against a
//! loopback server. The Completions and Ollama generate answers are written from the
//! providers' documented formats (no recorded FIM traffic in ../shared/fixtures).

use std::path::Path;

use qore_client::{protocols, CancellationToken, Client, ClientConfig};
use qore_testkit::chat::chat_answer;
use qore_testkit::{ReplayServer, Reply};
use serde_json::json;

use super::{complete, CHAT_SYSTEM};
use crate::completion::clean::Mode;
use crate::completion::context::{CompletionContext, Cursor, OpenFile, Window};
use crate::target::{AgentSettings, Target};
use qore_agents::body_reads::BodyReads;

const FILE: &str = "def add(a, b):\n    return \n\nprint(add(1, 2))\n";

fn infill(text: &str) -> Reply {
    let chunk = json!({"index": 0, "content": text, "stop": false});
    let last = json!({"index": 0, "content": "", "stop": true, "stop_type": "eos"});
    Reply::sse(format!("data: {chunk}\n\ndata: {last}\n\n"))
}

/// An OpenAI Completions stream (`choices[].text`), as DeepSeek's FIM answers.
fn text_completion(text: &str) -> Reply {
    let chunk = json!({"id": "c", "object": "text_completion", "model": "m",
        "choices": [{"index": 0, "text": text, "finish_reason": "stop"}]});
    Reply::sse(format!("data: {chunk}\n\ndata: [DONE]\n\n"))
}

/// An Ollama `/api/generate` NDJSON answer.
fn generate(text: &str) -> Reply {
    let line = json!({"model": "m", "created_at": "t", "response": text, "done": false});
    let last = json!({"model": "m", "created_at": "t", "response": "", "done": true,
        "done_reason": "stop", "prompt_eval_count": 9, "eval_count": 1});
    Reply::new(200, format!("{line}\n{last}\n")).with_header("content-type", "application/x-ndjson")
}

struct Case {
    name: &'static str,
    protocol: &'static str,
    /// Appended to the server's URL for the base URL.
    base: &'static str,
    /// The client's `endpoint` override.
    endpoint: Option<&'static str>,
    /// The agent's body reads the prefix and suffix (not the history).
    fim: bool,
    /// The agent's own system prompt.
    system: Option<&'static str>,
    reply: Reply,
    /// The request path, or `None` when nothing is sent.
    path: Option<&'static str>,
    /// JSON pointers into the sent body and text their value holds.
    sent: &'static [(&'static str, &'static str)],
    /// The inserted text; `Err(words)`: an error whose message holds `words`.
    expected: Result<Option<&'static str>, &'static str>,
}

fn target(url: &str, case: &Case) -> Target {
    let protocol = protocols::by_name(case.protocol).expect("a known protocol");
    let mut config = ClientConfig::new(format!("{url}{}", case.base));
    config.endpoint = case.endpoint.map(str::to_owned);
    let client = Client::new(protocol, config).expect("client");
    let mut target = Target::new(client, "m");
    target.agent = Some(AgentSettings {
        name: "a".into(),
        system: case.system.map(str::to_owned),
        enable_tools: false,
        text_tools: false,
        stream: true,
        reads: match case.fim {
            true => BodyReads {
                fill: true,
                ..BodyReads::default()
            },
            false => BodyReads::PROTOCOL_CHAT,
        },
    });
    target
}

fn fim(name: &'static str, protocol: &'static str, base: &'static str, reply: Reply) -> Case {
    Case {
        name,
        protocol,
        base,
        endpoint: None,
        fim: true,
        system: None,
        reply,
        path: None,
        sent: &[],
        expected: Ok(Some("a + b")),
    }
}

fn chat(name: &'static str, reply: Reply) -> Case {
    Case {
        fim: false,
        path: Some("/v1/chat/completions"),
        ..fim(name, "openai-chat", "/v1", reply)
    }
}

fn cases() -> Vec<Case> {
    let fenced = "Sure:\n```python\na + b\n```\nThat adds them.";
    let chat_only = "This is a chat model and not supported in the v1/completions endpoint.";
    vec![
        Case {
            path: Some("/infill"),
            sent: &[
                ("/input_prefix", "    return "),
                ("/input_extra/0/filename", "util.py"),
                ("/input_extra/0/text", "return a - b"),
            ],
            ..fim(
                "llama.cpp: /infill with the open files",
                "llamacpp",
                "/v1",
                infill("a + b"),
            )
        },
        Case {
            path: Some("/v1/completions"),
            sent: &[("/prompt", "    return "), ("/suffix", "print(add(1, 2))")],
            ..fim(
                "OpenAI-compatible: /completions with suffix",
                "openai-chat",
                "/v1",
                text_completion("a + b"),
            )
        },
        Case {
            path: Some("/api/generate"),
            sent: &[("/prompt", "    return "), ("/suffix", "print(add(1, 2))")],
            ..fim(
                "Ollama: /api/generate with suffix",
                "ollama",
                "",
                generate("a + b"),
            )
        },
        Case {
            path: Some("/v1/fim/completions"),
            sent: &[("/prompt", "    return "), ("/suffix", "print(add(1, 2))")],
            ..fim(
                "Mistral: /fim/completions",
                "mistral",
                "/v1",
                chat_answer("a + b"),
            )
        },
        Case {
            sent: &[
                ("/messages/0/content", "You are a code completion engine."),
                ("/messages/1/content", "<file path=\"util.py\">"),
                ("/messages/1/content", "<cursor>"),
            ],
            ..chat(
                "a chat agent without a system prompt gets the built-in one",
                chat_answer(fenced),
            )
        },
        Case {
            system: Some("Be terse."),
            sent: &[("/messages/0/content", "Be terse.")],
            ..chat(
                "a chat agent keeps its own system prompt",
                chat_answer("a + b"),
            )
        },
        Case {
            expected: Ok(None),
            ..chat(
                "an answer of blanks is nothing",
                chat_answer("```\n  \n```"),
            )
        },
        Case {
            expected: Err("boom"),
            ..chat(
                "a provider error is the error",
                Reply::json(400, r#"{"error":{"message":"boom"}}"#),
            )
        },
        Case {
            expected: Err("speaks openai-responses, which has no fill-in-the-middle endpoint"),
            ..fim(
                "a FIM agent on a chat-only protocol, nothing sent",
                "openai-responses",
                "/v1",
                chat_answer("x"),
            )
        },
        Case {
            endpoint: Some("/v1/chat/completions"),
            expected: Err("is a chat endpoint"),
            ..fim(
                "a FIM agent pointed at a chat endpoint, nothing sent",
                "openai-chat",
                "",
                chat_answer("x"),
            )
        },
        Case {
            path: Some("/infill"),
            expected: Err("its model \"m\" cannot fill in the middle"),
            ..fim(
                "a model without FIM tokens behind /infill",
                "llamacpp",
                "/v1",
                Reply::json(
                    501,
                    r#"{"error":{"code":501,"message":"Infill is not supported by this model: prefix token is missing. ","type":"not_supported_error"}}"#,
                ),
            )
        },
        Case {
            path: Some("/v1/completions"),
            expected: Err("agent \"a\" is a code-completion"),
            ..fim(
                "a chat model behind /completions",
                "openai-chat",
                "/v1",
                Reply::json(
                    404,
                    format!(
                        r#"{{"error":{{"message":"{chat_only}","type":"invalid_request_error"}}}}"#
                    ),
                ),
            )
        },
    ]
}

#[tokio::test]
async fn complete_asks_the_right_endpoint_and_cleans_the_reply() {
    let cursor = Cursor {
        line: 1,
        character: 11,
    };
    let ctx = CompletionContext::new(FILE, cursor, &Window::default());
    let extra = [OpenFile {
        path: "util.py".into(),
        text: "def sub(a, b):\n    return a - b\n".into(),
    }];
    for case in cases() {
        let server = ReplayServer::start(vec![case.reply.clone()])
            .await
            .expect("server");
        let target = target(&server.url(), &case);
        let got = complete(
            &target,
            &ctx,
            Path::new("add.py"),
            Mode::Multi,
            &extra,
            CancellationToken::new(),
        )
        .await;
        let requests = server.requests();
        let paths: Vec<&str> = requests.iter().map(|r| r.path.as_str()).collect();
        assert_eq!(paths, Vec::from_iter(case.path), "{}", case.name);
        for (pointer, text) in case.sent {
            let body = requests[0].json().expect("a JSON body");
            let value = body.pointer(pointer).and_then(|v| v.as_str());
            assert!(
                value.is_some_and(|v| v.contains(text)),
                "{}: {pointer} in {body}",
                case.name
            );
        }
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

#[test]
fn the_built_in_instruction_forbids_prose_and_fences() {
    for words in ["<cursor>", "no prose", "no Markdown code fences"] {
        assert!(CHAT_SYSTEM.contains(words), "{words}");
    }
}
