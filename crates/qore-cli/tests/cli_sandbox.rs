//! `qore sandbox-exec` through the real binary: every escape of issue 32 fails under the
//! default policy (workspace-write, network off), and the same command under full access
//! works, so each case proves the sandbox and not a broken command. Every confined run also
//! shows its capabilities dropped and no-new-privileges set (these tests run as root here).

use std::io::Read as _;
use std::net::{TcpListener, UdpSocket};
use std::os::linux::net::SocketAddrExt as _;
use std::os::unix::net::{SocketAddr, UnixListener};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

const QORE: &str = env!("CARGO_BIN_EXE_qore");

/// A project, a fake home with a key and a `.bashrc`, the session's temp dir and a place
/// outside everything, all in one temp dir.
struct Fixture {
    _dir: tempfile::TempDir,
    base: PathBuf,
    proj: PathBuf,
    home: PathBuf,
    sess: PathBuf,
    outside: PathBuf,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let proj = base.join("proj");
    let home = base.join("home");
    let sess = base.join("sess");
    let outside = base.join("outside");
    for d in [
        proj.join(".git/hooks"),
        proj.join("src"),
        home.join(".ssh"),
        sess.clone(),
        outside.clone(),
    ] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(home.join(".ssh/id_ed25519"), "SECRET-KEY-MATERIAL\n").unwrap();
    std::fs::write(home.join(".bashrc"), "# rc\n").unwrap();
    std::os::unix::fs::symlink(&outside, proj.join("link")).unwrap();
    Fixture {
        _dir: dir,
        base,
        proj,
        home,
        sess,
        outside,
    }
}

fn python() -> &'static str {
    if Path::new("/usr/bin/python3").exists() {
        "/usr/bin/python3"
    } else {
        "python3"
    }
}

const STATUS: &str = "grep -E '^(CapEff|NoNewPrivs):' /proc/self/status; ";

/// `sh -c SCRIPT` through `qore sandbox-exec` in `mode`, in the project, with HOME the fake
/// home; the script is prefixed with a print of the capability status.
fn run(f: &Fixture, mode: &str, script: &str) -> Output {
    let mut cmd = Command::new(QORE);
    cmd.args(["sandbox-exec", "--mode", mode, "--root"])
        .arg(&f.proj)
        .arg("--tmpdir")
        .arg(&f.sess)
        .args(["--", "sh", "-c"])
        .arg(format!("{STATUS}{script}"))
        .current_dir(&f.proj)
        .env("HOME", &f.home)
        .stdin(Stdio::null());
    let out = cmd.output().unwrap();
    eprintln!(
        "[{mode}] {script}\n  status {:?}\n  stdout {}\n  stderr {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn assert_confined(out: &Output, case: &str) {
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("CapEff:\t0000000000000000"),
        "{case}: capabilities not dropped: {text}"
    );
    assert!(
        text.contains("NoNewPrivs:\t1"),
        "{case}: NNP not set: {text}"
    );
}

/// A process whose command line holds `marker` is alive; it is killed.
fn kill_marked(marker: &str) -> bool {
    let mut found = false;
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        if String::from_utf8_lossy(&cmdline).contains(marker) {
            found = true;
            let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
        }
    }
    found
}

/// One escape: the script, and what says it got out (checked after each run).
struct Case {
    name: &'static str,
    script: String,
    escaped: Box<dyn Fn(&Output) -> bool>,
}

/// The cases, and the ptrace target (the caller kills it).
fn cases(f: &Fixture) -> (Vec<Case>, std::process::Child) {
    let py = python();
    let test_pid = std::process::id();
    let tcp = TcpListener::bind("127.0.0.1:0").unwrap();
    let tcp_port = tcp.local_addr().unwrap().port();
    tcp.set_nonblocking(true).unwrap();
    let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
    let udp_port = udp.local_addr().unwrap().port();
    udp.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let sock_path = f.base.join("app.sock");
    let unix = UnixListener::bind(&sock_path).unwrap();
    unix.set_nonblocking(true).unwrap();
    let abstract_name = format!("qore-sandbox-test-{test_pid}");
    let abs =
        UnixListener::bind_addr(&SocketAddr::from_abstract_name(abstract_name.as_bytes()).unwrap())
            .unwrap();
    abs.set_nonblocking(true).unwrap();
    let target = Command::new("sleep").arg("60").spawn().unwrap();
    let target_pid = target.id();
    let marker = format!("{}.{}", 300 + test_pid % 1000, test_pid % 97);

    let home = f.home.clone();
    let outside = f.outside.clone();
    let proj = f.proj.clone();
    let rc = home.join(".bashrc");
    let planted = outside.join("planted");
    let through_link = outside.join("via-link");
    let hook = proj.join(".git/hooks/pre-commit");
    let marker2 = marker.clone();
    let cases = vec![
        Case {
            name: "write a file in the home directory",
            script: format!("echo pwned >> {}", rc.display()),
            escaped: Box::new(move |_| std::fs::read_to_string(&rc).unwrap().contains("pwned")),
        },
        Case {
            name: "write to /tmp outside the session's directory",
            script: format!("echo pwned > {}", planted.display()),
            escaped: Box::new(move |_| planted.exists()),
        },
        Case {
            name: "write through a symlink out of the root",
            script: "echo pwned > link/via-link".to_string(),
            escaped: Box::new(move |_| through_link.exists()),
        },
        Case {
            name: "write into .git/hooks",
            script: "echo pwned > .git/hooks/pre-commit".to_string(),
            escaped: Box::new(move |_| hook.exists()),
        },
        Case {
            name: "read ~/.ssh/id_*",
            script: "cat \"$HOME\"/.ssh/id_*".to_string(),
            escaped: Box::new(|out| {
                String::from_utf8_lossy(&out.stdout).contains("SECRET-KEY-MATERIAL")
            }),
        },
        Case {
            name: "read /proc/<parent>/environ",
            script: format!("cat /proc/{test_pid}/environ | tr '\\0' '\\n' | grep -c '^PATH='"),
            escaped: Box::new(|out| out.status.success()),
        },
        Case {
            name: "connect over TCP to a loopback server",
            script: format!("exec bash -c 'exec 3<>/dev/tcp/127.0.0.1/{tcp_port}'"),
            escaped: Box::new(move |_| tcp.accept().is_ok()),
        },
        Case {
            name: "resolve a name over UDP",
            script: format!(
                "{py} -c \"import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); \
                 s.sendto(b'\\x12\\x34\\x01\\x00\\x00\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x07example\\x03com\\x00\\x00\\x01\\x00\\x01', ('127.0.0.1', {udp_port}))\""
            ),
            escaped: Box::new(move |_| udp.recv(&mut [0u8; 512]).is_ok()),
        },
        Case {
            name: "connect to a pathname Unix socket",
            script: format!(
                "{py} -c \"import socket; s=socket.socket(socket.AF_UNIX); s.connect('{}')\"",
                sock_path.display()
            ),
            escaped: Box::new(move |_| unix.accept().is_ok()),
        },
        Case {
            name: "connect to an abstract Unix socket",
            script: format!(
                "{py} -c \"import socket; s=socket.socket(socket.AF_UNIX); s.connect('\\0{abstract_name}')\""
            ),
            escaped: Box::new(move |_| abs.accept().is_ok()),
        },
        Case {
            name: "signal the test's own process",
            script: format!("kill -0 {test_pid}"),
            escaped: Box::new(|out| out.status.success()),
        },
        Case {
            name: "ptrace a process of the test",
            script: format!(
                "{py} -c \"import ctypes,sys; l=ctypes.CDLL(None, use_errno=True); \
                 sys.exit(0 if l.ptrace(16, {target_pid}, 0, 0) == 0 else 1)\""
            ),
            escaped: Box::new(|out| out.status.success()),
        },
        Case {
            name: "leave a process behind with setsid",
            script: format!("setsid -f sleep {marker} </dev/null >/dev/null 2>&1; sleep 0.2"),
            escaped: Box::new(move |_| kill_marked(&marker2)),
        },
    ];
    (cases, target)
}

#[test]
fn every_escape_fails_under_the_default_policy_and_works_with_full_access() {
    let f = fixture();
    let mut failures = Vec::new();
    let (cases, mut target) = cases(&f);
    for case in cases {
        let confined = run(&f, "workspace-write", &case.script);
        assert_confined(&confined, case.name);
        if (case.escaped)(&confined) {
            failures.push(format!("{}: escaped the default policy", case.name));
        }
        let free = run(&f, "full-access", &case.script);
        if !(case.escaped)(&free) {
            failures.push(format!(
                "{}: the control under full-access did not work either",
                case.name
            ));
        }
    }
    let _ = target.kill();
    let _ = target.wait();
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn the_root_and_the_session_directory_stay_writable() {
    let f = fixture();
    let out = run(
        &f,
        "workspace-write",
        "echo ok > src/new.rs && echo ok > \"$TMPDIR\"/scratch && cat src/new.rs && \
         echo \"$QORE_SANDBOX $QORE_SANDBOX_NETWORK_DISABLED\"",
    );
    assert_confined(&out, "controls");
    assert!(out.status.success());
    assert!(f.sess.join("scratch").exists());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("workspace-write 1"), "{text}");
}

#[test]
fn secrets_in_the_environment_are_scrubbed_unless_kept() {
    let f = fixture();
    let out = Command::new(QORE)
        .args(["sandbox-exec", "--keep-env", "KEPT_TOKEN", "--root"])
        .arg(&f.proj)
        .args(["--", "env"])
        .env("HOME", &f.home)
        .env("OPENAI_API_KEY", "sk-1")
        .env("GH_TOKEN", "t")
        .env("KEPT_TOKEN", "k")
        .env("HARMLESS", "h")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(
        !text.contains("OPENAI_API_KEY") && !text.contains("GH_TOKEN"),
        "{text}"
    );
    assert!(
        text.contains("KEPT_TOKEN=k") && text.contains("HARMLESS=h"),
        "{text}"
    );
}

#[test]
fn a_key_pushed_into_the_terminal_is_refused_under_a_pty() {
    let f = fixture();
    let py = python();
    let attempt = |mode: &str| {
        let inner = format!(
            "{QORE} sandbox-exec --mode {mode} --root {} -- {py} -c \"import fcntl,termios; fcntl.ioctl(0, termios.TIOCSTI, b'x')\"",
            f.proj.display()
        );
        let mut child = Command::new("script")
            .args(["-qec", &inner, "/dev/null"])
            .env("HOME", &f.home)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut text = String::new();
        child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut text)
            .unwrap();
        let status = child.wait().unwrap();
        eprintln!("[{mode}] TIOCSTI: {status:?} {text}");
        status.success()
    };
    assert!(!attempt("workspace-write"), "TIOCSTI worked in the sandbox");
    assert!(
        attempt("full-access"),
        "TIOCSTI control failed: not a sandbox proof"
    );
}

#[test]
fn a_setup_failure_exits_125_and_a_missing_program_127() {
    let f = fixture();
    let bad = Command::new(QORE)
        .args(["sandbox-exec", "--mode", "wide-open", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(125));
    let missing = Command::new(QORE)
        .args(["sandbox-exec", "--root"])
        .arg(&f.proj)
        .args(["--", "no-such-program-qore"])
        .env("HOME", &f.home)
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(127));
}
