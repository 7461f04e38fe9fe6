//! Reading streams through the load balancer to their end or their break (reading to a
//! needle is `cli_serve_support::read_until`), and reading back what the store kept: every
//! turn of every session, as texts, through qore-store (the same code the processes use), so
//! a test can check that each is whole.

use std::time::Duration;

/// The rest of `response` (to its end or its break, 60 s at most) and whether it ended
/// cleanly (the HTTP body closed as HTTP says, not a connection broken off).
pub async fn read_rest(mut response: reqwest::Response, mut seen: String) -> (String, bool) {
    let read = async {
        loop {
            match response.chunk().await {
                Ok(Some(bytes)) => seen.push_str(&String::from_utf8_lossy(&bytes)),
                Ok(None) => return true,
                Err(_) => return false,
            }
        }
    };
    let clean = tokio::time::timeout(Duration::from_secs(60), read)
        .await
        .unwrap_or_else(|_| panic!("a stream neither ended nor broke within 60 s"));
    (seen, clean)
}

/// One stored turn: its session (name, else id), its place, the user's text and each reply's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnTexts {
    pub session: String,
    pub seq: i64,
    pub user: String,
    pub replies: Vec<String>,
}

/// Every turn of every session in the store at `url`, oldest session first.
pub async fn stored_turns(url: &str) -> Vec<TurnTexts> {
    let store = qore_store::open(url)
        .await
        .unwrap_or_else(|e| panic!("open {url}: {e}"));
    let mut all = Vec::new();
    for id in store.session_ids().await.expect("session ids") {
        let info = store.session(&id).await.expect("session");
        let label = info.name.clone().unwrap_or(id.clone());
        for turn in store.turns(&id).await.expect("turns") {
            all.push(TurnTexts {
                session: label.clone(),
                seq: turn.seq,
                user: turn.record.user.text(),
                replies: turn.record.replies.iter().map(|m| m.text()).collect(),
            });
        }
    }
    all
}
