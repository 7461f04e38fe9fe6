//! What the running kernel offers the sandbox, for `qore sandbox check` and for the decision
//! to confine at all.
//!
//! Promises: [`probe`] asks the kernel itself (the Landlock version through
//! `landlock_create_ruleset(NULL, 0, VERSION)`, seccomp through `prctl(PR_GET_SECCOMP)`), and
//! `QORE_SANDBOX_SIMULATE_NO_LANDLOCK=1` makes it report no Landlock, so the path for kernels
//! without it can be tested on one that has it.

/// The environment variable that makes [`probe`] report no Landlock.
pub const SIMULATE_NO_LANDLOCK: &str = "QORE_SANDBOX_SIMULATE_NO_LANDLOCK";

/// The kernel's sandboxing features.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Support {
    /// Landlock ABI version (0: none).
    pub landlock_abi: i64,
    /// seccomp filters can be installed.
    pub seccomp: bool,
    /// The Landlock answer was simulated ([`SIMULATE_NO_LANDLOCK`]).
    pub simulated: bool,
}

impl Support {
    /// Can a command be confined (filesystem and syscalls)?
    pub fn confines(&self) -> bool {
        self.landlock_abi >= 1 && self.seccomp
    }

    /// What is missing, for people, one item per line (empty when nothing is).
    pub fn gaps(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        if self.landlock_abi < 1 {
            out.push("no Landlock: files cannot be confined");
        } else {
            if self.landlock_abi < 4 {
                out.push("Landlock < 4: no TCP rules (seccomp still blocks the network)");
            }
            if self.landlock_abi < 6 {
                out.push("Landlock < 6: signals and abstract Unix sockets are not scoped");
            }
        }
        if !self.seccomp {
            out.push("no seccomp: system calls cannot be filtered");
        }
        out
    }
}

/// Ask the kernel.
pub fn probe() -> Support {
    let simulated = std::env::var_os(SIMULATE_NO_LANDLOCK).is_some_and(|v| v == "1");
    // SAFETY: landlock_create_ruleset with a NULL attribute and the VERSION flag only
    // returns a number.
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            1u32,
        )
    };
    // SAFETY: prctl with integer arguments only.
    let seccomp = unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) } >= 0;
    Support {
        landlock_abi: if simulated { 0 } else { abi.max(0) },
        seccomp,
        simulated,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_name_what_is_missing() {
        let none = Support {
            landlock_abi: 0,
            seccomp: false,
            simulated: false,
        };
        assert!(!none.confines());
        assert_eq!(none.gaps().len(), 2);
        let old = Support {
            landlock_abi: 3,
            seccomp: true,
            simulated: false,
        };
        assert!(old.confines());
        assert_eq!(old.gaps().len(), 2);
        let new = Support {
            landlock_abi: 7,
            seccomp: true,
            simulated: false,
        };
        assert!(new.gaps().is_empty());
    }
}
