//! What a server's `GET /props` says sets the rules of requests to it, whatever its
//! provider is called: a llama.cpp server probed (any name, any address) whose default is no
//! output cap gets requests capped, its context size and tool support are read; a server not
//! probed, or whose wire's servers do not answer `/props`, is not asked. The `/props` bodies are shaped as llama.cpp's
//! (`default_generation_settings.params.n_predict`, `n_ctx`, `chat_template_caps`).

use std::sync::Arc;

use qore_agents::config::Config;
use qore_client::local::DEFAULT_MAX_TOKENS;
use qore_session::target::{reach, EndpointSpec, Notes};
use qore_session::TargetSpec;
use qore_testkit::{ReplayServer, Reply};
use serde_json::json;

fn props(n_predict: i64) -> Reply {
    let body = json!({
        "default_generation_settings": {"n_ctx": 2048, "params": {"n_predict": n_predict}},
        "chat_template_caps": {"supports_tools": false},
    });
    Reply::json(200, body.to_string())
}

/// A config dir whose provider `llamacpp` (llama.cpp's wire) is at `url`.
fn config_dir(url: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temp dir");
    std::fs::create_dir_all(dir.path().join("providers")).expect("providers dir");
    let text = format!("name = \"llamacpp\"\nprotocol = \"llamacpp\"\nurl = \"{url}/v1\"\n");
    std::fs::write(dir.path().join("providers/llamacpp.toml"), text).expect("a provider file");
    dir
}

#[tokio::test]
async fn a_servers_props_set_its_requests_rules() {
    struct Case {
        what: &'static str,
        agent: Option<&'static str>,
        protocol: &'static str,
        n_predict: i64,
        probe: bool,
        /// (the requests' cap, the context window, the tool calling, `/props` asked)
        rules: (Option<u32>, Option<u64>, Option<bool>, bool),
    }
    let cases = [
        Case {
            what: "an agent at a llama.cpp server without a default cap",
            agent: Some("llamacpp-chat"),
            protocol: "llamacpp",
            n_predict: -1,
            probe: true,
            rules: (Some(DEFAULT_MAX_TOKENS), Some(2048), Some(false), true),
        },
        Case {
            what: "an agent at a llama.cpp server with its own cap",
            agent: Some("llamacpp-chat"),
            protocol: "llamacpp",
            n_predict: 256,
            probe: true,
            rules: (None, Some(2048), Some(false), true),
        },
        Case {
            what: "an endpoint speaking llama.cpp's wire",
            agent: None,
            protocol: "llamacpp",
            n_predict: -1,
            probe: true,
            // The window too, with no agent: the status line and compression go by it.
            rules: (Some(DEFAULT_MAX_TOKENS), Some(2048), Some(false), true),
        },
        Case {
            what: "an endpoint whose wire's servers do not answer /props",
            agent: None,
            protocol: "openai-chat",
            n_predict: -1,
            probe: true,
            rules: (None, None, None, false),
        },
        Case {
            what: "a llama.cpp server not probed",
            agent: Some("llamacpp-chat"),
            protocol: "llamacpp",
            n_predict: -1,
            probe: false,
            rules: (None, None, None, false),
        },
    ];
    let notes: Notes = Arc::new(|_: &str| {});
    for case in cases {
        let server = ReplayServer::start(vec![props(case.n_predict)])
            .await
            .expect("a loopback server");
        let dir = config_dir(&server.url());
        let config = Config::load(Some(dir.path()));
        let spec = TargetSpec {
            agent: case.agent.map(str::to_owned),
            endpoint: EndpointSpec {
                protocol: case.protocol.to_owned(),
                url: Some(format!("{}/v1", server.url())),
                ..EndpointSpec::default()
            },
            model: Some("m".to_owned()),
            probe_tools: case.probe,
            ..TargetSpec::default()
        };
        let target = reach(&config, &spec, &notes).await.expect(case.what);
        let context = target.context_window;
        let asked = (server.requests().iter()).any(|r| r.path == "/props");
        assert_eq!(
            (
                target.options.max_tokens,
                context,
                target.tool_calling,
                asked
            ),
            case.rules,
            "{}",
            case.what
        );
    }
}
