//! `qore sessions …` as a user meets it: the real binary, a temporary QORE_DATA_DIR whose
//! default store file is filled through qore-store's interface (two projects, a named
//! session, a compressed one), then a table of steps run in order (list, show, export,
//! import, rename, rm and their errors), each checked by exit code and what stdout and
//! stderr say. The same table runs on PostgreSQL in `cli_store_postgres`.

mod cli_sessions_support;
mod common;

use cli_sessions_support::world;
use common::config::ConfigDir;
use common::{command, run_cmd};
use serde_json::Value;

#[tokio::test]
async fn sessions_list_show_export_import_rename_and_remove() {
    let w = world().await;
    cli_sessions_support::sessions_steps(&w).await;
    assert!(w.data.join("qore.db").exists());
}

#[tokio::test]
async fn sessions_list_json_has_counts_tokens_and_times() {
    let w = world().await;
    let config = ConfigDir::new(&[(
        "agents/coder.toml",
        "name = \"coder\"\nextends = \"openai-chat\"\ncontext_window = 10000\n",
    )]);
    let mut cmd = command(&["sessions", "list", "--json"]);
    cmd.env("QORE_DATA_DIR", &w.data)
        .env("QORE_CONFIG_DIR", &config.0)
        .current_dir(&w.a);
    let run = run_cmd(cmd).await;
    assert_eq!(run.code, Some(0), "{run:?}");
    let rows: Value = serde_json::from_str(&run.stdout).unwrap();
    let rows = rows.as_array().unwrap();
    let ids: Vec<&str> = rows.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        [w.ids[1].as_str(), w.ids[0].as_str()],
        "this project's, newest first"
    );
    let original = &rows[1];
    assert_eq!(original["turns"], 2);
    assert_eq!(original["messages"], 4);
    assert_eq!(original["input_tokens"], 2400);
    // The estimate against the agent's window (its profile's context_window).
    let tokens = &original["tokens"];
    assert_eq!(
        (&tokens["used"], &tokens["window"]),
        (&2409.into(), &10000.into())
    );
    assert_eq!(tokens["percent"], 24.1);
    assert_eq!(original["title"], "fix the parser");
    assert_eq!(original["project_dir"], w.a.to_str().unwrap());
    assert_eq!(rows[0]["parent_id"], w.ids[0].as_str());
    assert_eq!(rows[0]["name"], "parser");
    let created = original["created_at"].as_str().unwrap();
    assert!(created.ends_with('Z') && created.len() == 24, "{created}");
}
