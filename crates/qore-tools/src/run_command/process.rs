//! The process side of a command: how it died (signal name and number) and the killing of
//! its whole process group.
//!
//! Promises: [`GroupKiller`] kills the group at most once, when told to or when dropped.

#[cfg(unix)]
pub(super) fn signal_of(status: &std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    status
        .signal()
        .map_or_else(|| "a signal".to_string(), |s| format!("signal {s}"))
}

#[cfg(unix)]
pub(super) fn signal_number(status: &std::process::ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt;
    status.signal()
}

#[cfg(not(unix))]
pub(super) fn signal_number(_status: &std::process::ExitStatus) -> Option<i32> {
    None
}

#[cfg(not(unix))]
pub(super) fn signal_of(_status: &std::process::ExitStatus) -> String {
    "a signal".to_string()
}

/// Kills a process group (Unix) when told to or when dropped, at most once.
pub(super) struct GroupKiller(pub(super) Option<u32>);

impl GroupKiller {
    pub(super) fn kill(&mut self) {
        #[cfg(unix)]
        if let Some(pid) = self.0.take() {
            if let Ok(pgid) = libc::pid_t::try_from(pid) {
                // SAFETY: kill(2) takes plain integers and touches no memory of ours. The
                // group was created for this child (process_group(0)), so -pgid names it
                // and nothing else.
                unsafe {
                    libc::kill(-pgid, libc::SIGKILL);
                }
            }
        }
        #[cfg(not(unix))]
        {
            self.0 = None;
        }
    }
}

impl Drop for GroupKiller {
    fn drop(&mut self) {
        self.kill();
    }
}
