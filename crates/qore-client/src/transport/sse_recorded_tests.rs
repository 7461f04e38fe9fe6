//! Recorded streams of the shared fixtures framed at every split, with their own line ends
//! and with CRLF and CR.

use super::*;
use std::path::PathBuf;

fn fixtures_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("QORE_FIXTURES") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fixtures"),
    };
    if dir.is_dir() {
        return Some(dir);
    }
    if std::env::var_os("CI").is_some() {
        panic!("fixtures directory {} is missing", dir.display());
    }
    eprintln!("skipping: fixtures directory {} is missing", dir.display());
    None
}

/// The SSE body (`then.body`) of every document of a recorded cassette.
fn cassette_bodies(dir: &std::path::Path, rel: &str) -> Vec<String> {
    let path = dir.join("rig-cassettes").join(rel);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let mut bodies = Vec::new();
    for doc in serde_norway::Deserializer::from_str(&text) {
        let value: serde_norway::Value = serde::Deserialize::deserialize(doc).unwrap();
        if let Some(body) = value["then"]["body"].as_str() {
            bodies.push(body.to_owned());
        }
    }
    assert!(!bodies.is_empty(), "{rel}: no then.body");
    bodies
}

#[test]
fn recorded_streams_frame_identically_at_every_split() {
    let Some(dir) = fixtures_dir() else { return };
    let cassettes = [
        "openai/streaming_grammar_chat/parallel_tool_calls.yaml",
        "anthropic/streaming/streaming_smoke.yaml",
        "llamacpp/streaming_tools/raw_stream_emits_required_zero_arg_tool_call.yaml",
    ];
    for rel in cassettes {
        for body in cassette_bodies(&dir, rel) {
            check_every_split(rel, &body);
        }
    }
    // Shape sanity, so the reference is not trivially agreeing on nothing.
    let openai = &cassette_bodies(&dir, cassettes[0])[0];
    assert_eq!(reference(openai).last().unwrap().1, "[DONE]");
    let anthropic = &cassette_bodies(&dir, cassettes[1])[0];
    let frames = reference(anthropic);
    assert_eq!(frames[0].0.as_deref(), Some("message_start"));
    assert!(frames.iter().all(|f| f.0.is_some()));
}

#[test]
fn recorded_streams_with_crlf_and_cr_line_ends() {
    let Some(dir) = fixtures_dir() else { return };
    for rel in [
        "anthropic/streaming/streaming_smoke.yaml",
        "openai/streaming_grammar_chat/parallel_tool_calls.yaml",
    ] {
        let body = &cassette_bodies(&dir, rel)[0];
        let lf = reference(body);
        let crlf = body.replace('\n', "\r\n");
        let cr = body.replace('\n', "\r");
        assert_eq!(reference(&crlf), lf);
        assert_eq!(reference(&cr), lf);
        check_every_split(&format!("{rel} (CRLF)"), &crlf);
        check_every_split(&format!("{rel} (CR)"), &cr);
    }
}
