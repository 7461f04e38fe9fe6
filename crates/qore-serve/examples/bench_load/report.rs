//! Markdown tables from the JSON lines of `bench_load run`. A gateway's row is compared with
//! the `direct` row of the same scenario (same run): added time = the gateway's percentile
//! minus direct's (a difference of percentiles, not a percentile of differences), ×direct =
//! the gateway's rate over direct's. Rows of one scenario differ by target and inbound
//! dialect; the `direct` row of a scenario speaks its upstream's own protocol.

use std::fmt::Write as _;

use serde_json::Value;

pub fn report(path: &str) -> Result<String, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let rows: Vec<Value> = text
        .lines()
        .filter(|l| l.trim_start().starts_with('{'))
        .map(|l| serde_json::from_str(l).map_err(|e| format!("{path}: {e}")))
        .collect::<Result<_, _>>()?;
    let mut out = String::new();
    streams(&mut out, &rows);
    short(&mut out, &rows);
    memory(&mut out, &rows);
    errors(&mut out, &rows);
    Ok(out)
}

fn direct<'a>(rows: &'a [Value], row: &Value) -> Option<&'a Value> {
    rows.iter()
        .find(|r| r["scenario"] == row["scenario"] && r["target"] == "direct")
}

fn ms(v: &Value) -> String {
    v.as_f64().map_or("–".into(), |x| format!("{x:.2}"))
}

/// `row[field][p] - direct[field][p]`, signed, for gateway rows.
fn added(rows: &[Value], row: &Value, field: &str, p: &str) -> String {
    if row["target"] == "direct" {
        return "·".into();
    }
    let base = direct(rows, row).and_then(|d| d[field][p].as_f64());
    match (row[field][p].as_f64(), base) {
        (Some(g), Some(d)) => format!("{:+.2}", g - d),
        _ => "–".into(),
    }
}

fn ratio(rows: &[Value], row: &Value, field: &str) -> String {
    if row["target"] == "direct" {
        return "1".into();
    }
    let base = direct(rows, row).and_then(|d| d[field].as_f64());
    match (row[field].as_f64(), base) {
        (Some(g), Some(d)) if d > 0.0 => two_figures(g / d),
        _ => "–".into(),
    }
}

/// Two decimals, or two significant figures below 0.1 (0.0026, not 0.00).
fn two_figures(x: f64) -> String {
    if x >= 0.1 || x <= 0.0 {
        return format!("{x:.2}");
    }
    let decimals = (1 - x.log10().floor() as i32).clamp(2, 9) as usize;
    format!("{x:.decimals$}")
}

fn rate(v: &Value) -> String {
    v.as_f64().map_or("–".into(), |x| format!("{x:.0}"))
}

fn count(row: &Value, key: &str) -> u64 {
    row[key].as_u64().unwrap_or(0)
}

fn label(row: &Value, key: &str) -> String {
    row[key].as_str().unwrap_or("?").to_owned()
}

/// Errors, unfinished and skipped requests of a row, as `e/u/s`.
fn failures(row: &Value) -> String {
    let (e, u, s) = (
        count(row, "errors"),
        count(row, "unfinished"),
        count(row, "skipped"),
    );
    if e + u + s == 0 {
        "0".into()
    } else {
        format!("{e}/{u}/{s}")
    }
}

fn micros(v: &Value) -> String {
    v.as_f64().map_or("–".into(), |x| format!("{x:.1}"))
}

fn streams(out: &mut String, rows: &[Value]) {
    let rows_here: Vec<&Value> = rows.iter().filter(|r| r["mode"] == "stream").collect();
    if rows_here.is_empty() {
        return;
    }
    out.push_str("### Streams\n\n");
    out.push_str(
        "| scenario | target | dialect | ok | failed e/u/s | deltas/s | ×direct \
         | TTFB p50 ms | TTFB p99 ms | added TTFB p50 | added TTFB p99 \
         | gap p99 ms | added gap p99 | CPU % | CPU µs/delta |\n",
    );
    out.push_str("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for row in rows_here {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            label(row, "scenario"),
            label(row, "target"),
            label(row, "dialect"),
            count(row, "ok"),
            failures(row),
            rate(&row["deltas_per_s"]),
            ratio(rows, row, "deltas_per_s"),
            ms(&row["ttfb_ms"]["p50"]),
            ms(&row["ttfb_ms"]["p99"]),
            added(rows, row, "ttfb_ms", "p50"),
            added(rows, row, "ttfb_ms", "p99"),
            ms(&row["gap_ms"]["p99"]),
            added(rows, row, "gap_ms", "p99"),
            rate(&row["cpu_core_pct"]),
            micros(&row["cpu_us_per_delta"]),
        );
    }
    out.push('\n');
}

fn short(out: &mut String, rows: &[Value]) {
    let rows_here: Vec<&Value> = rows.iter().filter(|r| r["mode"] == "short").collect();
    if rows_here.is_empty() {
        return;
    }
    out.push_str("### Short non-streaming requests\n\n");
    out.push_str(
        "| scenario | target | dialect | ok | failed e/u/s | requests/s | ×direct \
         | latency p50 ms | latency p99 ms | added p50 | added p99 | added p99.9 \
         | CPU % | CPU µs/request |\n",
    );
    out.push_str("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for row in rows_here {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            label(row, "scenario"),
            label(row, "target"),
            label(row, "dialect"),
            count(row, "ok"),
            failures(row),
            rate(&row["req_per_s"]),
            ratio(rows, row, "req_per_s"),
            ms(&row["ttlb_ms"]["p50"]),
            ms(&row["ttlb_ms"]["p99"]),
            added(rows, row, "ttlb_ms", "p50"),
            added(rows, row, "ttlb_ms", "p99"),
            added(rows, row, "ttlb_ms", "p999"),
            rate(&row["cpu_core_pct"]),
            micros(&row["cpu_us_per_request"]),
        );
    }
    out.push('\n');
}

fn mib(v: &Value) -> String {
    v.as_f64()
        .map_or("–".into(), |kb| format!("{:.1}", kb / 1024.0))
}

fn memory(out: &mut String, rows: &[Value]) {
    let rows_here: Vec<&Value> = rows
        .iter()
        .filter(|r| !r["rss_kb"]["peak"].is_null() || !r["rss_kb"]["hwm"].is_null())
        .collect();
    if rows_here.is_empty() {
        return;
    }
    out.push_str("### The gateway's processes: memory and CPU\n\n");
    out.push_str(
        "| scenario | target | VmRSS before MiB | VmRSS peak during MiB | VmHWM after MiB \
         | CPU % of one core |\n",
    );
    out.push_str("|---|---|---:|---:|---:|---:|\n");
    for row in rows_here {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            row["scenario"].as_str().unwrap_or("?"),
            row["target"].as_str().unwrap_or("?"),
            mib(&row["rss_kb"]["before"]),
            mib(&row["rss_kb"]["peak"]),
            mib(&row["rss_kb"]["hwm"]),
            rate(&row["cpu_core_pct"]),
        );
    }
    out.push('\n');
}

fn errors(out: &mut String, rows: &[Value]) {
    let failed: Vec<&Value> = rows.iter().filter(|r| count(r, "errors") > 0).collect();
    out.push_str(
        "Failed e/u/s: errors; unfinished (started or due in the window and still running at \
         its end plus the grace time, dropped with no latency recorded); skipped (open loop: \
         due while the in-flight cap was reached, never sent).\n\n",
    );
    if failed.is_empty() {
        return;
    }
    out.push_str("First error of each run with errors:\n\n");
    for row in failed {
        let _ = writeln!(
            out,
            "- {} / {}: {} errors, first: `{}`",
            row["scenario"].as_str().unwrap_or("?"),
            row["target"].as_str().unwrap_or("?"),
            count(row, "errors"),
            row["first_error"]
                .as_str()
                .unwrap_or("?")
                .replace('`', "'")
                .replace('\n', " "),
        );
    }
    out.push('\n');
}
