//! [`copy_store`]: copy everything one store holds into another (what `qore store migrate`
//! runs), through the [`Store`] interface alone, so any backend copies to any other.
//!
//! Promises:
//! - every key, session (with every turn: its `seq`, undone flag, messages and file changes),
//!   usage row and stored response is copied as it is: same ids, names, times and counts
//!   (the `copy_*` methods of [`Store`]);
//! - references stay valid: keys first, then sessions with a session's parent before it
//!   (when the parent is in the source), then usage rows, then responses, which name their
//!   copied turn by its place in its session;
//! - what the target already holds (a session, key or response with the same id, a usage
//!   row with the same (day, key, model, agent)) is left alone and counted as already there,
//!   so running it again copies nothing, and an interrupted run is finished by the next one;
//! - each record is written in its own transaction (a session with all its turns in one), so
//!   a run stopped midway leaves whole records only;
//! - the first failure stops the copy and is returned as it is.

use std::collections::{HashMap, HashSet};
use std::fmt;

use crate::interface::SessionCopy;
use crate::{SessionInfo, Store, StoreError};

/// How many records [`copy_store`] wrote, and how many the target already had, of each kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CopyReport {
    pub sessions: CopyCount,
    /// The turns of the sessions copied, and of those already there.
    pub turns: CopyCount,
    pub keys: CopyCount,
    pub usage_rows: CopyCount,
    pub responses: CopyCount,
}

/// Records written, and records left alone because the target had them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CopyCount {
    pub copied: u64,
    pub already_there: u64,
}

impl CopyCount {
    fn add(&mut self, copied: bool, n: u64) {
        if copied {
            self.copied += n;
        } else {
            self.already_there += n;
        }
    }
}

impl CopyReport {
    /// Whether this run wrote nothing (everything was already there).
    pub fn copied_nothing(&self) -> bool {
        [
            self.sessions,
            self.turns,
            self.keys,
            self.usage_rows,
            self.responses,
        ]
        .iter()
        .all(|c| c.copied == 0)
    }
}

impl fmt::Display for CopyReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lines = [
            ("sessions", self.sessions),
            ("turns", self.turns),
            ("keys", self.keys),
            ("usage rows", self.usage_rows),
            ("responses", self.responses),
        ];
        for (i, (what, counted)) in lines.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(
                f,
                "{what}: {} copied, {} already there",
                counted.copied, counted.already_there
            )?;
        }
        Ok(())
    }
}

/// Copy every key, session, usage row and response of `from` into `to` (see the module doc).
pub async fn copy_store(from: &dyn Store, to: &dyn Store) -> Result<CopyReport, StoreError> {
    let mut report = CopyReport::default();
    for key in from.keys().await? {
        report.keys.add(to.copy_key(&key).await?, 1);
    }
    let mut infos = Vec::new();
    for id in from.session_ids().await? {
        match from.session(&id).await {
            Ok(info) if info.id == id => infos.push(info),
            // Removed since it was listed: nothing to copy.
            Err(StoreError::NotFound(_)) => {}
            Ok(other) => {
                return Err(StoreError::NotFound(format!(
                    "{id} (the store answered with {})",
                    other.id
                )))
            }
            Err(e) => return Err(e),
        }
    }
    for info in parents_first(infos) {
        let turns = match from.turns(&info.id).await {
            Ok(turns) => turns,
            Err(StoreError::NotFound(_)) => continue,
            Err(e) => return Err(e),
        };
        let count = turns.len() as u64;
        let copied = to.copy_session(&SessionCopy { info, turns }).await?;
        report.sessions.add(copied, 1);
        report.turns.add(copied, count);
    }
    for row in from.usage(None, None).await? {
        report.usage_rows.add(to.copy_usage(&row).await?, 1);
    }
    for response in from.responses().await? {
        report.responses.add(to.copy_response(&response).await?, 1);
    }
    Ok(report)
}

/// Sessions in id order, except that a session whose parent is among them comes after it.
fn parents_first(infos: Vec<SessionInfo>) -> Vec<SessionInfo> {
    let ids: HashSet<String> = infos.iter().map(|s| s.id.clone()).collect();
    let mut children: HashMap<String, Vec<SessionInfo>> = HashMap::new();
    let mut roots = Vec::new();
    for info in infos {
        match info.parent_id.clone() {
            Some(parent) if ids.contains(&parent) && parent != info.id => {
                children.entry(parent).or_default().push(info)
            }
            _ => roots.push(info),
        }
    }
    let mut ordered = Vec::with_capacity(ids.len());
    let mut stack: Vec<SessionInfo> = roots.into_iter().rev().collect();
    while let Some(info) = stack.pop() {
        if let Some(mut kids) = children.remove(&info.id) {
            kids.reverse();
            stack.extend(kids);
        }
        ordered.push(info);
    }
    // A cycle of parents (which no store writes) leaves sessions unreached: copy them last.
    let mut rest: Vec<SessionInfo> = children.into_values().flatten().collect();
    rest.sort_by(|a, b| a.id.cmp(&b.id));
    ordered.extend(rest);
    ordered
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(id: &str, parent: Option<&str>) -> SessionInfo {
        SessionInfo {
            id: id.into(),
            name: None,
            title: None,
            project_dir: None,
            agent: None,
            model: None,
            created_at: 0,
            updated_at: 0,
            parent_id: parent.map(str::to_owned),
            turn_count: 0,
            message_count: 0,
            last_usage: None,
        }
    }

    /// Sessions in id order as (id, parent), and the order they are copied in.
    type Case = (
        &'static [(&'static str, Option<&'static str>)],
        &'static [&'static str],
    );

    #[test]
    fn a_parent_is_copied_before_its_children() {
        let cases: [Case; 4] = [
            (&[("a", None), ("b", Some("a"))], &["a", "b"]),
            (
                &[("a", Some("c")), ("b", None), ("c", None)],
                &["b", "c", "a"],
            ),
            (&[("a", Some("gone")), ("b", None)], &["a", "b"]),
            (
                &[("a", Some("b")), ("b", Some("a")), ("c", None)],
                &["c", "a", "b"],
            ),
        ];
        for (given, expected) in cases {
            let infos = given.iter().map(|(id, p)| info(id, *p)).collect();
            let order: Vec<String> = parents_first(infos).into_iter().map(|s| s.id).collect();
            assert_eq!(order, expected, "{given:?}");
        }
    }

    #[test]
    fn the_report_is_a_line_per_kind() {
        let report = CopyReport {
            sessions: CopyCount {
                copied: 2,
                already_there: 1,
            },
            turns: CopyCount {
                copied: 7,
                already_there: 3,
            },
            ..CopyReport::default()
        };
        assert_eq!(
            report.to_string(),
            "sessions: 2 copied, 1 already there\nturns: 7 copied, 3 already there\n\
             keys: 0 copied, 0 already there\nusage rows: 0 copied, 0 already there\n\
             responses: 0 copied, 0 already there"
        );
        assert!(!report.copied_nothing());
        assert!(CopyReport::default().copied_nothing());
    }
}
