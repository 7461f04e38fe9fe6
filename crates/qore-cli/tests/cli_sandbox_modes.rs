//! `qore sandbox-exec` beyond the escape list: what each mode and the network switch allow,
//! the seccomp rules that have no escape of their own (io_uring, the x32 bit), local socket
//! pairs still working with the network off, and the documented cost of a read-only `.git`
//! (no new entries directly in the root). Each row runs one shell script and says whether it
//! must succeed.

use std::net::TcpListener;
use std::os::linux::net::SocketAddrExt as _;
use std::os::unix::net::{SocketAddr, UnixListener};
use std::path::PathBuf;
use std::process::{Command, Stdio};

const QORE: &str = env!("CARGO_BIN_EXE_qore");
const PY: &str = "/usr/bin/python3";

fn run(root: &PathBuf, tmp: &PathBuf, mode: &str, network: &str, script: &str) -> bool {
    let out = Command::new(QORE)
        .args([
            "sandbox-exec",
            "--mode",
            mode,
            "--network",
            network,
            "--root",
        ])
        .arg(root)
        .arg("--tmpdir")
        .arg(tmp)
        .args(["--", "sh", "-c", script])
        .current_dir(root)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    eprintln!(
        "[{mode} net={network}] {script}: {:?}\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out.status.success()
}

#[test]
fn modes_network_and_syscall_rules_behave_as_documented() {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let root = base.join("proj");
    let tmp = base.join("sess");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::create_dir_all(&tmp).unwrap();
    let tcp = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = tcp.local_addr().unwrap().port();
    let name = format!("qore-sandbox-modes-{}", std::process::id());
    let _abs =
        UnixListener::bind_addr(&SocketAddr::from_abstract_name(name.as_bytes()).unwrap()).unwrap();
    let mut target = Command::new("sleep").arg("30").spawn().unwrap();
    let tcp_connect = format!("exec bash -c 'exec 3<>/dev/tcp/127.0.0.1/{port}'");
    let abstract_connect =
        format!("{PY} -c \"import socket; socket.socket(socket.AF_UNIX).connect('\\0{name}')\"");
    let ptrace = format!(
        "{PY} -c \"import ctypes,sys; l=ctypes.CDLL(None); sys.exit(0 if l.ptrace(16, {}, 0, 0) == 0 else 1)\"",
        target.id()
    );
    let io_uring = format!(
        "{PY} -c \"import ctypes,sys; l=ctypes.CDLL(None); p=ctypes.create_string_buffer(120); sys.exit(0 if l.syscall(425, 4, p) >= 0 else 1)\""
    );
    let x32 = format!("{PY} -c \"import ctypes; ctypes.CDLL(None).syscall(0x40000027)\"");
    let socketpair = format!(
        "{PY} -c \"import socket; a,b=socket.socketpair(); a.send(b'x'); assert b.recv(1)==b'x'\""
    );
    // (mode, network, script, must succeed)
    let cases: Vec<(&str, &str, String, bool)> = vec![
        ("read-only", "off", "echo x > src/a.txt".into(), false),
        (
            "read-only",
            "off",
            "echo x > \"$TMPDIR\"/a.txt".into(),
            true,
        ),
        ("workspace-write", "off", "echo x > src/b.txt".into(), true),
        // The cost of a read-only .git: no new entries directly in the root.
        (
            "workspace-write",
            "off",
            "echo x > new-top.txt".into(),
            false,
        ),
        ("full-access", "off", "echo x > new-top.txt".into(), true),
        ("workspace-write", "off", socketpair.clone(), true),
        ("workspace-write", "off", tcp_connect.clone(), false),
        ("workspace-write", "on", tcp_connect.clone(), true),
        ("workspace-write", "on", abstract_connect.clone(), false),
        ("full-access", "on", abstract_connect.clone(), true),
        ("workspace-write", "on", ptrace.clone(), false),
        ("workspace-write", "off", io_uring.clone(), false),
        ("full-access", "off", io_uring.clone(), true),
        ("workspace-write", "off", x32.clone(), false),
        ("full-access", "off", x32.clone(), true),
    ];
    let mut wrong = Vec::new();
    for (mode, network, script, ok) in &cases {
        if run(&root, &tmp, mode, network, script) != *ok {
            wrong.push(format!(
                "{mode} network {network}: {script}: expected success {ok}"
            ));
        }
    }
    let _ = target.kill();
    let _ = target.wait();
    assert!(wrong.is_empty(), "{wrong:#?}");
}
