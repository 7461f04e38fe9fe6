//! The seccomp filter of a confined command.
//!
//! Promises (a denied call fails with `EPERM`, so programs print a readable error):
//! - always: `ptrace`, `process_vm_readv`/`writev`, `io_uring_*` (which could reach sockets
//!   without `socket()`), `ioctl(TIOCSTI)` and `ioctl(TIOCLINUX)` (typing into a terminal),
//!   `setsid` and `setpgid` (so nothing leaves the process group the caller kills at the
//!   end), `bpf`, `perf_event_open`, `userfaultfd`, `keyctl`, `add_key`, `request_key`;
//! - network off: `socket` for every family but `AF_UNIX`, and `AF_UNIX` datagram sockets
//!   (which could `sendto` a named socket without `connect`); `socketpair` for every family
//!   but `AF_UNIX`; `connect`, `bind`, `listen`, `accept`, `accept4`. So a command can still
//!   make local socket pairs (cargo, shells and test harnesses use them) but reach no socket,
//!   network or Unix, that it did not make;
//! - a syscall of another architecture kills the process (seccompiler's arch check), and on
//!   x86_64 so does one with the x32 bit, which would otherwise slip past every rule above.

use std::collections::BTreeMap;

use seccompiler::{
    sock_filter, BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition,
    SeccompFilter, SeccompRule, TargetArch,
};

use crate::SandboxError;

fn sc(e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Seccomp(e.to_string())
}

fn cond(arg: u8, op: SeccompCmpOp, value: u64) -> Result<SeccompCondition, SandboxError> {
    SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, value).map_err(sc)
}

fn rule(conditions: Vec<SeccompCondition>) -> Result<SeccompRule, SandboxError> {
    SeccompRule::new(conditions).map_err(sc)
}

/// The rules, by syscall number (an empty list: denied whatever the arguments).
fn rules(network: bool) -> Result<BTreeMap<i64, Vec<SeccompRule>>, SandboxError> {
    let mut map: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for nr in [
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_process_vm_writev,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_setsid,
        libc::SYS_setpgid,
        libc::SYS_bpf,
        libc::SYS_perf_event_open,
        libc::SYS_userfaultfd,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
    ] {
        map.insert(nr, Vec::new());
    }
    map.insert(
        libc::SYS_ioctl,
        vec![
            rule(vec![cond(1, SeccompCmpOp::Eq, libc::TIOCSTI)?])?,
            rule(vec![cond(1, SeccompCmpOp::Eq, libc::TIOCLINUX)?])?,
        ],
    );
    if !network {
        let unix = libc::AF_UNIX as u64;
        map.insert(
            libc::SYS_socket,
            vec![
                rule(vec![cond(0, SeccompCmpOp::Ne, unix)?])?,
                rule(vec![cond(
                    1,
                    SeccompCmpOp::MaskedEq(0xf),
                    libc::SOCK_DGRAM as u64,
                )?])?,
            ],
        );
        map.insert(
            libc::SYS_socketpair,
            vec![rule(vec![cond(0, SeccompCmpOp::Ne, unix)?])?],
        );
        for nr in [
            libc::SYS_connect,
            libc::SYS_bind,
            libc::SYS_listen,
            libc::SYS_accept,
            libc::SYS_accept4,
        ] {
            map.insert(nr, Vec::new());
        }
    }
    Ok(map)
}

fn target_arch() -> Result<TargetArch, SandboxError> {
    TargetArch::try_from(std::env::consts::ARCH).map_err(sc)
}

/// The programs to install, in order: one, so one `seccomp` call installs it (on x86_64 the
/// x32 guard comes first in it: BPF jumps are relative, so the filter after it is unchanged).
pub fn programs(network: bool) -> Result<Vec<BpfProgram>, SandboxError> {
    let filter = SeccompFilter::new(
        rules(network)?,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        target_arch()?,
    )
    .map_err(sc)?;
    let main: BpfProgram = filter.try_into().map_err(sc)?;
    let mut program = Vec::with_capacity(main.len() + 3);
    if cfg!(target_arch = "x86_64") {
        program.extend(x32_guard());
    }
    program.extend(main);
    Ok(vec![program])
}

/// Kill on a syscall number with the x32 bit (0x4000_0000) set; otherwise fall through to
/// the next instruction.
fn x32_guard() -> BpfProgram {
    const LD_W_ABS: u16 = 0x20;
    const JMP_JSET_K: u16 = 0x45;
    const RET_K: u16 = 0x06;
    vec![
        sock_filter {
            code: LD_W_ABS,
            jt: 0,
            jf: 0,
            k: 0,
        },
        sock_filter {
            code: JMP_JSET_K,
            jt: 0,
            jf: 1,
            k: 0x4000_0000,
        },
        sock_filter {
            code: RET_K,
            jt: 0,
            jf: 0,
            k: 0x8000_0000, // SECCOMP_RET_KILL_PROCESS
        },
    ]
}

/// Install the filters on the calling thread (no-new-privileges must be set).
pub fn install(network: bool) -> Result<(), SandboxError> {
    for program in programs(network)? {
        seccompiler::apply_filter(&program).map_err(sc)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_compile_for_both_network_settings() {
        for network in [false, true] {
            let programs = programs(network).unwrap();
            assert!(!programs[0].is_empty());
        }
        // Network off carries more rules than network on.
        assert!(programs(false).unwrap()[0].len() > programs(true).unwrap()[0].len());
    }
}
