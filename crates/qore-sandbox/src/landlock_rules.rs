//! The Landlock ruleset of a policy: which trees are readable, which writable, TCP and
//! scoping.
//!
//! Promises:
//! - every filesystem right of ABI 5 is handled; rights are granted only on the trees listed
//!   below, so anything else is denied by the kernel;
//! - readable: every tree except the policy's unreadable places. Landlock only adds rights,
//!   so "everything but X" is built by granting read on the children of each ancestor of X
//!   (from `/` down) except X itself; the ancestors themselves get `READ_DIR` only, so their
//!   listings stay visible (the names in `~/.ssh` can be listed, its files not read); a
//!   child that is a symlink into or above an unreadable place is not granted;
//! - writable: the children of the project root that exist when the helper starts, except
//!   [`PROTECTED`](crate::PROTECTED) and symlinks (a symlink would grant its target: out of
//!   the root, or `.git` itself); the session's temporary directory; the extra writable
//!   roots; `/dev/null`, `/dev/zero`, `/dev/full`. A writable place that holds or lies in an
//!   unreadable one is left out. The root directory itself is readable only: a right
//!   granted on a directory covers everything beneath it, so write on the root would be
//!   write on `.git/hooks` too. The cost: a command cannot create, remove or rename entries
//!   directly in the root (see the crate docs);
//! - network off: TCP bind and connect are handled and granted nowhere (ABI 4);
//! - always: abstract Unix sockets and signals are scoped to the sandbox (ABI 6);
//! - [`restrict`] fails when the kernel enforced nothing (`NotEnforced`): the caller never
//!   runs a command it believes confined without confinement.

use std::path::{Path, PathBuf};

use landlock::{
    Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreated, RulesetCreatedAttr, RulesetStatus, Scope, ABI,
};

use crate::policy::{canonical, Mode};
use crate::{Policy, SandboxError, PROTECTED};

/// What Landlock enforced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enforced {
    Fully,
    Partially,
}

/// A ruleset with every path opened: build it before capabilities are dropped (so the
/// helper can still open every directory), restrict after.
pub struct Prepared(RulesetCreated);

fn ll(e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Landlock(e.to_string())
}

/// The trees granted read and write for `policy` (not for full access, which has none).
pub fn grants(policy: &Policy) -> (Vec<PathBuf>, Vec<PathBuf>, Vec<PathBuf>) {
    let unreadable: Vec<PathBuf> = policy
        .unreadable
        .iter()
        .flat_map(|u| [u.clone(), canonical(u)])
        .collect();
    let mut list_only = Vec::new();
    let mut read = Vec::new();
    read_tree(Path::new("/"), &unreadable, &mut list_only, &mut read);
    let mut write = Vec::new();
    if policy.mode == Mode::WorkspaceWrite {
        if let Ok(entries) = std::fs::read_dir(&policy.root) {
            for entry in entries.flatten() {
                let name = entry.file_name();
                // A symlink would grant its target: out of the root, or onto `.git`.
                let symlink = entry.file_type().is_ok_and(|t| t.is_symlink());
                if symlink || PROTECTED.iter().any(|p| name == *p) {
                    continue;
                }
                write.push(entry.path());
            }
        }
        write.extend(policy.writable.iter().cloned());
    }
    write.extend(policy.session_tmp.iter().cloned());
    // A writable tree that holds (or lies in) an unreadable place would grant reading it:
    // such a tree is not writable at all.
    write.retain(|w| {
        let real = canonical(w);
        !unreadable
            .iter()
            .any(|u| u.starts_with(&real) || real.starts_with(u))
    });
    (list_only, read, write)
}

/// Grants under `dir`, an ancestor of some unreadable place (or `/`).
fn read_tree(
    dir: &Path,
    unreadable: &[PathBuf],
    list_only: &mut Vec<PathBuf>,
    read: &mut Vec<PathBuf>,
) {
    list_only.push(dir.to_path_buf());
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(real) = std::fs::canonicalize(&path) else {
            continue;
        };
        if unreadable
            .iter()
            .any(|u| real.starts_with(u) || path.starts_with(u))
        {
            continue;
        }
        let above = unreadable
            .iter()
            .any(|u| u.starts_with(&real) || u.starts_with(&path));
        if !above {
            read.push(path);
        } else if entry.file_type().is_ok_and(|t| t.is_dir()) {
            read_tree(&path, unreadable, list_only, read);
        }
    }
}

/// The ruleset of `policy`, every path opened, not yet enforced.
pub fn prepare(policy: &Policy) -> Result<Prepared, SandboxError> {
    let fs_all = AccessFs::from_all(ABI::V5);
    let reading: BitFlags<AccessFs> = AccessFs::from_read(ABI::V5) | AccessFs::IoctlDev;
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(fs_all)
        .map_err(ll)?;
    if !policy.network {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(ABI::V4))
            .map_err(ll)?;
    }
    ruleset = ruleset.scope(Scope::from_all(ABI::V6)).map_err(ll)?;
    let mut created = ruleset.create().map_err(ll)?;
    let (list_only, read, write) = grants(policy);
    let mut rules: Vec<(PathBuf, BitFlags<AccessFs>)> = Vec::new();
    rules.extend(list_only.into_iter().map(|p| (p, AccessFs::ReadDir.into())));
    rules.extend(read.into_iter().map(|p| (p, reading)));
    rules.extend(write.into_iter().map(|p| (p, fs_all)));
    for dev in ["/dev/null", "/dev/zero", "/dev/full"] {
        rules.push((PathBuf::from(dev), AccessFs::from_file(ABI::V5)));
    }
    for (path, access) in rules {
        // A place that vanished since it was listed (or cannot be opened) gets no rule:
        // nothing is granted on it, which is the safe side.
        let Ok(fd) = PathFd::new(&path) else {
            continue;
        };
        let is_dir = std::fs::metadata(&path).is_ok_and(|m| m.is_dir());
        let access = if is_dir {
            access
        } else {
            access & AccessFs::from_file(ABI::V5)
        };
        created = created.add_rule(PathBeneath::new(fd, access)).map_err(ll)?;
    }
    Ok(Prepared(created))
}

/// Enforce a prepared ruleset on the calling thread (and what it executes).
pub fn restrict(prepared: Prepared) -> Result<Enforced, SandboxError> {
    let status = prepared.0.restrict_self().map_err(ll)?;
    match status.ruleset {
        RulesetStatus::FullyEnforced => Ok(Enforced::Fully),
        RulesetStatus::PartiallyEnforced => Ok(Enforced::Partially),
        RulesetStatus::NotEnforced => Err(SandboxError::NotEnforced),
    }
}
