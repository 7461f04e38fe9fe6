//! An API key never leaves `qore` on stdout or stderr, in text or `--json` mode, not even
//! when the server's error answer echoes the credential it refused: the real binary runs
//! against loopback servers that answer 401 with the canary key in the message and body.

mod common;

use common::{command, run_cmd, Run};
use qore_testkit::{ReplayServer, Reply};

const CANARY: &str = "sk-canary-7f3a9c1e5b";

/// A 401 answer quoting the credential, as some servers do (`Bearer <key>` and the bare key).
fn echoing_401() -> Reply {
    let body = format!(
        r#"{{"error":{{"message":"Incorrect API key provided: Bearer {CANARY}","type":"invalid_request_error","code":"{CANARY}"}},"type":"error"}}"#
    );
    Reply::json(401, body)
}

/// Runs `qore ARGS` with the canary in `QORE_TEST_KEY`, against a server answering every
/// request with [`echoing_401`]; checks that the key was sent and that it shows nowhere.
async fn run_against_echo(args: &[&str], credential_header: &str) -> Run {
    let server = ReplayServer::start_repeating(echoing_401())
        .await
        .expect("server starts");
    let url = format!("{}/v1", server.url());
    let mut full: Vec<&str> = args.to_vec();
    full.extend(["--url", &url, "--api-key-env", "QORE_TEST_KEY"]);
    let mut cmd = command(&full);
    cmd.env("QORE_TEST_KEY", CANARY);
    let run = run_cmd(cmd).await;
    let requests = server.requests();
    assert!(!requests.is_empty(), "{args:?}: nothing was sent; {run:?}");
    let sent = requests[0].header(credential_header).unwrap_or_default();
    assert!(sent.contains(CANARY), "{args:?}: the key was not sent");
    assert_eq!(run.code, Some(1), "{args:?}: {run:?}");
    for (stream, text) in [("stdout", &run.stdout), ("stderr", &run.stderr)] {
        assert!(
            !text.contains(CANARY),
            "{args:?}: the key is on {stream}: {text}"
        );
    }
    run
}

#[tokio::test]
async fn an_echoed_key_is_redacted_in_every_output_mode() {
    // (arguments before --url, the header that carries the key)
    let cases: &[(&[&str], &str)] = &[
        (&["run", "--model", "m", "hi"], "authorization"),
        (&["run", "--model", "m", "--json", "hi"], "authorization"),
        (
            &["run", "--model", "m", "--no-stream", "--json", "hi"],
            "authorization",
        ),
        (
            &[
                "run",
                "--protocol",
                "anthropic",
                "--model",
                "m",
                "--json",
                "hi",
            ],
            "x-api-key",
        ),
        (
            &[
                "run",
                "--protocol",
                "gemini",
                "--model",
                "m",
                "--json",
                "hi",
            ],
            "x-goog-api-key",
        ),
        (&["models", "--json"], "authorization"),
        (&["models"], "authorization"),
    ];
    for (args, header) in cases {
        let run = run_against_echo(args, header).await;
        // The rest of the provider's answer still comes through, marked where the key was.
        let all = format!("{}{}", run.stdout, run.stderr);
        assert!(all.contains("[redacted]"), "{args:?}: {run:?}");
        assert!(
            all.contains("Incorrect API key provided"),
            "{args:?}: {run:?}"
        );
    }
}
