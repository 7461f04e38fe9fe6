//! What the admin API asks of the store: a page of keys filtered in the database (search,
//! cursor, limit, admin credentials left out), a key's globs and limits changed (only the
//! fields given, the keys' version moved, another handle sees it), a page of sessions newest
//! first (search, cursor), and usage sums split by agent.

use std::sync::Arc;

use qore_store::{
    KeyChange, KeyQuery, NewSession, SessionQuery, Store, StoreError, UsageGroup, UsageQuery,
    UsageRow,
};

use crate::common::{new_key, tool_turn, usage_row};

fn names(keys: &[qore_store::KeyRecord]) -> Vec<&str> {
    keys.iter().map(|k| k.name.as_str()).collect()
}

pub async fn a_key_page_is_filtered_and_paged_by_the_database(store: Arc<dyn Store>) {
    for (n, name) in ["alpha", "Beta", "admin:ops", "ALPHABET", "gamma"]
        .iter()
        .enumerate()
    {
        store.create_key(&new_key(name, n as u8 + 1)).await.unwrap();
        // Ids are ULIDs: they sort by creation from one millisecond to the next.
        tokio::time::sleep(std::time::Duration::from_millis(2)).await;
    }
    let all = store.keys().await.unwrap();
    let id_of = |name: &str| all.iter().find(|k| k.name == name).unwrap().id.clone();
    let query = |search: Option<&str>, after: Option<String>, limit: u32, hide: bool| KeyQuery {
        search: search.map(str::to_owned),
        after,
        limit,
        hide_prefix: hide.then(|| "admin:".to_owned()),
    };
    // (query, the names of the page in order)
    let cases = [
        (
            query(None, None, 10, false),
            vec!["alpha", "Beta", "admin:ops", "ALPHABET", "gamma"],
        ),
        (
            query(None, None, 10, true),
            vec!["alpha", "Beta", "ALPHABET", "gamma"],
        ),
        (query(None, None, 2, true), vec!["alpha", "Beta"]),
        (
            query(None, Some(id_of("Beta")), 2, true),
            vec!["ALPHABET", "gamma"],
        ),
        (
            query(Some("ALPHA"), None, 10, true),
            vec!["alpha", "ALPHABET"],
        ),
        (query(Some("bet"), None, 10, true), vec!["Beta", "ALPHABET"]),
        (query(Some("ops"), None, 10, true), vec![]),
        (query(Some("ops"), None, 10, false), vec!["admin:ops"]),
        (query(Some("%"), None, 10, false), vec![]),
        (query(None, Some(id_of("gamma")), 10, false), vec![]),
        (query(None, None, 0, true), vec!["alpha"]),
    ];
    for (query, want) in cases {
        let page = store.key_page(&query).await.unwrap();
        assert_eq!(names(&page), want, "{query:?}");
    }
}

pub async fn a_key_change_sets_only_its_fields_and_moves_the_version(store: Arc<dyn Store>) {
    let key = store.create_key(&new_key("team", 1)).await.unwrap();
    let other = qore_store::open(&store.location()).await.unwrap();
    // (change, then the key's (models, rpm, tpm, budget))
    type Limits = (Vec<&'static str>, Option<u64>, Option<u64>, Option<u64>);
    let cases: [(KeyChange, Limits); 4] = [
        (
            KeyChange {
                rpm: Some(Some(5)),
                ..KeyChange::default()
            },
            (vec!["claude-*", "local/*"], Some(5), Some(1000), None),
        ),
        (
            KeyChange {
                models: Some(vec![" up/* ".into()]),
                budget_tokens: Some(Some(70)),
                ..KeyChange::default()
            },
            (vec!["up/*"], Some(5), Some(1000), Some(70)),
        ),
        (
            KeyChange {
                tpm: Some(None),
                rpm: Some(None),
                ..KeyChange::default()
            },
            (vec!["up/*"], None, None, Some(70)),
        ),
        (
            KeyChange {
                models: Some(vec![]),
                ..KeyChange::default()
            },
            (vec![], None, None, Some(70)),
        ),
    ];
    for (change, (models, rpm, tpm, budget)) in cases {
        let before = store.keys_version().await.unwrap();
        let changed = store.change_key(&key.name, &change).await.unwrap();
        let want = (
            models.iter().map(|m| m.to_string()).collect(),
            rpm,
            tpm,
            budget,
        );
        let got = |k: &qore_store::KeyRecord| (k.models.clone(), k.rpm, k.tpm, k.budget_tokens);
        assert_eq!(got(&changed), want, "{change:?}");
        // Another handle (another process) sees the change and a new version.
        assert_eq!(got(&other.key(&key.id).await.unwrap()), want, "{change:?}");
        assert_ne!(other.keys_version().await.unwrap(), before, "{change:?}");
        assert_eq!(
            (changed.id.as_str(), changed.created_at),
            (key.id.as_str(), key.created_at)
        );
    }
    let bad = KeyChange {
        models: Some(vec!["  ".into()]),
        ..KeyChange::default()
    };
    let refused = store.change_key(&key.id, &bad).await.unwrap_err();
    assert!(matches!(refused, StoreError::InvalidKey(_)), "{refused:?}");
    let too_large = KeyChange {
        rpm: Some(Some(u64::MAX)),
        ..KeyChange::default()
    };
    let refused = store.change_key(&key.id, &too_large).await.unwrap_err();
    assert!(matches!(refused, StoreError::InvalidKey(_)), "{refused:?}");
    let unknown = store.change_key("nobody", &KeyChange::default()).await;
    assert!(
        matches!(unknown, Err(StoreError::NoSuchKey(_))),
        "{unknown:?}"
    );
    // A refused change wrote nothing.
    assert_eq!(
        store.key(&key.id).await.unwrap().models,
        Vec::<String>::new()
    );
}

pub async fn a_session_page_is_newest_first_and_searched_by_the_database(store: Arc<dyn Store>) {
    let mut ids = Vec::new();
    for name in ["deploy-notes", "Weather", "DEPLOY-2", "misc"] {
        let new = NewSession {
            name: Some(name.into()),
            ..NewSession::default()
        };
        let id = store.create_session(&new).await.unwrap();
        store.append_turn(&id, &tool_turn(1, 8)).await.unwrap();
        ids.push(id);
        tokio::time::sleep(std::time::Duration::from_millis(2)).await;
    }
    let title = store.session(&ids[0]).await.unwrap().title.unwrap();
    let query = |search: Option<&str>, before: Option<&str>, limit: u32| SessionQuery {
        search: search.map(str::to_owned),
        before: before.map(str::to_owned),
        limit,
    };
    let (first, third) = (ids[0].as_str(), ids[2].as_str());
    // (query, the names of the page in order)
    let cases = [
        (
            query(None, None, 10),
            vec!["misc", "DEPLOY-2", "Weather", "deploy-notes"],
        ),
        (query(None, None, 2), vec!["misc", "DEPLOY-2"]),
        (
            query(None, Some(third), 10),
            vec!["Weather", "deploy-notes"],
        ),
        (
            query(Some("Deploy"), None, 10),
            vec!["DEPLOY-2", "deploy-notes"],
        ),
        (query(Some(first), None, 10), vec!["deploy-notes"]),
        (query(Some("nothing like it"), None, 10), vec![]),
        (query(Some(&title), None, 1), vec!["misc"]),
    ];
    for (query, want) in cases {
        let page = store.session_page(&query).await.unwrap();
        let got: Vec<&str> = page.iter().map(|s| s.name.as_deref().unwrap()).collect();
        assert_eq!(got, want, "{query:?}");
        assert!(page.iter().all(|s| s.message_count == 4), "{page:?}");
    }
}

pub async fn usage_sums_split_by_agent(store: Arc<dyn Store>) {
    let with = |day: &str, key: &str, model: &str, agent: &str, tokens: u64| UsageRow {
        model: model.into(),
        agent: agent.into(),
        ..usage_row(day, key, tokens)
    };
    store
        .record_usage(&[
            with("2025-01-01", "k1", "a", "", 10),
            with("2025-01-01", "k2", "b", "coder", 20),
            with("2025-01-02", "k1", "b", "coder", 30),
            with("2025-01-02", "k1", "c", "writer", 40),
        ])
        .await
        .unwrap();
    // (group, expected (group value, agent, requests, tokens in))
    type Sums = Vec<(&'static str, &'static str, u64, u64)>;
    let cases: [(UsageGroup, Sums); 4] = [
        (
            UsageGroup::Total,
            vec![("", "", 1, 10), ("", "coder", 2, 50), ("", "writer", 1, 40)],
        ),
        (
            UsageGroup::Day,
            vec![
                ("2025-01-01", "", 1, 10),
                ("2025-01-01", "coder", 1, 20),
                ("2025-01-02", "coder", 1, 30),
                ("2025-01-02", "writer", 1, 40),
            ],
        ),
        (
            UsageGroup::Key,
            vec![
                ("k1", "", 1, 10),
                ("k1", "coder", 1, 30),
                ("k1", "writer", 1, 40),
                ("k2", "coder", 1, 20),
            ],
        ),
        (
            UsageGroup::Agent,
            vec![
                ("", "", 1, 10),
                ("coder", "coder", 2, 50),
                ("writer", "writer", 1, 40),
            ],
        ),
    ];
    for (by, want) in cases {
        let query = UsageQuery {
            by_agent: true,
            ..UsageQuery::by(by)
        };
        let rows = store.usage_sums(&query).await.unwrap();
        let got: Vec<(String, String, u64, u64)> = (rows.into_iter())
            .map(|r| {
                let group = match by {
                    UsageGroup::Day => r.day,
                    UsageGroup::Key => r.key_id,
                    UsageGroup::Agent => r.agent.clone(),
                    _ => String::new(),
                };
                (group, r.agent, r.requests, r.tokens_in)
            })
            .collect();
        let want: Vec<(String, String, u64, u64)> = (want.into_iter())
            .map(|(g, a, n, t)| (g.to_owned(), a.to_owned(), n, t))
            .collect();
        assert_eq!(got, want, "{by:?}");
    }
    // The plain sums are unchanged: one row per group, no agent split.
    let total = (store.usage_sums(&UsageQuery::by(UsageGroup::Day)).await).unwrap();
    assert_eq!(total.len(), 2, "{total:?}");
}
