//! The helper's work: confine the current process by a policy, then exec the command.
//!
//! Promises, in this order:
//! 1. inherited descriptors above 2 are marked close-on-exec (`close_range`, else
//!    `/proc/self/fd`), so no socket or file of the caller reaches the command;
//! 2. a new session (`setsid`): no controlling terminal to inject keys into, and one process
//!    group for the caller to kill. When the helper already leads a group (a shell's job),
//!    it forks once and the parent only waits and passes the exit status on;
//! 3. (not in full access) a kernel without Landlock or seccomp (or one that simulates
//!    that, see [`crate::SIMULATE_NO_LANDLOCK`]) is refused before anything runs; the
//!    Landlock ruleset is built with every path opened, then every
//!    capability is dropped (bounding, ambient, inheritable, permitted, effective: this
//!    matters as root), no-new-privileges is set, Landlock is enforced (refused when the
//!    kernel enforces nothing) and the seccomp filter installed;
//! 4. the environment is scrubbed ([`Policy::scrub_env`]), `TMPDIR` points at the session's
//!    directory, `QORE_SANDBOX` names the mode and `QORE_SANDBOX_NETWORK_DISABLED=1` is set
//!    when the network is off; then the program is executed (searched on `PATH`).
//!
//! It returns only on failure, with what failed.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;

use crate::landlock_rules::{self, Enforced};
use crate::policy::Mode;
use crate::{seccomp, Policy, SandboxError};

/// Confine the process by `policy` and exec `argv`. Returns only on failure.
pub fn exec(policy: &Policy, argv: &[OsString]) -> SandboxError {
    match confine_and_exec(policy, argv) {
        Ok(never) => match never {},
        Err(e) => e,
    }
}

fn confine_and_exec(
    policy: &Policy,
    argv: &[OsString],
) -> Result<std::convert::Infallible, SandboxError> {
    let Some(program) = argv.first() else {
        return Err(SandboxError::NoCommand);
    };
    cloexec_inherited();
    new_session()?;
    if policy.mode != Mode::FullAccess {
        let support = crate::probe();
        if !support.confines() {
            return Err(SandboxError::Unsupported(support.gaps().join("; ")));
        }
        let prepared = landlock_rules::prepare(policy)?;
        drop_capabilities()?;
        set_no_new_privs()?;
        let enforced = landlock_rules::restrict(prepared)?;
        if enforced == Enforced::Partially {
            eprintln!(
                "qore sandbox: this kernel's Landlock enforces only part of the policy \
                 (see `qore sandbox check`)"
            );
        }
        seccomp::install(policy.network)?;
    }
    let mut command = std::process::Command::new(program);
    command
        .args(&argv[1..])
        .env_clear()
        .envs(policy.scrub_env(std::env::vars_os()))
        .env("QORE_SANDBOX", policy.mode.name());
    if !policy.network && policy.mode != Mode::FullAccess {
        command.env("QORE_SANDBOX_NETWORK_DISABLED", "1");
    }
    if let Some(tmp) = &policy.session_tmp {
        command.env("TMPDIR", tmp);
    }
    let err = command.exec();
    Err(SandboxError::Exec {
        program: program.to_string_lossy().into_owned(),
        source: err,
    })
}

fn cloexec_inherited() {
    // SAFETY: close_range(2) takes integers; CLOSE_RANGE_CLOEXEC only sets flags.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            3u32,
            u32::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        )
    };
    if rc == 0 {
        return;
    }
    let Ok(entries) = std::fs::read_dir("/proc/self/fd") else {
        return;
    };
    let fds: Vec<i32> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse().ok()))
        .filter(|fd| *fd > 2)
        .collect();
    for fd in fds {
        // SAFETY: fcntl on a descriptor number; an already closed one gives EBADF.
        unsafe {
            libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
        }
    }
}

fn new_session() -> Result<(), SandboxError> {
    // SAFETY: setsid(2) has no arguments.
    if unsafe { libc::setsid() } >= 0 {
        return Ok(());
    }
    // Already a group leader: fork, the child makes the session, the parent waits.
    // SAFETY: the helper is single-threaded here (it runs before any runtime starts).
    match unsafe { libc::fork() } {
        -1 => Err(SandboxError::Setup("fork", std::io::Error::last_os_error())),
        0 => {
            // SAFETY: as above; the child leads no group.
            if unsafe { libc::setsid() } < 0 {
                return Err(SandboxError::Setup(
                    "setsid",
                    std::io::Error::last_os_error(),
                ));
            }
            Ok(())
        }
        child => {
            let mut status = 0;
            // SAFETY: waits for our own child; status is a local.
            while unsafe { libc::waitpid(child, &mut status, 0) } < 0 {
                if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
                    std::process::exit(1);
                }
            }
            let code = if libc::WIFEXITED(status) {
                libc::WEXITSTATUS(status)
            } else {
                128 + libc::WTERMSIG(status)
            };
            std::process::exit(code);
        }
    }
}

fn drop_capabilities() -> Result<(), SandboxError> {
    use caps::CapSet;
    let err = |e: caps::errors::CapsError| SandboxError::Capabilities(e.to_string());
    // Without CAP_SETPCAP the bounding set cannot shrink, and then there is nothing in it
    // worth dropping for an unprivileged user; as root it is there and this works.
    if caps::has_cap(None, CapSet::Effective, caps::Capability::CAP_SETPCAP).unwrap_or(false) {
        caps::clear(None, CapSet::Bounding).map_err(err)?;
    }
    caps::clear(None, CapSet::Ambient).map_err(err)?;
    caps::clear(None, CapSet::Inheritable).map_err(err)?;
    caps::clear(None, CapSet::Effective).map_err(err)?;
    caps::clear(None, CapSet::Permitted).map_err(err)?;
    Ok(())
}

fn set_no_new_privs() -> Result<(), SandboxError> {
    // SAFETY: prctl with integer arguments only.
    if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
        return Err(SandboxError::Setup(
            "no_new_privs",
            std::io::Error::last_os_error(),
        ));
    }
    Ok(())
}
