//! `soak_load check`: after the soak, with everything up again, every ledger entry resolves
//! with the same content, and the store holds no half turn.
//!
//! - A stored response (entry with an id): `GET /v1/responses/{id}` through the load
//!   balancer is 200 and its output text is the answer the client read; and in the store the
//!   response names a turn whose user text and last reply are the entry's.
//! - A named-session turn: the session `soak-W` holds a turn with the entry's user text whose
//!   last reply is the answer the client read.
//! - No half turn, over every turn of every session in the store: a turn is whole when it is
//!   `finished`, opens with a user message, has replies and ends in an assistant message with
//!   text; and, since the soak's upstream answers `re: ` + the user text, a soak turn whose
//!   answer is anything else was stored cut short (also half).
//!
//! While the store or the server is still coming back (503, 502, connection errors) a lookup
//! is retried until `--seconds` after the check began; what still does not answer then is
//! lost. A 404, a different text or a missing turn is lost at once.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use qore_core::Role;
use qore_store::{Store, StoredTurn, TurnStatus};
use serde_json::{json, Value};

use crate::ledger::{self, Entry};
use crate::sse::output_text;
use crate::upstream::answer_words;
use crate::Args;

/// What the check found.
pub struct Verdict {
    entries: usize,
    lost: Vec<(Entry, String)>,
    half: Vec<String>,
    turns: usize,
    /// Soak turns in the store no client was told about (committed, then the answer failed).
    untold: usize,
}

impl Verdict {
    pub fn clean(&self) -> bool {
        self.lost.is_empty() && self.half.is_empty()
    }

    /// One JSON line: the counts, and the lost entries and half turns (the first 50 of each).
    pub fn line(&self) -> String {
        let mut by_kind: BTreeMap<&str, u64> = BTreeMap::new();
        for (entry, _) in &self.lost {
            *by_kind.entry(&entry.kind).or_default() += 1;
        }
        let lost: Vec<Value> = (self.lost.iter().take(50))
            .map(|(e, why)| json!({"why": why, "entry": e}))
            .collect();
        json!({
            "entries": self.entries, "resolved": self.entries - self.lost.len(),
            "lost": self.lost.len(), "lost_by_kind": by_kind, "half_turns": self.half.len(),
            "turns": self.turns, "untold_turns": self.untold,
            "lost_entries": lost, "half_turn_list": self.half.iter().take(50).collect::<Vec<_>>(),
        })
        .to_string()
    }
}

/// Whether a stored turn is whole (see the module doc); why not, when it is not.
fn half_reason(turn: &StoredTurn) -> Option<String> {
    let record = &turn.record;
    let last = record.replies.last();
    let user = record.user.text();
    if record.status != TurnStatus::Finished {
        Some(format!("status {:?}", record.status))
    } else if record.user.role != Role::User {
        Some("does not open with a user message".into())
    } else if !last.is_some_and(|m| m.role == Role::Assistant && !m.text().is_empty()) {
        Some("does not end in an assistant answer".into())
    } else if user.starts_with("soak ")
        && last.map(|m| m.text()) != Some(answer_words(&user).concat())
    {
        Some(format!("answer cut: {:?}", last.map(|m| m.text())))
    } else {
        None
    }
}

/// The checker's store and its cache of each session's turns.
struct Turns {
    store: Arc<dyn Store>,
    by_session: HashMap<String, Vec<StoredTurn>>,
    deadline: Instant,
}

impl Turns {
    /// Retry `call` while the store is unavailable, until the deadline.
    async fn retried<T, F, Fut>(&self, mut call: F) -> Result<T, String>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = Result<T, qore_store::StoreError>>,
    {
        loop {
            match call().await {
                Ok(v) => return Ok(v),
                Err(e) if e.is_unavailable() && Instant::now() < self.deadline => {
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
                Err(e) => return Err(e.to_string()),
            }
        }
    }

    async fn of(&mut self, session: &str) -> Result<&[StoredTurn], String> {
        if !self.by_session.contains_key(session) {
            let store = self.store.clone();
            let turns = self.retried(|| store.turns(session)).await?;
            self.by_session.insert(session.to_owned(), turns);
        }
        Ok(self
            .by_session
            .get(session)
            .map(Vec::as_slice)
            .unwrap_or_default())
    }
}

/// Why `entry`'s turn, in `turns`, is not what the client was told (`None`: it is).
fn turn_differs(entry: &Entry, turn: Option<&StoredTurn>) -> Option<String> {
    let Some(turn) = turn else {
        return Some("no such turn in the store".into());
    };
    let user = turn.record.user.text();
    let answer = turn
        .record
        .replies
        .last()
        .map(|m| m.text())
        .unwrap_or_default();
    if user != entry.user || answer != entry.answer {
        return Some(format!("the store holds {user:?} -> {answer:?}"));
    }
    None
}

/// `GET /v1/responses/{id}` until it is not a 503/502/connection error (or the deadline).
async fn fetch(
    http: &reqwest::Client,
    url: &str,
    id: &str,
    deadline: Instant,
) -> Result<Value, String> {
    loop {
        let sent = (http.get(format!("{url}/v1/responses/{id}")))
            .timeout(Duration::from_secs(30))
            .send()
            .await;
        let why = match sent {
            Ok(r) if r.status() == 200 => {
                let text = r.text().await.map_err(|e| format!("GET: a 200 cut: {e}"))?;
                return serde_json::from_str(&text)
                    .map_err(|e| format!("GET: unreadable 200: {e}"));
            }
            Ok(r) if ![502, 503, 504].contains(&r.status().as_u16()) => {
                let status = r.status();
                let text = r.text().await.unwrap_or_default();
                return Err(format!(
                    "GET: {status} {}",
                    text.chars().take(200).collect::<String>()
                ));
            }
            Ok(r) => format!("GET: {} until the end", r.status()),
            Err(e) => format!("GET: {e}"),
        };
        if Instant::now() >= deadline {
            return Err(why);
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Check the ledger at `--ledger` against the server at `--url` and the store at `--store`.
pub async fn check(args: &Args) -> Result<Verdict, String> {
    let entries = ledger::read(&args.ledger)?;
    let deadline = Instant::now() + Duration::from_secs_f64(args.seconds);
    let http = reqwest::Client::builder()
        .no_proxy()
        .build()
        .map_err(|e| format!("HTTP client: {e}"))?;
    let store = loop {
        match qore_store::open(&args.store).await {
            Ok(s) => break s,
            Err(e) if Instant::now() < deadline => {
                eprintln!("soak_load check: store: {e}; again");
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            Err(e) => return Err(format!("store {}: {e}", args.store)),
        }
    };
    let mut turns = Turns {
        store: store.clone(),
        by_session: HashMap::new(),
        deadline,
    };
    let mut lost = Vec::new();
    let mut sessions: HashMap<String, String> = HashMap::new();
    for entry in &entries {
        let why = if let Some(id) = &entry.id {
            check_response(&http, &args.url, &mut turns, entry, id, deadline).await
        } else if let Some(name) = &entry.session {
            if !sessions.contains_key(name) {
                let s = turns.store.clone();
                match turns.retried(|| s.session(name)).await {
                    Ok(info) => drop(sessions.insert(name.clone(), info.id)),
                    Err(e) => drop(sessions.insert(name.clone(), format!("!{e}"))),
                }
            }
            match sessions.get(name).map(String::as_str) {
                Some(id) if !id.starts_with('!') => {
                    let id = id.to_owned();
                    let stored = turns.of(&id).await?;
                    let turn = stored.iter().find(|t| t.record.user.text() == entry.user);
                    turn_differs(entry, turn)
                }
                other => Some(format!("session {name}: {}", other.unwrap_or("?"))),
            }
        } else {
            Some("an entry with neither an id nor a session".into())
        };
        if let Some(why) = why {
            eprintln!(
                "soak_load check: LOST {} {:?} ({}): {why}",
                entry.kind, entry.user, entry.backend
            );
            lost.push((entry.clone(), why));
        }
    }
    // Every turn of every session: none half.
    let (mut half, mut count, mut soak_users) = (Vec::new(), 0, BTreeSet::new());
    let ids = {
        let s = turns.store.clone();
        turns.retried(|| s.session_ids()).await?
    };
    for id in ids {
        for turn in turns.of(&id).await? {
            count += 1;
            let user = turn.record.user.text();
            if let Some(why) = half_reason(turn) {
                half.push(format!("session {id} turn {} ({user:?}): {why}", turn.seq));
            }
            if user.starts_with("soak ") {
                soak_users.insert(user);
            }
        }
    }
    let told: BTreeSet<&str> = entries.iter().map(|e| e.user.as_str()).collect();
    let untold = soak_users
        .iter()
        .filter(|u| !told.contains(u.as_str()))
        .count();
    Ok(Verdict {
        entries: entries.len(),
        lost,
        half,
        turns: count,
        untold,
    })
}

/// Why the stored response `id` of `entry` does not resolve as told (`None`: it does).
async fn check_response(
    http: &reqwest::Client,
    url: &str,
    turns: &mut Turns,
    entry: &Entry,
    id: &str,
    deadline: Instant,
) -> Option<String> {
    match fetch(http, url, id, deadline).await {
        Ok(object) if output_text(&object) != entry.answer => {
            return Some(format!("GET: the output is {:?}", output_text(&object)));
        }
        Ok(_) => {}
        Err(why) => return Some(why),
    }
    let s = turns.store.clone();
    let record = match turns.retried(|| s.response(id)).await {
        Ok(Some(r)) => r,
        Ok(None) => return Some("GET answered, but the store has no such response".into()),
        Err(e) => return Some(format!("store: {e}")),
    };
    let (Some(session), Some(turn_id)) = (record.session_id, record.turn_id) else {
        return Some("the stored response names no turn".into());
    };
    match turns.of(&session).await {
        Ok(stored) => turn_differs(entry, stored.iter().find(|t| t.id == turn_id)),
        Err(e) => Some(format!("store: {e}")),
    }
}
