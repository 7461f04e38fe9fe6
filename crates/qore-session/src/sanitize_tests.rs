use std::borrow::Cow;

use qore_core::{ContentBlock, History, Message, Role};
use serde_json::json;

use super::{sanitize, Wire};

fn call(id: &str) -> ContentBlock {
    ContentBlock::tool_use(id, "read_file", json!({"path": "a"}))
}

fn result(id: &str) -> ContentBlock {
    ContentBlock::tool_result(id, "ok", false)
}

fn thinking(signature: Option<&str>) -> ContentBlock {
    ContentBlock::Thinking {
        text: "hmm".into(),
        signature: signature.map(Into::into),
    }
}

fn text(t: &str) -> ContentBlock {
    ContentBlock::text(t)
}

fn user(blocks: Vec<ContentBlock>) -> Message {
    Message::new(Role::User, blocks)
}

fn assistant(blocks: Vec<ContentBlock>) -> Message {
    Message::new(Role::Assistant, blocks)
}

const ANTHROPIC: Wire = Wire {
    thinking_needs_signature: true,
};
const OPENAI: Wire = Wire {
    thinking_needs_signature: false,
};

#[test]
fn history_is_sent_well_formed() {
    // (case, wire, history, what is sent; None: the history itself, borrowed)
    type Case = (&'static str, Wire, Vec<Message>, Option<Vec<Message>>);
    let cases: Vec<Case> = vec![
        (
            "a well-formed history is borrowed as is",
            ANTHROPIC,
            vec![
                user(vec![text("hi")]),
                assistant(vec![thinking(Some("sig")), call("c1")]),
                user(vec![result("c1")]),
                assistant(vec![text("done")]),
            ],
            None,
        ),
        (
            "a call without its result is dropped, its text kept",
            OPENAI,
            vec![
                user(vec![text("hi")]),
                assistant(vec![text("let me look"), call("c1")]),
                user(vec![text("next")]),
            ],
            Some(vec![
                user(vec![text("hi")]),
                assistant(vec![text("let me look")]),
                user(vec![text("next")]),
            ]),
        ),
        (
            "of two calls, only the answered one stays",
            OPENAI,
            vec![
                user(vec![text("hi")]),
                assistant(vec![call("c1"), call("c2")]),
                user(vec![result("c2")]),
            ],
            Some(vec![
                user(vec![text("hi")]),
                assistant(vec![call("c2")]),
                user(vec![result("c2")]),
            ]),
        ),
        (
            "a lone call's message goes, and the user messages around it merge",
            OPENAI,
            vec![
                user(vec![text("one")]),
                assistant(vec![call("c1")]),
                user(vec![text("two")]),
            ],
            Some(vec![user(vec![text("one"), text("two")])]),
        ),
        (
            "a result answering no call is dropped",
            OPENAI,
            vec![
                user(vec![text("hi")]),
                assistant(vec![text("hello")]),
                user(vec![result("c9"), text("and?")]),
            ],
            Some(vec![
                user(vec![text("hi")]),
                assistant(vec![text("hello")]),
                user(vec![text("and?")]),
            ]),
        ),
        (
            "unsigned thinking is dropped where the wire needs a signature",
            ANTHROPIC,
            vec![
                user(vec![text("hi")]),
                assistant(vec![thinking(None), thinking(Some("s")), text("a")]),
            ],
            Some(vec![
                user(vec![text("hi")]),
                assistant(vec![thinking(Some("s")), text("a")]),
            ]),
        ),
        (
            "unsigned thinking stays where the wire does not need one",
            OPENAI,
            vec![
                user(vec![text("hi")]),
                assistant(vec![thinking(None), text("a")]),
            ],
            None,
        ),
        (
            "a failed turn's user message merges with the next one",
            OPENAI,
            vec![
                user(vec![text("first")]),
                assistant(vec![text("answer")]),
                user(vec![text("failed")]),
                user(vec![text("again")]),
            ],
            Some(vec![
                user(vec![text("first")]),
                assistant(vec![text("answer")]),
                user(vec![text("failed"), text("again")]),
            ]),
        ),
        (
            "a failed turn's last results and the next message merge, results first",
            OPENAI,
            vec![
                user(vec![text("go")]),
                assistant(vec![call("c1")]),
                user(vec![result("c1")]),
                user(vec![text("again")]),
            ],
            Some(vec![
                user(vec![text("go")]),
                assistant(vec![call("c1")]),
                user(vec![result("c1"), text("again")]),
            ]),
        ),
        (
            "the system message is kept apart",
            OPENAI,
            vec![Message::system("rules"), user(vec![text("hi")])],
            None,
        ),
    ];
    for (case, wire, messages, expected) in cases {
        let history = History::from(messages.clone());
        let sent = sanitize(&history, wire);
        match expected {
            None => {
                assert!(matches!(sent, Cow::Borrowed(_)), "{case}: copied");
                assert_eq!(sent.messages(), &messages[..], "{case}");
            }
            Some(expected) => assert_eq!(sent.messages(), &expected[..], "{case}"),
        }
    }
}

#[test]
fn the_wire_needs_signatures_on_anthropic_only() {
    for name in qore_client::protocols::NAMES {
        let Some(protocol) = qore_client::protocols::by_name(name) else {
            panic!("{name} is listed but has no protocol");
        };
        let want = match *name {
            "anthropic" => ANTHROPIC,
            _ => OPENAI,
        };
        assert_eq!(Wire::of(&*protocol), want, "{name}");
    }
}

#[test]
fn a_turn_keeps_no_unanswered_call_at_its_end() {
    // (case, replies, kept)
    let cases: Vec<(&str, Vec<Message>, Vec<Message>)> = vec![
        (
            "calls made while no tools were offered go, the text stays",
            vec![assistant(vec![text("looking"), call("c1")])],
            vec![assistant(vec![text("looking")])],
        ),
        (
            "answered calls before the final answer stay",
            vec![
                assistant(vec![call("c1")]),
                user(vec![result("c1")]),
                assistant(vec![text("done")]),
            ],
            vec![
                assistant(vec![call("c1")]),
                user(vec![result("c1")]),
                assistant(vec![text("done")]),
            ],
        ),
        (
            "a turn ending in results is left alone",
            vec![assistant(vec![call("c1")]), user(vec![result("c1")])],
            vec![assistant(vec![call("c1")]), user(vec![result("c1")])],
        ),
    ];
    for (case, mut replies, kept) in cases {
        super::settle_turn(&mut replies);
        assert_eq!(replies, kept, "{case}");
    }
}
