//! Finding a session: by exact id (any case), exact name, or unique id prefix; an unknown key
//! is "no such session", an ambiguous prefix lists its candidates in id order (20, then "…").

use std::sync::Arc;

use qore_store::{NewSession, Store, StoreError};

pub async fn sessions_are_found_by_id_name_or_unique_prefix(store: Arc<dyn Store>) {
    let mut ids = Vec::new();
    for _ in 0..3 {
        ids.push(store.create_session(&NewSession::default()).await.unwrap());
    }
    store.rename(&ids[1], "work").await.unwrap();
    // ULIDs made in the same run share their time prefix: the first characters are ambiguous.
    let common: String = ids[0].chars().take(4).collect();
    let shared_by_all = ids.iter().all(|id| id.starts_with(&common));
    for id in &ids {
        assert_eq!(&store.session(id).await.unwrap().id, id);
        assert_eq!(&store.session(&id.to_uppercase()).await.unwrap().id, id);
    }
    assert_eq!(store.session("work").await.unwrap().id, ids[1]);
    if shared_by_all {
        match store.session(&common).await {
            Err(StoreError::Ambiguous { candidates, .. }) => assert_eq!(candidates.len(), 3),
            other => panic!("expected an ambiguous prefix, got {other:?}"),
        }
    }
    let unique = (10..=26)
        .map(|len| &ids[2][..len])
        .find(|p| ids.iter().filter(|id| id.starts_with(p)).count() == 1)
        .unwrap();
    assert_eq!(store.session(unique).await.unwrap().id, ids[2]);
    // A name that looks like another session's id prefix: the exact name wins.
    store.rename(&ids[0], &ids[2][..8]).await.unwrap();
    assert_eq!(store.session(&ids[2][..8]).await.unwrap().id, ids[0]);
    for missing in ["", "zzzz", "nope", "%", "_"] {
        assert!(
            matches!(store.session(missing).await, Err(StoreError::NotFound(_))),
            "{missing:?}"
        );
    }
}

pub async fn the_resolver_says_no_such_session_or_lists_an_ambiguous_prefix(store: Arc<dyn Store>) {
    let mut ids = Vec::new();
    for _ in 0..2 {
        ids.push(store.create_session(&NewSession::default()).await.unwrap());
    }
    // Candidates are listed in id order; two ids of one millisecond differ in random bits.
    ids.sort();
    let common: String = (ids[0].chars().zip(ids[1].chars()))
        .take_while(|(a, b)| a == b)
        .map(|(a, _)| a)
        .collect();
    let cases = [
        ("zzz".to_owned(), "no such session: 'zzz'".to_owned()),
        (
            common.clone(),
            format!(
                "ambiguous prefix '{common}': matches {}, {}",
                ids[0], ids[1]
            ),
        ),
    ];
    for (key, message) in cases {
        match store.session(&key).await {
            Err(e) => assert_eq!(e.to_string(), message),
            Ok(found) => panic!("{key}: found {}", found.id),
        }
    }
    assert!(matches!(
        store.turns("zzz").await,
        Err(StoreError::NotFound(_))
    ));
    for _ in 0..20 {
        store.create_session(&NewSession::default()).await.unwrap();
    }
    let all = store.session_ids().await.unwrap();
    assert_eq!(all.len(), 22);
    assert!(all.windows(2).all(|w| w[0] < w[1]), "in id order");
    // 22 sessions share the first character: 20 are listed, then "…".
    match store.session("0").await {
        Err(StoreError::Ambiguous { prefix, candidates }) => {
            assert_eq!(prefix, "0");
            assert_eq!(candidates.len(), 21);
            assert_eq!(candidates[..20], all[..20]);
            assert_eq!(candidates[20], "…");
        }
        other => panic!("expected an ambiguous prefix, got {other:?}"),
    }
}
