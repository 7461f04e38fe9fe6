//! How a stream starts and ends: `message_start` waiting for the upstream's first report,
//! failed and cancelled turns, arguments that came whole and invalid.

use super::*;

#[test]
fn a_failed_turn_ends_with_an_error_event_and_a_cancelled_one_with_nothing() {
    let events = vec![usage(1, 1), text("partial")];
    let error = ErrorInfo::provider("Overloaded").with_detail(ProviderDetail {
        status: Some(529),
        error_type: Some("overloaded_error".into()),
        body: None,
    });
    let failed = StreamOutcome::Failed {
        error,
        usage: Usage::default(),
    };
    let bytes = encode(&events, &failed);
    let all = frames(&bytes);
    let (event, data) = all.last().unwrap();
    assert_eq!(event, "error");
    assert_eq!(
        *data,
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    );
    let (decoded, _) = client_decode(&bytes);
    match fold(&decoded) {
        StreamOutcome::Failed { error, .. } => {
            assert_eq!(
                error.provider.unwrap().error_type.as_deref(),
                Some("overloaded_error")
            )
        }
        other => panic!("{other:?}"),
    }

    // The server's own error wins over the upstream's.
    let mut encoder = MessagesEncoder::new(&meta());
    let mut out = Vec::new();
    let limit = ServeError::new(crate::ErrorKind::RateLimit, "budget spent");
    encoder.finish(&failed, Some(&limit), &mut out);
    assert_eq!(frames(&out)[0].1["error"]["type"], "rate_limit_error");

    let cancelled = StreamOutcome::Cancelled {
        usage: Usage::default(),
    };
    let bytes = encode(&events, &cancelled);
    assert!(!frames(&bytes)
        .iter()
        .any(|(e, _)| e == "message_stop" || e == "error"));
}

#[test]
fn invalid_arguments_given_only_at_the_end_are_sent_raw() {
    let events = vec![
        call("t", "add"),
        ResponseEvent::ToolCallEnd {
            id: "t".into(),
            input: ToolCallInput::Invalid(ToolArgsError {
                raw: "{oops".into(),
                message: "bad".into(),
            }),
        },
    ];
    let outcome = StreamOutcome::Finished {
        message: Message::new(Role::Assistant, vec![]),
        stop_reason: None,
        usage: Usage::default(),
    };
    let bytes = encode(&events, &outcome);
    let (decoded, _) = client_decode(&bytes);
    match fold(&decoded) {
        StreamOutcome::Finished { message, .. } => assert!(matches!(
            &message.blocks[0],
            ContentBlock::ToolUse { raw_input: Some(raw), .. } if raw == "{oops"
        )),
        other => panic!("{other:?}"),
    }
}

#[test]
fn message_start_waits_for_the_upstreams_first_report() {
    let mut encoder = MessagesEncoder::new(&meta());
    let mut out = Vec::new();
    encoder.start(&mut out);
    let start = ResponseEvent::MessageStart {
        id: Some("upstream".into()),
        model: Some("gpt-x".into()),
    };
    encoder.event(&start, &mut out);
    assert!(out.is_empty());
    encoder.event(&usage(33, 1), &mut out);
    let all = frames(&out);
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].1["message"]["usage"]["input_tokens"], 33);
    assert_eq!(all[0].1["message"]["model"], "claude-x");
}
