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
    let g = grants_typed(policy);
    let paths = |v: Vec<Grant>| v.into_iter().map(|g| g.path).collect();
    (paths(g.list_only), paths(g.read), paths(g.write))
}

/// A granted place and whether it is a directory, when the listing said so (`None`: ask).
struct Grant {
    path: PathBuf,
    dir: Option<bool>,
}

impl Grant {
    fn of(entry: &std::fs::DirEntry) -> Grant {
        let dir = entry.file_type().ok().map(|t| t.is_dir());
        Grant {
            path: entry.path(),
            dir,
        }
    }

    fn unknown(path: PathBuf) -> Grant {
        Grant { path, dir: None }
    }
}

struct Grants {
    list_only: Vec<Grant>,
    read: Vec<Grant>,
    write: Vec<Grant>,
}

/// [`grants`] with what the listings said of each place. Speed matters here (it runs before
/// every command): the kind of an entry comes from the directory listing, and only symlinks
/// and the policy's own paths are resolved (an entry of a canonical directory that is not a
/// symlink is canonical already).
fn grants_typed(policy: &Policy) -> Grants {
    let mut unreadable: Vec<PathBuf> = policy
        .unreadable
        .iter()
        .flat_map(|u| [u.clone(), canonical(u)])
        .map(|u| u.components().collect::<PathBuf>())
        .collect();
    unreadable.sort();
    unreadable.dedup();
    let mut list_only = Vec::new();
    let mut read = Vec::new();
    read_tree(Path::new("/"), &unreadable, &mut list_only, &mut read);
    // (place, its real path)
    let mut write: Vec<(Grant, PathBuf)> = Vec::new();
    if policy.mode == Mode::WorkspaceWrite {
        let root = canonical(&policy.root);
        if let Ok(entries) = std::fs::read_dir(&root) {
            for entry in entries.flatten() {
                let name = entry.file_name();
                // A symlink would grant its target: out of the root, or onto `.git`.
                let symlink = entry.file_type().is_ok_and(|t| t.is_symlink());
                if symlink || PROTECTED.iter().any(|p| name == *p) {
                    continue;
                }
                let grant = Grant::of(&entry);
                let real = grant.path.clone();
                write.push((grant, real));
            }
        }
        write.extend((policy.writable.iter()).map(|w| (Grant::unknown(w.clone()), canonical(w))));
    }
    write.extend((policy.session_tmp.iter()).map(|t| (Grant::unknown(t.clone()), canonical(t))));
    // A writable tree that holds (or lies in) an unreadable place would grant reading it:
    // such a tree is not writable at all.
    write.retain(|(_, real)| {
        !unreadable
            .iter()
            .any(|u| within(u, real) || within(real, u))
    });
    Grants {
        list_only,
        read,
        write: write.into_iter().map(|(g, _)| g).collect(),
    }
}

/// Is `path` `base` or beneath it? Both normalized, as `Path::components` gives them (no
/// `//`, no trailing `/`): a byte comparison, where `Path::starts_with` walks components,
/// which was the helper's busiest user-space code.
fn within(path: &Path, base: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let (p, b) = (path.as_os_str().as_bytes(), base.as_os_str().as_bytes());
    p.starts_with(b) && (p.len() == b.len() || b.ends_with(b"/") || p.get(b.len()) == Some(&b'/'))
}

/// Grants under `dir` (canonical), an ancestor of some unreadable place (or `/`).
fn read_tree(
    dir: &Path,
    unreadable: &[PathBuf],
    list_only: &mut Vec<Grant>,
    read: &mut Vec<Grant>,
) {
    list_only.push(Grant {
        path: dir.to_path_buf(),
        dir: Some(true),
    });
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let kind = entry.file_type().ok();
        // Only a symlink's real path differs from its path (`dir` is canonical).
        let real = if kind.is_some_and(|t| t.is_symlink()) {
            match std::fs::canonicalize(&path) {
                Ok(real) => real,
                Err(_) => continue,
            }
        } else {
            path.clone()
        };
        if unreadable
            .iter()
            .any(|u| within(&real, u) || within(&path, u))
        {
            continue;
        }
        let above = unreadable
            .iter()
            .any(|u| within(u, &real) || within(u, &path));
        if !above {
            let dir = match kind {
                Some(t) if !t.is_symlink() => Some(t.is_dir()),
                _ => None,
            };
            read.push(Grant { path, dir });
        } else if kind.is_some_and(|t| t.is_dir()) {
            read_tree(&path, unreadable, list_only, read);
        }
    }
}

/// The ruleset of `policy`, every path opened, not yet enforced.
pub fn prepare(policy: &Policy) -> Result<Prepared, SandboxError> {
    let fs_all = AccessFs::from_all(ABI::V5);
    let file_rights = AccessFs::from_file(ABI::V5);
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
    let g = grants_typed(policy);
    let mut rules: Vec<(Grant, BitFlags<AccessFs>)> = Vec::new();
    rules.extend(
        g.list_only
            .into_iter()
            .map(|p| (p, AccessFs::ReadDir.into())),
    );
    rules.extend(g.read.into_iter().map(|p| (p, reading)));
    rules.extend(g.write.into_iter().map(|p| (p, fs_all)));
    for dev in ["/dev/null", "/dev/zero", "/dev/full"] {
        let grant = Grant {
            path: PathBuf::from(dev),
            dir: Some(false),
        };
        rules.push((grant, file_rights));
    }
    for (grant, access) in rules {
        // A place that vanished since it was listed (or cannot be opened) gets no rule:
        // nothing is granted on it, which is the safe side.
        let Ok(fd) = PathFd::new(&grant.path) else {
            continue;
        };
        let is_dir = match grant.dir {
            Some(dir) => dir,
            None => std::fs::metadata(&grant.path).is_ok_and(|m| m.is_dir()),
        };
        let access = if is_dir { access } else { access & file_rights };
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

#[cfg(test)]
mod tests {
    use super::within;
    use std::path::Path;

    #[test]
    fn within_is_a_component_prefix() {
        // (path, base, within?)
        let cases = [
            ("/home/u/.ssh", "/home/u/.ssh", true),
            ("/home/u/.ssh/id_rsa", "/home/u/.ssh", true),
            ("/home/u/.sshx", "/home/u/.ssh", false),
            ("/home/u", "/home/u/.ssh", false),
            ("/etc", "/", true),
            ("/", "/", true),
            ("/home/u/.config/qore-other", "/home/u/.config/qore", false),
        ];
        for (path, base, want) in cases {
            assert_eq!(
                within(Path::new(path), Path::new(base)),
                want,
                "{path} in {base}"
            );
            assert_eq!(Path::new(path).starts_with(base), want, "{path} in {base}");
        }
    }
}
