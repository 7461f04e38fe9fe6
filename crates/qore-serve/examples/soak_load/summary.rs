//! `soak_load summary LOAD.json [CHECK.json]`: what `run` and `check` printed, as the lines
//! `scripts/soak-serve.sh` shows and its test reads: first
//! `soak: requests=N acknowledged=N plain=N refused=N failed=N other=N lost=N half_turns=N`
//! (`lost=unchecked` when there is no check), then a table per request kind (with the lost
//! entries of each), the reasons for refusals and failures, and the first lost entries.

use std::collections::BTreeMap;

use serde_json::Value;

fn json_line(path: &str) -> Result<Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let line = text.lines().rev().find(|l| l.trim_start().starts_with('{'));
    let line = line.ok_or_else(|| format!("{path}: no JSON line"))?;
    serde_json::from_str(line).map_err(|e| format!("{path}: {e}"))
}

fn n(v: &Value) -> u64 {
    v.as_u64().unwrap_or(0)
}

/// The summary text of the files named in `files`.
pub fn summary(files: &[String]) -> Result<String, String> {
    let load = json_line(
        files
            .first()
            .ok_or("usage: soak_load summary LOAD.json [CHECK.json]")?,
    )?;
    let check = files.get(1).map(|f| json_line(f)).transpose()?;
    let (lost, half) = match &check {
        Some(c) => (n(&c["lost"]).to_string(), n(&c["half_turns"]).to_string()),
        None => ("unchecked".into(), "unchecked".into()),
    };
    let mut out = format!(
        "soak: requests={} acknowledged={} plain={} refused={} failed={} other={} lost={lost} half_turns={half}\n",
        n(&load["requests"]),
        n(&load["acknowledged"]),
        n(&load["plain"]),
        n(&load["refused"]),
        n(&load["failed"]),
        n(&load["other"]),
    );
    if n(&load["wrong_text"]) > 0 {
        out += &format!("  answers with a wrong text: {}\n", n(&load["wrong_text"]));
    }
    let lost_by_kind: BTreeMap<String, u64> = (check.as_ref())
        .and_then(|c| c["lost_by_kind"].as_object().cloned())
        .map(|m| m.into_iter().map(|(k, v)| (k, n(&v))).collect())
        .unwrap_or_default();
    out += &format!(
        "  {:<28} {:>8} {:>8} {:>8} {:>8} {:>6} {:>5}\n",
        "kind", "requests", "ok", "refused", "failed", "other", "lost"
    );
    for (kind, c) in load["kinds"].as_object().into_iter().flatten() {
        out += &format!(
            "  {kind:<28} {:>8} {:>8} {:>8} {:>8} {:>6} {:>5}\n",
            n(&c["requests"]),
            n(&c["ok"]),
            n(&c["refused"]),
            n(&c["failed"]),
            n(&c["other"]),
            lost_by_kind.get(kind).copied().unwrap_or(0),
        );
    }
    let reasons: Vec<String> = (load["reasons"].as_object().into_iter().flatten())
        .map(|(why, count)| format!("{why}: {}", n(count)))
        .collect();
    if !reasons.is_empty() {
        out += &format!("  not acknowledged, why: {}\n", reasons.join("; "));
    }
    if let Some(c) = &check {
        out += &format!(
            "  store: {} turns, {} stored but never acknowledged (allowed)\n",
            n(&c["turns"]),
            n(&c["untold_turns"])
        );
        for lost in c["lost_entries"].as_array().into_iter().flatten().take(20) {
            let e = &lost["entry"];
            out += &format!(
                "  LOST {} {} {} (at {} ms, via {}): {}\n",
                e["kind"].as_str().unwrap_or("?"),
                e["id"].as_str().or(e["session"].as_str()).unwrap_or("?"),
                e["user"],
                n(&e["at_ms"]),
                e["backend"].as_str().unwrap_or("?"),
                lost["why"].as_str().unwrap_or("?"),
            );
        }
        for half in c["half_turn_list"]
            .as_array()
            .into_iter()
            .flatten()
            .take(20)
        {
            out += &format!("  HALF {}\n", half.as_str().unwrap_or("?"));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_line_has_every_count_and_lost_entries_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let load = dir.path().join("load.json");
        let check = dir.path().join("check.json");
        std::fs::write(&load, r#"{"requests":10,"acknowledged":6,"plain":1,"refused":2,"failed":1,"other":0,"wrong_text":0,"reasons":{"503":2},"kinds":{"chat whole session":{"requests":10,"ok":7,"refused":2,"failed":1,"other":0}}}"#).unwrap();
        std::fs::write(&check, r#"{"entries":6,"lost":1,"lost_by_kind":{"chat whole session":1},"half_turns":0,"turns":7,"untold_turns":1,"lost_entries":[{"why":"no such turn in the store","entry":{"kind":"chat whole session","session":"soak-1","user":"soak x w1 n0","at_ms":5,"backend":"q2"}}],"half_turn_list":[]}"#).unwrap();
        let files = [
            load.to_str().unwrap().to_owned(),
            check.to_str().unwrap().to_owned(),
        ];
        let text = summary(&files).unwrap();
        let first = text.lines().next().unwrap();
        assert_eq!(
            first,
            "soak: requests=10 acknowledged=6 plain=1 refused=2 failed=1 other=0 lost=1 half_turns=0"
        );
        assert!(
            text.contains(
                "LOST chat whole session soak-1 \"soak x w1 n0\" (at 5 ms, via q2): no such turn"
            ),
            "{text}"
        );
        let unchecked = summary(&files[..1]).unwrap();
        assert!(
            unchecked.starts_with("soak: requests=10 ") && unchecked.contains("lost=unchecked"),
            "{unchecked}"
        );
    }
}
