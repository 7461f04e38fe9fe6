//! What the sandbox adds to starting a command: `true` started directly, through the helper
//! in full access (one more exec), and through the helper under workspace-write (Landlock
//! ruleset, capabilities, seccomp). Prints the p50 of each, the overhead in ms and the ratio
//! sandboxed/unsandboxed, in one run. The variants run interleaved, one of each per round,
//! so a machine busy with other work slows them alike; beside the wall time, the CPU time
//! the started process used (user + system, from `wait4`), which other work on the machine
//! does not inflate. The bench binary is its own helper:
//! started with `QORE_SANDBOX_BENCH_HELPER=<mode>` it confines itself by that mode (root: the
//! current directory) and execs the rest of its arguments, as `qore sandbox-exec`.
//!
//! Optional variants, in the same run:
//! - `QORE_BIN=/path/to/qore`: the real helper, `qore sandbox-exec` in both modes (what
//!   `run_command` starts; it adds the load of the whole qore binary);
//! - `QORE_SANDBOX_BENCH_BASELINE=/path/to/startup-bench`: another build of this bench (an
//!   older commit) as the helper under workspace-write, for before/after ratios.

use std::ffi::OsString;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const HELPER: &str = "QORE_SANDBOX_BENCH_HELPER";
const ROUNDS: usize = 150;

/// A way to start `true`.
struct Variant {
    name: String,
    program: OsString,
    args: Vec<OsString>,
    env: Option<&'static str>,
    times: Vec<Duration>,
    cpu: Vec<Duration>,
}

impl Variant {
    fn new(name: &str, program: impl Into<OsString>, args: &[&str]) -> Variant {
        Variant {
            name: name.to_owned(),
            program: program.into(),
            args: args.iter().map(OsString::from).collect(),
            env: None,
            times: Vec::with_capacity(ROUNDS),
            cpu: Vec::with_capacity(ROUNDS),
        }
    }

    fn helper(name: &str, program: impl Into<OsString>, mode: &'static str) -> Variant {
        Variant {
            env: Some(mode),
            ..Variant::new(name, program, &["--", "true"])
        }
    }

    fn run_once(&mut self) {
        let mut cmd = Command::new(&self.program);
        cmd.args(&self.args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if let Some(mode) = self.env {
            cmd.env(HELPER, mode);
        }
        let start = Instant::now();
        // Reaped by wait4 below, which also gives its resource usage.
        #[allow(clippy::zombie_processes)]
        let child = cmd.spawn().expect("the command starts");
        let mut status = 0;
        // SAFETY: an all-zero rusage is a valid value for wait4 to fill in.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        let pid = i32::try_from(child.id()).expect("a pid");
        // SAFETY: waits for our own child; status and usage are locals.
        let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        self.times.push(start.elapsed());
        assert_eq!(rc, pid, "{}: wait4", self.name);
        assert!(
            libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
            "{}: status {status}",
            self.name
        );
        let tv = |t: libc::timeval| {
            Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
        };
        self.cpu.push(tv(usage.ru_utime) + tv(usage.ru_stime));
    }

    fn p50(&self) -> Duration {
        median(&self.times)
    }

    fn cpu_p50(&self) -> Duration {
        median(&self.cpu)
    }
}

fn median(times: &[Duration]) -> Duration {
    let mut times = times.to_vec();
    times.sort();
    times[times.len() / 2]
}

fn main() {
    if let Ok(mode) = std::env::var(HELPER) {
        helper(&mode);
        return;
    }
    let exe = std::env::current_exe().expect("the bench binary's path");
    let root = std::env::current_dir().expect("a current directory");
    let root = root.to_str().expect("a UTF-8 current directory");
    let mut variants = vec![
        Variant::new("direct `true`", "true", &[]),
        Variant::helper("helper, full-access", &exe, "full-access"),
        Variant::helper("helper, workspace-write", &exe, "workspace-write"),
    ];
    if let Some(baseline) = std::env::var_os("QORE_SANDBOX_BENCH_BASELINE") {
        variants.push(Variant::helper(
            "baseline helper, workspace-write",
            baseline,
            "workspace-write",
        ));
    }
    if let Some(qore) = std::env::var_os("QORE_BIN") {
        let full = ["sandbox-exec", "--mode", "full-access", "--", "true"];
        variants.push(Variant::new("qore sandbox-exec, full-access", &qore, &full));
        let confined = [
            "sandbox-exec",
            "--mode",
            "workspace-write",
            "--root",
            root,
            "--",
            "true",
        ];
        variants.push(Variant::new(
            "qore sandbox-exec, workspace-write",
            &qore,
            &confined,
        ));
    }
    for round in 0..ROUNDS {
        let n = variants.len();
        for i in 0..n {
            variants[(round + i) % n].run_once();
        }
    }
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let direct = variants[0].p50();
    let direct_cpu = variants[0].cpu_p50();
    println!("startup p50 over {ROUNDS} interleaved rounds (wall; CPU of the started process):");
    for v in &variants {
        let (p, cpu) = (v.p50(), v.cpu_p50());
        println!(
            "  {:<36} wall {:6.2} ms (+{:5.2}, ratio {:4.2})  cpu {:5.2} ms (+{:5.2})",
            v.name,
            ms(p),
            ms(p) - ms(direct),
            ms(p) / ms(direct),
            ms(cpu),
            ms(cpu) - ms(direct_cpu),
        );
    }
    let confined = &variants[2];
    println!(
        "  sandbox overhead (this build's helper, workspace-write): wall {:.2} ms, cpu {:.2} ms",
        ms(confined.p50()) - ms(direct),
        ms(confined.cpu_p50()) - ms(direct_cpu)
    );
    if let Some(baseline) = variants.iter().find(|v| v.name.starts_with("baseline")) {
        println!(
            "  this build / baseline under workspace-write: wall {:.2}, cpu {:.2}",
            ms(confined.p50()) / ms(baseline.p50()),
            ms(confined.cpu_p50()) / ms(baseline.cpu_p50())
        );
    }
}

fn helper(mode: &str) {
    let args: Vec<OsString> = std::env::args_os()
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
