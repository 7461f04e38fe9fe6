//! `bench_load scale-report FILE`: the Markdown tables of `scripts/bench-scale.sh` from its
//! JSON lines: `bench_load run` lines, each between two counter snapshots of its target
//! (`{"snapshot": "before"|"after", "target", "requests", "turns", "statements",
//! "transactions", "pg": {...}|null, "tables": {...}|null}`).
//!
//! The latency table gives each target's rates and percentiles and, for every target but the
//! base (`sqlite-1`), its ratio to the base's row of the same scenario (same run). The
//! database table divides each counter's growth over the run by the requests and the turns
//! the servers counted over it.

use std::fmt::Write as _;

use serde_json::Value;

const BASE: &str = "sqlite-1";

pub fn report(path: &str) -> Result<String, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let lines: Vec<Value> = (text.lines())
        .filter(|l| l.trim_start().starts_with('{'))
        .map(|l| serde_json::from_str(l).map_err(|e| format!("{path}: {e}")))
        .collect::<Result<_, _>>()?;
    // (run, before, after) triples, in order.
    let mut runs = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if line.get("snapshot").is_some() {
            continue;
        }
        let before = i.checked_sub(1).map(|j| &lines[j]);
        let after = lines.get(i + 1);
        runs.push((line, before, after));
    }
    let mut out = String::new();
    latency(&mut out, &runs);
    database(&mut out, &runs);
    Ok(out)
}

type Run<'a> = (&'a Value, Option<&'a Value>, Option<&'a Value>);

fn f(v: &Value) -> Option<f64> {
    v.as_f64()
}

fn ms(v: Option<f64>) -> String {
    v.map_or("–".into(), |x| format!("{x:.2}"))
}

fn times(v: Option<f64>, base: Option<f64>) -> String {
    match (v, base) {
        (Some(v), Some(b)) if b > 0.0 => format!("{:.2}", v / b),
        _ => "–".into(),
    }
}

fn latency(out: &mut String, runs: &[Run]) {
    out.push_str("### Streams through each target\n\n");
    out.push_str(
        "| scenario | target | ok | errors | unfinished | requests/s | ×sqlite-1 | TTFB p50 ms | \
         TTFB p99 ms | TTFB p50 ×sqlite-1 | TTFB p99 ×sqlite-1 | added TTFB p50 ms | \
         added TTFB p99 ms | last byte p50 ms | last byte p99 ms |\n",
    );
    out.push_str("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (run, _, _) in runs {
        let base = (runs.iter())
            .map(|r| r.0)
            .find(|b| b["target"] == BASE && b["scenario"] == run["scenario"]);
        let pick = |r: &Value, field: &str, p: &str| f(&r[field][p]);
        let of_base = |field: &str, p: &str| base.and_then(|b| pick(b, field, p));
        let added = |p: &str| match (pick(run, "ttfb_ms", p), of_base("ttfb_ms", p)) {
            (Some(v), Some(b)) if base != Some(run) => format!("{:+.2}", v - b),
            _ => "·".into(),
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {:.0} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            run["scenario"].as_str().unwrap_or("?"),
            run["target"].as_str().unwrap_or("?"),
            run["ok"].as_u64().unwrap_or(0),
            run["errors"].as_u64().unwrap_or(0),
            run["unfinished"].as_u64().unwrap_or(0),
            f(&run["req_per_s"]).unwrap_or(0.0),
            times(f(&run["req_per_s"]), base.and_then(|b| f(&b["req_per_s"]))),
            ms(pick(run, "ttfb_ms", "p50")),
            ms(pick(run, "ttfb_ms", "p99")),
            times(pick(run, "ttfb_ms", "p50"), of_base("ttfb_ms", "p50")),
            times(pick(run, "ttfb_ms", "p99"), of_base("ttfb_ms", "p99")),
            added("p50"),
            added("p99"),
            ms(pick(run, "ttlb_ms", "p50")),
            ms(pick(run, "ttlb_ms", "p99")),
        );
    }
    out.push('\n');
}

/// `after[path] - before[path]` (a path of keys).
fn grew(before: &Value, after: &Value, path: &[&str]) -> Option<f64> {
    let at = |v: &Value| {
        path.iter()
            .try_fold(v, |v, k| v.get(k))
            .and_then(Value::as_f64)
    };
    Some(at(after)? - at(before)?)
}

fn per(x: Option<f64>, n: f64) -> String {
    match x {
        Some(x) if n > 0.0 => format!("{:.2}", x / n),
        _ => "–".into(),
    }
}

fn database(out: &mut String, runs: &[Run]) {
    out.push_str("### Database work over each run\n\n");
    out.push_str(
        "Growth of each counter from just before the run to just after it (warm-up included), \
         divided by the requests the servers counted (`qore_requests_total`) or by the turns \
         stored in that time. Statements and transactions: qore's own counters (each statement \
         one round trip; `–` where the store does not count them); commits, rows and active time: PostgreSQL's `pg_stat_database` (its \
         counters include the few queries of the snapshot itself).\n\n",
    );
    out.push_str(
        "| scenario | target | requests | turns | statements / request | transactions / request | \
         transactions / turn | commits / request | rows inserted / turn | rows updated / turn | \
         DB active ms / request | rows inserted per turn, by table |\n",
    );
    out.push_str("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
    for (run, before, after) in runs {
        let (Some(before), Some(after)) = (before, after) else {
            continue;
        };
        let requests = grew(before, after, &["requests"]).unwrap_or(0.0);
        // A store that counts nothing (SQLite's) shows no counts, not zeros.
        let counted = |field: &str| grew(before, after, &[field]).filter(|x| *x > 0.0);
        let turns = grew(before, after, &["turns"]).unwrap_or(0.0);
        let mut tables: Vec<String> = Vec::new();
        if let Some(map) = after["tables"].as_object() {
            for name in map.keys() {
                let n = grew(before, after, &["tables", name]).unwrap_or(0.0);
                if n > 0.0 {
                    tables.push(format!("{name} {}", per(Some(n), turns)));
                }
            }
        }
        let _ = writeln!(
            out,
            "| {} | {} | {requests:.0} | {turns:.0} | {} | {} | {} | {} | {} | {} | {} | {} |",
            run["scenario"].as_str().unwrap_or("?"),
            run["target"].as_str().unwrap_or("?"),
            per(counted("statements"), requests),
            per(counted("transactions"), requests),
            per(counted("transactions"), turns),
            per(grew(before, after, &["pg", "xact_commit"]), requests),
            per(grew(before, after, &["pg", "tup_inserted"]), turns),
            per(grew(before, after, &["pg", "tup_updated"]), turns),
            per(grew(before, after, &["pg", "active_ms"]), requests),
            if tables.is_empty() {
                "–".into()
            } else {
                tables.join(", ")
            },
        );
    }
    out.push('\n');
}
