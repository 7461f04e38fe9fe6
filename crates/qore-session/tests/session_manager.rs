//! The manager is the one place an agent becomes a client: a named agent and a roster's
//! first agent are reached from a real config dir and answer through a loopback server.

use qore_agents::config::Config;
use qore_client::CancellationToken;
use qore_core::Message;
use qore_session::{Roster, SessionManager, SessionSetup, TargetSpec, TurnOutcome};
use qore_store::NewSession;
use qore_testkit::chat::chat_answer;
use qore_testkit::ReplayServer;

fn config_dir(server: &ReplayServer, pipelines: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let files = [
        (
            "providers/loop.toml",
            format!(
                "name = \"loop\"\nprotocol = \"openai-chat\"\nurl = \"{}/v1\"\n",
                server.url()
            ),
        ),
        (
            "agents/brief.toml",
            "name = \"brief\"\nextends = \"openai-chat\"\nprovider = \"loop\"\nmodel = \"tiny\"\n\
             system_prompt = \"Be brief.\"\n[body]\ntemperature = 0.125\n"
                .to_owned(),
        ),
        ("pipelines.toml", pipelines.to_owned()),
    ];
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

#[tokio::test]
async fn a_rosters_first_agent_is_reached_like_a_named_one() {
    let server = ReplayServer::start_repeating(chat_answer("Short."))
        .await
        .unwrap();
    let dir = config_dir(&server, "compression = [\"brief\"]\n");
    let config = Config::load(Some(dir.path()));
    let manager = SessionManager::new(None, config, qore_session::traced_notes());
    let spec = TargetSpec {
        project: Some(dir.path().to_owned()),
        ..TargetSpec::default()
    };
    let by_roster = manager
        .reach_roster(Roster::Compression, &spec)
        .await
        .unwrap();
    let by_name = TargetSpec {
        agent: Some("brief".into()),
        ..spec.clone()
    };
    let by_name = manager.reach(&by_name).await.unwrap();
    for target in [by_roster, by_name] {
        assert_eq!(target.model, "tiny");
        let agent = target.agent.clone().unwrap();
        assert_eq!(
            (agent.name.as_str(), agent.system.as_deref()),
            ("brief", Some("Be brief."))
        );
        let session = manager
            .create(&NewSession::default(), SessionSetup::new(target))
            .await
            .unwrap();
        let cancel = CancellationToken::new();
        let outcome = session.send(Message::user("Hi"), &cancel, |_| {}).await;
        assert!(
            matches!(outcome, TurnOutcome::Finished { .. }),
            "{outcome:?}"
        );
    }
    for request in server.requests() {
        let body = request.json().unwrap();
        assert_eq!(body["temperature"], 0.125, "{body}");
        assert_eq!(body["messages"][0]["content"], "Be brief.", "{body}");
    }
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn an_empty_roster_is_an_error_naming_it() {
    let server = ReplayServer::start(vec![]).await.unwrap();
    let dir = config_dir(&server, "");
    let manager = SessionManager::new(
        None,
        Config::load(Some(dir.path())),
        qore_session::traced_notes(),
    );
    let refused = (manager.reach_roster(Roster::Compression, &TargetSpec::default())).await;
    let error = refused.err().unwrap();
    assert_eq!(
        error.message,
        "the compression roster of pipelines.toml names no agent"
    );
}
