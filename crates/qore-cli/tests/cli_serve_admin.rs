//! `qore serve admin create NAME` as a user meets it: the real binary on a temporary
//! QORE_DATA_DIR prints the admin credential alone on stdout (never on stderr); the store
//! keeps only its hash, as the key `admin:NAME` that calls no model; an empty name fails.

mod common;

use common::{command, run_cmd};
use qore_serve::gate::hash_key;
use qore_store::{SqliteStore, Store as _};

#[tokio::test]
async fn create_prints_the_credential_once_and_stores_its_hash() {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    let qore = |args: &[&str]| {
        let mut cmd = command(&[&["serve", "admin"][..], args].concat());
        cmd.env("QORE_DATA_DIR", &data);
        run_cmd(cmd)
    };
    let created = qore(&["create", "ops"]).await;
    assert_eq!(created.code, Some(0), "{created:?}");
    let secret = created.stdout.strip_suffix('\n').unwrap();
    assert!(
        secret.starts_with("qore-") && !secret.contains('\n'),
        "{:?}",
        created.stdout
    );
    assert!(
        !created.stderr.contains(secret) && created.stderr.contains("admin:ops"),
        "{}",
        created.stderr
    );
    let store = SqliteStore::open(data.join("qore.db")).unwrap();
    let stored = store.key_by_hash(&hash_key(secret)).await.unwrap().unwrap();
    assert_eq!(stored.name, "admin:ops");
    assert_eq!(stored.models, [qore_serve::admin::auth::NO_MODEL]);
    assert_eq!(stored.budget_tokens, Some(0));
    let refused = qore(&["create", " "]).await;
    assert_eq!(refused.code, Some(1), "{refused:?}");
    assert!(
        refused.stdout.is_empty() && refused.stderr.contains("name"),
        "{}",
        refused.stderr
    );
}
