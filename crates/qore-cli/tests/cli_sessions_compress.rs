//! Compression as a user meets it: the real binary, a temporary data dir holding a stored
//! session of three turns, a config dir whose compression roster's first agent talks to a
//! loopback server. `qore sessions compress` prints the new id, `sessions show --original`
//! on it shows the original, unchanged; `qore run` on a session past 80% of its agent's tiny
//! window compresses first (a JSON `session` line with `compressed_from`) unless
//! `QORE_COMPRESS_AT=off`.

mod common;

use std::path::PathBuf;
use std::time::{Duration, UNIX_EPOCH};

use common::config::ConfigDir;
use common::{command, run_cmd, Run};
use qore_core::Message;
use qore_store::{NewSession, SqliteStore, Store, TurnRecord, TurnStatus};
use qore_testkit::chat::{chat_answer, sent_messages};
use qore_testkit::ReplayServer;

const SUMMARY: &str = "SUMMARY: the parser was fixed.";

fn turn(question: &str) -> TurnRecord {
    TurnRecord {
        user: Message::user(question),
        replies: vec![Message::assistant(format!("answer to {question}"))],
        usage: Default::default(),
        model: Some("tiny".into()),
        agent: Some("talker".into()),
        started_at: UNIX_EPOCH + Duration::from_secs(1_760_000_000),
        finished_at: UNIX_EPOCH + Duration::from_secs(1_760_000_002),
        status: TurnStatus::Finished,
        file_changes: Vec::new(),
    }
}

struct World {
    _root: tempfile::TempDir,
    data: PathBuf,
    project: PathBuf,
    config: ConfigDir,
    id: String,
}

/// A stored session named `work` (three turns) and a config dir: `talker` (window 100) on
/// `chat`, `squeezer` on `squeeze`, first of the compression roster.
async fn world(chat: &ReplayServer, squeeze: &ReplayServer) -> World {
    let root = tempfile::tempdir().unwrap();
    let base = root.path().canonicalize().unwrap();
    let (data, project) = (base.join("data"), base.join("proj"));
    std::fs::create_dir(&project).unwrap();
    let store = SqliteStore::open(data.join("qore.db")).unwrap();
    let new = NewSession {
        project_dir: Some(project.clone()),
        agent: Some("talker".into()),
        ..NewSession::default()
    };
    let id = store.create_session(&new).await.unwrap();
    for question in ["fix the parser", "and the lexer", "now the docs"] {
        store.append_turn(&id, &turn(question)).await.unwrap();
    }
    store.rename(&id, "work").await.unwrap();
    let provider = |name: &str, server: &ReplayServer| {
        format!(
            "name = \"{name}\"\nprotocol = \"openai-chat\"\nurl = \"{}/v1\"\n",
            server.url()
        )
    };
    let config = ConfigDir::new(&[
        ("providers/chat.toml", &provider("chat", chat)),
        ("providers/squeeze.toml", &provider("squeeze", squeeze)),
        (
            "agents/talker.toml",
            "name = \"talker\"\nextends = \"openai-chat\"\nprovider = \"chat\"\nmodel = \"tiny\"\n\
             context_window = 100\n",
        ),
        (
            "agents/squeezer.toml",
            "name = \"squeezer\"\nextends = \"openai-chat\"\nprovider = \"squeeze\"\n\
             model = \"small\"\nsystem_prompt = \"Summarise.\"\n",
        ),
        ("pipelines.toml", "compression = [\"squeezer\"]\n"),
    ]);
    World {
        _root: root,
        data,
        project,
        config,
        id,
    }
}

async fn qore_at(world: &World, env: &[(&str, &str)], args: &[&str]) -> Run {
    let mut cmd = command(args);
    cmd.env("QORE_DATA_DIR", &world.data)
        .env("QORE_CONFIG_DIR", &world.config.0)
        .env_remove("QORE_COMPRESS_AT")
        .current_dir(&world.project);
    for (name, value) in env {
        cmd.env(name, value);
    }
    run_cmd(cmd).await
}

async fn user_questions(store: &dyn Store, id: &str) -> Vec<String> {
    let turns = store.turns(id).await.unwrap();
    turns.iter().map(|t| t.record.user.text()).collect()
}

#[tokio::test]
async fn sessions_compress_prints_the_new_id_and_show_original_shows_the_original() {
    let chat = ReplayServer::start(vec![]).await.unwrap();
    let squeeze = ReplayServer::start(vec![chat_answer(SUMMARY)])
        .await
        .unwrap();
    let w = world(&chat, &squeeze).await;
    let prefix = &w.id[..12];
    let run = qore_at(&w, &[], &["sessions", "compress", prefix, "--keep", "1"]).await;
    assert_eq!(run.code, Some(0), "{run:?}");
    let new_id = run.stdout.trim().to_owned();
    assert_ne!(new_id, w.id);
    assert!(run.stderr.contains("2 turns summarised, 1 kept"), "{run:?}");
    let asked = sent_messages(&squeeze.requests()[0]);
    assert!(asked[1].1.contains("and the lexer") && !asked[1].1.contains("now the docs"));

    let store = SqliteStore::open(w.data.join("qore.db")).unwrap();
    let all = ["fix the parser", "and the lexer", "now the docs"];
    assert_eq!(
        user_questions(&store, &w.id).await,
        all,
        "the original stays"
    );
    let show = qore_at(&w, &[], &["sessions", "show", &new_id]).await;
    assert!(
        show.stdout.contains(SUMMARY) && !show.stdout.contains("and the lexer"),
        "{show:?}"
    );
    let original = qore_at(&w, &[], &["sessions", "show", &new_id, "--original"]).await;
    assert_eq!(original.code, Some(0), "{original:?}");
    for question in all {
        assert!(original.stdout.contains(question), "{original:?}");
    }
    assert!(!original.stdout.contains(SUMMARY), "{original:?}");

    // Bad input: one error line, exit code 1, nothing written.
    for (args, says) in [
        (vec!["sessions", "compress", "nosuch"], "nosuch"),
        (
            vec!["sessions", "compress", &new_id, "--keep", "5"],
            "nothing to compress",
        ),
    ] {
        let run = qore_at(&w, &[], &args).await;
        assert_eq!(run.code, Some(1), "{run:?}");
        assert!(run.one_stderr_line().contains(says), "{run:?}");
    }
    assert_eq!(store.list_sessions(None).await.unwrap().len(), 2);
}

#[tokio::test]
async fn run_past_the_threshold_compresses_first_unless_compress_at_is_off() {
    let long = format!("Now this: {}", "word ".repeat(90));
    for (setting, compressed) in [("80%", true), ("off", false)] {
        let chat = ReplayServer::start(vec![chat_answer("done")])
            .await
            .unwrap();
        let squeeze = ReplayServer::start(vec![chat_answer(SUMMARY)])
            .await
            .unwrap();
        let w = world(&chat, &squeeze).await;
        let env = [("QORE_COMPRESS_AT", setting)];
        let args = [
            "run",
            "--agent",
            "talker",
            "--session",
            "work",
            "--json",
            &long,
        ];
        let run = qore_at(&w, &env, &args).await;
        assert_eq!(run.code, Some(0), "{run:?}");
        let sessions: Vec<_> = (run.json_lines().into_iter())
            .filter(|line| line["type"] == "session")
            .collect();
        assert_eq!(sessions[0]["id"], w.id.as_str());
        assert_eq!(sessions.len(), 1 + usize::from(compressed), "{run:?}");
        assert_eq!(squeeze.requests().len(), usize::from(compressed));
        let sent = sent_messages(&chat.requests()[0]);
        let carries_first = sent.iter().any(|(_, text)| text == "fix the parser");
        assert_eq!(carries_first, !compressed, "{sent:?}");
        if compressed {
            assert_eq!(sessions[1]["compressed_from"], w.id.as_str());
            assert!(sent.iter().any(|(_, text)| text == SUMMARY), "{sent:?}");
            let store = SqliteStore::open(w.data.join("qore.db")).unwrap();
            assert_eq!(
                user_questions(&store, &w.id).await.len(),
                3,
                "the original stays"
            );
        }
    }
}
