//! `qore serve keys …` and `qore serve usage` as a user meets them: the real binary on a
//! temporary QORE_DATA_DIR, checked by exit code, stdout and stderr, and against the store
//! itself (opened through qore-store, as a running server would).

mod common;

use std::path::{Path, PathBuf};

use common::{command, run_cmd, Run};
use qore_serve::gate::hash_key;
use qore_store::{SqliteStore, Store as _, UsageRow};
use serde_json::Value;

struct World {
    _root: tempfile::TempDir,
    data: PathBuf,
}

fn world() -> World {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    World { _root: root, data }
}

impl World {
    async fn qore(&self, args: &[&str]) -> Run {
        let mut cmd = command(&[&["serve"][..], args].concat());
        cmd.env("QORE_DATA_DIR", &self.data);
        run_cmd(cmd).await
    }

    fn store(&self) -> SqliteStore {
        SqliteStore::open(self.data.join("qore.db")).unwrap()
    }
}

fn is_key(text: &str) -> bool {
    text.strip_prefix("qore-").is_some_and(|tail| {
        tail.len() == 40
            && (tail.bytes()).all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    })
}

#[tokio::test]
async fn create_prints_the_key_alone_and_list_shows_names_never_keys() {
    let w = world();
    let created = (w.qore(&["keys", "create", "ci", "--models", "claude-*"]))
        .await
        .checked(0);
    let key = created.stdout.strip_suffix('\n').unwrap();
    assert!(is_key(key), "stdout: {:?}", created.stdout);
    assert!(!key.contains('\n'));
    assert!(created.stderr.contains("'ci'"), "{}", created.stderr);
    assert!(!created.stderr.contains(key), "{}", created.stderr);
    let hash = hash_key(key);
    let stored = w.store().key_by_hash(&hash).await.unwrap().unwrap();
    assert_eq!(
        (stored.name.as_str(), &stored.models[..]),
        ("ci", &["claude-*".to_owned()][..])
    );

    let limited = [
        "keys",
        "create",
        "bot",
        "--models",
        "local/*",
        "--models",
        "coder",
        "--rpm",
        "3",
        "--tpm",
        "1000",
        "--budget-tokens",
        "50000",
    ];
    let bot_key = w.qore(&limited).await.checked(0).stdout;
    assert_ne!(bot_key, created.stdout);

    let list = w.qore(&["keys", "list"]).await.checked(0);
    for words in [
        "NAME",
        "ci",
        "bot",
        "claude-*",
        "local/* coder",
        "rpm 3, tpm 1000, budget 50000",
        &stored.id[..8],
    ] {
        assert!(list.stdout.contains(words), "{words}: {}", list.stdout);
    }
    for secret in [key, bot_key.trim(), &hash] {
        assert!(!list.stdout.contains(secret), "{}", list.stdout);
    }
    let json = w.qore(&["keys", "list", "--json"]).await.checked(0);
    let rows: Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(rows[1]["name"], "bot");
    assert_eq!(rows[1]["rpm"], 3);
    assert!(!json.stdout.contains(&hash) && !json.stdout.contains(key));
}

#[tokio::test]
async fn revoke_by_name_or_id_keeps_the_key_listed_as_revoked() {
    let w = world();
    let key = w.qore(&["keys", "create", "old"]).await.checked(0).stdout;
    w.qore(&["keys", "create", "other"]).await.checked(0);
    let revoked = w.qore(&["keys", "revoke", "old"]).await.checked(0);
    assert!(
        revoked.stdout.contains("revoked the key 'old'"),
        "{}",
        revoked.stdout
    );
    let stored = w
        .store()
        .key_by_hash(&hash_key(key.trim()))
        .await
        .unwrap()
        .unwrap();
    assert!(stored.is_revoked());
    let again = w.qore(&["keys", "revoke", &stored.id]).await.checked(0);
    assert!(again.stderr.contains("already revoked"), "{}", again.stderr);

    let list = w.qore(&["keys", "list"]).await.checked(0);
    let old_line = (list.stdout.lines())
        .find(|l| l.trim_start().starts_with("old"))
        .unwrap();
    let other_line = (list.stdout.lines())
        .find(|l| l.trim_start().starts_with("other"))
        .unwrap();
    assert!(list.stdout.contains("REVOKED"));
    // The revoked column holds a time for old, nothing for other.
    assert!(old_line.matches(':').count() > other_line.matches(':').count());
}

#[tokio::test]
async fn usage_is_a_table_per_key_model_agent_and_day_and_json() {
    let w = world();
    w.qore(&["keys", "create", "alice"]).await.checked(0);
    let store = w.store();
    let alice = store.key("alice").await.unwrap().id;
    let row = |day: &str, key_id: &str, model: &str, agent: &str, n: u64| UsageRow {
        day: day.into(),
        key_id: key_id.into(),
        model: model.into(),
        agent: agent.into(),
        requests: n,
        errors: 1,
        tokens_in: 100 * n,
        tokens_out: 10 * n,
    };
    for r in [
        row("2025-05-01", &alice, "coder", "coder", 2),
        row("2025-05-02", &alice, "coder", "coder", 3),
        row("2025-05-02", &alice, "local/m", "", 4),
        row("2025-05-02", "", "local/m", "", 5),
    ] {
        store.record_usage(&[r]).await.unwrap();
    }
    let all = w.qore(&["usage"]).await.checked(0);
    for words in [
        "KEY",
        "TOKENS IN",
        "alice",
        "(no key)",
        "2025-05-01",
        "local/m",
        "total",
    ] {
        assert!(all.stdout.contains(words), "{words}: {}", all.stdout);
    }
    let line = (all.stdout.lines())
        .find(|l| l.contains("alice") && l.contains("2025-05-02") && l.contains("coder"))
        .unwrap();
    let cells: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(
        cells,
        [
            "alice",
            "coder",
            "coder",
            "2025-05-02",
            "3",
            "1",
            "300",
            "30"
        ]
    );

    let since = (w.qore(&["usage", "--key", "alice", "--since", "2025-05-02", "--json"]))
        .await
        .checked(0);
    let rows: Value = serde_json::from_str(&since.stdout).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert!(rows
        .iter()
        .all(|r| r["key"] == "alice" && r["day"] == "2025-05-02"));
    assert_eq!(rows[0]["tokens_in"], 300);

    let none = w.qore(&["usage", "--since", "2030-01-01"]).await.checked(0);
    assert_eq!(none.stdout, "");
    assert!(none.stderr.contains("no usage"), "{}", none.stderr);
}

#[tokio::test]
async fn mistakes_are_clear_errors() {
    let w = world();
    w.qore(&["keys", "create", "ci"]).await.checked(0);
    // (args, exit code, stderr must contain)
    let cases: &[(&[&str], i32, &str)] = &[
        (&["keys", "create", "ci"], 1, "'ci' already exists"),
        (&["keys", "create", "x", "--rpm", "0"], 2, "at least 1"),
        (&["keys", "create", "x", "--tpm", "lots"], 2, "--tpm"),
        (
            &["keys", "create", "x", "--models", "a["],
            2,
            "bad model pattern",
        ),
        (&["keys", "create"], 2, "NAME"),
        (&["keys", "create", "  "], 1, "must not be empty"),
        (
            &["keys", "revoke", "nobody"],
            1,
            "no such API key: 'nobody'",
        ),
        (&["keys", "frobnicate"], 2, "frobnicate"),
        (&["usage", "--since", "yesterday"], 2, "YYYY-MM-DD"),
        (&["usage", "--key", "nobody"], 1, "'nobody'"),
        (&["--listen", "nowhere"], 2, "not ADDR:PORT"),
        (&["--listen", "9000", "keys", "list"], 2, "cannot be used"),
    ];
    for (args, code, words) in cases {
        let run = w.qore(args).await;
        assert_eq!(run.code, Some(*code), "{args:?}: {run:?}");
        assert!(run.stderr.contains(words), "{args:?}: {}", run.stderr);
        assert_eq!(run.stdout, "", "{args:?}");
    }
    assert_eq!(w.store().keys().await.unwrap().len(), 1);
}

#[tokio::test]
async fn an_empty_store_lists_nothing_on_stdout() {
    let w = world();
    let list = w.qore(&["keys", "list"]).await.checked(0);
    assert_eq!(list.stdout, "");
    assert!(list.stderr.contains("no API keys yet"), "{}", list.stderr);
    assert!(Path::new(&w.data).join("qore.db").exists());
}

trait Checked {
    fn checked(self, code: i32) -> Run;
}

impl Checked for Run {
    /// The run, after checking its exit code.
    fn checked(self, code: i32) -> Run {
        assert_eq!(self.code, Some(code), "{self:?}");
        self
    }
}
