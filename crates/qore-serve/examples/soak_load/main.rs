//! The load generator and ledger of `scripts/soak-serve.sh`: mixed traffic onto `qore serve`
//! (three dialects, streaming and not, stored responses and named sessions) while the script
//! breaks things, a ledger of every write the server acknowledged, and the check that every
//! ledger entry is still there afterwards with the same content.
//!
//! - `soak_load upstream [--listen 127.0.0.1:0] [--interval-ms 40] [--max-seconds 3600]`: a
//!   loopback Chat Completions server whose answer is `re: ` + the request's last user text,
//!   one word per streamed delta, `--interval-ms` apart (a non-streamed answer waits as long),
//!   so every answer names its request and the ledger can compare contents. Prints its base
//!   URL (`http://ADDR/v1`) first on stdout.
//! - `soak_load run --url BASE --ledger FILE [--seconds 60] [--concurrency 12]
//!   [--model soak/m] [--timeout 60]`: workers send requests back to back (see `load.rs` for
//!   the mix) and append one JSON line to the ledger per acknowledged write (see `ledger.rs`
//!   for what counts as acknowledged); prints one JSON line of counts.
//! - `soak_load check --url BASE --store URL --ledger FILE [--seconds 120]`: every ledger
//!   entry resolves with the same content, through the server and in the store, and no
//!   stored turn is half (see `check.rs`); prints one JSON line and exits 1 when anything was
//!   lost or half.
//! - `soak_load summary LOAD.json CHECK.json`: the counts of both as one line
//!   (`soak: requests=… acknowledged=… refused=… failed=… lost=… half_turns=…`), then the
//!   requests per kind and the lost entries per kind (see `summary.rs`).
//!
//! Every wait is bounded; nothing here is part of the library's API.

mod check;
mod ledger;
mod load;
mod sse;
mod summary;
mod upstream;

use std::time::Duration;

/// Flags of every subcommand, each with its default.
#[derive(Debug, Clone)]
pub struct Args {
    pub listen: String,
    pub interval: Duration,
    pub max_seconds: u64,
    pub url: String,
    pub ledger: String,
    pub store: String,
    pub seconds: f64,
    pub concurrency: usize,
    pub model: String,
    pub timeout: Duration,
}

impl Default for Args {
    fn default() -> Self {
        Args {
            listen: "127.0.0.1:0".into(),
            interval: Duration::from_millis(40),
            max_seconds: 3600,
            url: String::new(),
            ledger: String::new(),
            store: String::new(),
            seconds: 60.0,
            concurrency: 12,
            model: "soak/m".into(),
            timeout: Duration::from_secs(60),
        }
    }
}

fn parse(flags: &[String]) -> Result<Args, String> {
    let mut args = Args::default();
    let mut it = flags.iter();
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let float = || value.parse::<f64>().map_err(|e| format!("{flag}: {e}"));
        let int = || value.parse::<u64>().map_err(|e| format!("{flag}: {e}"));
        match flag.as_str() {
            "--listen" => args.listen = value.clone(),
            "--interval-ms" => args.interval = Duration::from_millis(int()?),
            "--max-seconds" => args.max_seconds = int()?,
            "--url" => args.url = value.trim_end_matches('/').trim_end_matches("/v1").into(),
            "--ledger" => args.ledger = value.clone(),
            "--store" => args.store = value.clone(),
            "--seconds" => args.seconds = float()?.clamp(1.0, 24.0 * 3600.0),
            "--concurrency" => args.concurrency = int()?.clamp(1, 1000) as usize,
            "--model" => args.model = value.clone(),
            "--timeout" => args.timeout = Duration::from_secs_f64(float()?.clamp(1.0, 600.0)),
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    Ok(args)
}

fn need(what: &str, value: &str) -> Result<(), String> {
    if value.is_empty() {
        return Err(format!("{what} is required"));
    }
    Ok(())
}

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let command = argv.first().cloned().unwrap_or_default();
    if command == "summary" {
        match summary::summary(argv.get(1..).unwrap_or_default()) {
            Ok(text) => print!("{text}"),
            Err(e) => {
                eprintln!("soak_load summary: {e}");
                std::process::exit(2);
            }
        }
        return;
    }
    let outcome = parse(argv.get(1..).unwrap_or_default()).and_then(|args| {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| format!("tokio runtime: {e}"))?;
        match command.as_str() {
            "upstream" => runtime.block_on(upstream::serve(args)).map(|()| 0),
            "run" => {
                need("--url", &args.url)?;
                need("--ledger", &args.ledger)?;
                let counts = runtime.block_on(load::run(&args))?;
                println!("{counts}");
                Ok(0)
            }
            "check" => {
                need("--url", &args.url)?;
                need("--ledger", &args.ledger)?;
                need("--store", &args.store)?;
                let verdict = runtime.block_on(check::check(&args))?;
                println!("{}", verdict.line());
                Ok(if verdict.clean() { 0 } else { 1 })
            }
            _ => Err("usage: soak_load upstream|run|check|summary [FLAGS] (see main.rs)".into()),
        }
    });
    match outcome {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("soak_load: {e}");
            std::process::exit(2);
        }
    }
}
