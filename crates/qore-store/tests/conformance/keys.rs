//! API keys: a key round trips and is found by name, id, unique id prefix and hash; a bad key
//! is refused with the reason; revoking keeps the key (first revocation time) and changes
//! `keys_version`; another handle on the same store sees keys created and revoked, and a
//! duplicate name from it is refused naming it.

use std::sync::Arc;

use qore_store::{NewKey, Store, StoreError};

use crate::common::{hash, new_key};

pub async fn a_key_round_trips_and_is_found_by_name_id_prefix_and_hash(store: Arc<dyn Store>) {
    let limited = NewKey {
        rpm: Some(3),
        tpm: None,
        budget_tokens: Some(u64::from(u32::MAX) * 4),
        ..new_key("ci", 1)
    };
    let created = store.create_key(&limited).await.unwrap();
    assert_eq!(created.name, "ci");
    assert_eq!(created.models, ["claude-*", "local/*"]);
    assert_eq!(
        (created.rpm, created.tpm, created.budget_tokens),
        (Some(3), None, Some(u64::from(u32::MAX) * 4))
    );
    assert_eq!(created.revoked_at, None);
    assert_eq!(store.keys().await.unwrap(), vec![created.clone()]);
    assert_eq!(
        store.key_by_hash(&hash(1)).await.unwrap(),
        Some(created.clone())
    );
    assert_eq!(store.key_by_hash(&hash(2)).await.unwrap(), None);
    for name in [
        "ci",
        " ci ",
        &created.id,
        &created.id[..20],
        &created.id.to_uppercase(),
    ] {
        assert_eq!(store.key(name).await.unwrap(), created, "{name}");
    }
    let second = store.create_key(&new_key("cd", 2)).await.unwrap();
    // Oldest first (two keys of one millisecond in either order).
    let mut both = vec![created.clone(), second];
    both.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
    assert_eq!(store.keys().await.unwrap(), both);
    // Two ids of one run share their first characters: listed in id order, with names.
    both.sort_by(|a, b| a.id.cmp(&b.id));
    match store.key("0").await {
        Err(StoreError::Ambiguous { candidates, .. }) => {
            let expected: Vec<String> = (both.iter())
                .map(|k| format!("{} ({})", k.id, k.name))
                .collect();
            assert_eq!(candidates, expected);
        }
        other => panic!("expected an ambiguous prefix, got {other:?}"),
    }
    for missing in ["nope", "", "%"] {
        assert!(
            matches!(store.key(missing).await, Err(StoreError::NoSuchKey(_))),
            "{missing:?}"
        );
    }
}

pub async fn bad_keys_are_refused_with_the_reason(store: Arc<dyn Store>) {
    store.create_key(&new_key("ci", 1)).await.unwrap();
    let cases = [
        (new_key("ci", 2), "'ci' already exists"),
        (new_key("  ", 3), "must not be empty"),
        (
            NewKey {
                hash: "ABC".into(),
                ..new_key("x", 4)
            },
            "64 lowercase hex",
        ),
        (
            NewKey {
                hash: hash(0xab).to_uppercase(),
                ..new_key("x", 4)
            },
            "64 lowercase hex",
        ),
        (
            NewKey {
                models: vec![" ".into()],
                ..new_key("y", 5)
            },
            "pattern must not be empty",
        ),
        (
            NewKey {
                rpm: Some(u64::MAX),
                ..new_key("z", 6)
            },
            "too large",
        ),
        (new_key("other", 1), "already stored"),
    ];
    for (key, reason) in cases {
        let why = store.create_key(&key).await.unwrap_err();
        assert!(why.to_string().contains(reason), "{}: {why}", key.name);
        let kind_ok = match reason {
            "'ci' already exists" => matches!(why, StoreError::KeyNameTaken(ref n) if n == "ci"),
            _ => matches!(why, StoreError::InvalidKey(_)),
        };
        assert!(kind_ok, "{}: {why:?}", key.name);
    }
    assert_eq!(store.keys().await.unwrap().len(), 1);
}

pub async fn revoking_keeps_the_key_and_changes_the_version(store: Arc<dyn Store>) {
    let empty = store.keys_version().await.unwrap();
    assert_eq!(store.keys_version().await.unwrap(), empty);
    store.create_key(&new_key("a", 1)).await.unwrap();
    let one = store.keys_version().await.unwrap();
    assert_ne!(empty, one);
    assert_eq!(store.keys_version().await.unwrap(), one);
    let revoked = store.revoke_key("a").await.unwrap();
    assert!(revoked.is_revoked());
    let after = store.keys_version().await.unwrap();
    assert_ne!(after, one);
    let again = store.revoke_key(&revoked.id).await.unwrap();
    assert_eq!(again.revoked_at, revoked.revoked_at);
    assert_eq!(
        store.keys_version().await.unwrap(),
        after,
        "nothing changed"
    );
    let found = store.key_by_hash(&hash(1)).await.unwrap().unwrap();
    assert!(found.is_revoked());
    assert_eq!(store.keys().await.unwrap(), vec![again]);
    assert!(matches!(
        store.revoke_key("nope").await,
        Err(StoreError::NoSuchKey(_))
    ));
}

pub async fn another_handle_sees_keys_created_and_revoked(store: Arc<dyn Store>) {
    let server = store;
    let cli = crate::conformance::open(&server.location()).await;
    let before = server.keys_version().await.unwrap();

    let created = cli.create_key(&new_key("alice", 1)).await.unwrap();
    let after_create = server.keys_version().await.unwrap();
    assert_ne!(before, after_create);
    let found = server.key_by_hash(&hash(1)).await.unwrap().unwrap();
    assert_eq!(found, created);
    assert!(!found.is_revoked());

    cli.revoke_key("alice").await.unwrap();
    assert_ne!(server.keys_version().await.unwrap(), after_create);
    let revoked = server.key_by_hash(&hash(1)).await.unwrap().unwrap();
    assert!(revoked.is_revoked(), "{revoked:?}");
    assert_eq!(server.keys().await.unwrap().len(), 1);

    // A second key created and revoked by the other handle changes the version each time.
    let mut seen = vec![before, after_create, server.keys_version().await.unwrap()];
    cli.create_key(&new_key("bob", 2)).await.unwrap();
    seen.push(server.keys_version().await.unwrap());
    cli.revoke_key("bob").await.unwrap();
    seen.push(server.keys_version().await.unwrap());
    for (i, a) in seen.iter().enumerate() {
        for b in &seen[i + 1..] {
            assert_ne!(a, b, "every change gives a new version: {seen:?}");
        }
    }
    let why = server.create_key(&new_key("bob", 3)).await.unwrap_err();
    assert!(why.to_string().contains("'bob'"), "{why}");
    assert!(matches!(why, StoreError::KeyNameTaken(_)), "{why:?}");
}
