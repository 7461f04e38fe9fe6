//! What the sandbox adds to starting a command: `true` started directly, through the helper
//! in full access (one more exec), and through the helper under workspace-write (Landlock
//! ruleset, capabilities, seccomp). Prints the p50 of each over the same number of runs, the
//! overhead in ms and the ratio sandboxed/unsandboxed, in one run. The bench binary is its own
//! helper: started with `QORE_SANDBOX_BENCH_HELPER=<mode>` it confines itself by that mode
//! (root: the current directory) and execs the rest of its arguments, as `qore sandbox-exec`.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const HELPER: &str = "QORE_SANDBOX_BENCH_HELPER";
const RUNS: usize = 60;

fn main() {
    if let Ok(mode) = std::env::var(HELPER) {
        helper(&mode);
        return;
    }
    let exe = std::env::current_exe().expect("the bench binary's path");
    let direct = p50(|| Command::new("true"));
    let through = |mode: &'static str| {
        let exe = exe.clone();
        p50(move || {
            let mut cmd = Command::new(&exe);
            cmd.env(HELPER, mode).args(["--", "true"]);
            cmd
        })
    };
    let full = through("full-access");
    let confined = through("workspace-write");
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!("startup p50 over {RUNS} runs each:");
    println!("  direct `true`                 {:7.2} ms", ms(direct));
    println!("  helper, full-access           {:7.2} ms", ms(full));
    println!("  helper, workspace-write       {:7.2} ms", ms(confined));
    println!(
        "  sandbox overhead              {:7.2} ms (ratio sandboxed/unsandboxed {:.2})",
        ms(confined) - ms(direct),
        ms(confined) / ms(direct)
    );
}

fn p50(make: impl Fn() -> Command) -> Duration {
    let mut times = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let mut cmd = make();
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let start = Instant::now();
        let status = cmd.status().expect("the command starts");
        times.push(start.elapsed());
        assert!(status.success(), "{status:?}");
    }
    times.sort();
    times[RUNS / 2]
}

fn helper(mode: &str) {
    let args: Vec<std::ffi::OsString> = std::env::args_os()
        .skip_while(|a| a != "--")
        .skip(1)
        .collect();
    let mode = mode.parse().expect("a sandbox mode");
    let root = std::env::current_dir().expect("a current directory");
    let policy = qore_sandbox::Policy::new(mode, &root).expect("a policy");
    let err = qore_sandbox::exec(&policy, &args);
    eprintln!("{}{err}", qore_sandbox::HELPER_PREFIX);
    std::process::exit(i32::from(qore_sandbox::SETUP_FAILED));
}
