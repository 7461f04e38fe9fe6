//! File access through the sandbox's handle on the project root.
//!
//! Promises:
//! - every read, write, metadata look-up and directory creation of the built-in file tools
//!   goes through a `cap_std` directory handle opened on the root at construction, with the
//!   path made relative to it. A path that would leave the root on its way, through `..` or
//!   through a symlink swapped in after [`Sandbox::resolve`] checked the path (a race with
//!   another process), is refused by the handle (on Linux by the kernel, `openat2` with
//!   `RESOLVE_BENEATH`), never followed; the refusal says which symlink leads out;
//! - [`Sandbox::replace`] never leaves a half-written file: the contents go to a temporary
//!   file in the target's directory (`cap_tempfile`), which is then renamed over the target;
//!   an existing target keeps its permissions; a symlink at the target is refused;
//! - [`Sandbox::create_new`] never replaces anything: the file is opened create-new;
//! - [`Sandbox::remove_file`] removes a file or symlink, never a directory;
//! - a file is opened once and judged by its handle's metadata, never by a look-up before
//!   the open: [`Sandbox::open_file`] opens without blocking (a FIFO cannot hang it) and
//!   refuses directories ([`io::ErrorKind::IsADirectory`]) and anything not a regular file
//!   ([`io::ErrorKind::InvalidInput`]);
//! - [`Sandbox::open_change`] opens the file about to be changed without following a symlink
//!   (the path was checked canonical, so a symlink there was swapped in), and
//!   [`Sandbox::write_change`] writes only over what it opened: when the name now holds
//!   something else (a symlink, another file), nothing is written and the write is refused;
//!   where nothing was, it creates the file create-new, replacing nothing that appeared.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Read, Seek, Write};
use std::path::Path;

use cap_std::fs::{Dir, Metadata, OpenOptions};

use crate::Sandbox;

impl Sandbox {
    /// Opens the existing regular file `abs` (a path [`Sandbox::resolve`] returned) for
    /// reading; see the module doc for what else is refused.
    pub fn open_file(&self, abs: &Path) -> io::Result<File> {
        let inner = self.inner(abs)?;
        let file = self.refused(abs, self.dir.open_with(inner, &read_options()))?;
        regular(&file)?;
        Ok(file.into_std())
    }

    /// Opens the file `abs` (a path [`Sandbox::resolve_writable`] returned) for a change: what
    /// is there now (nothing, or a regular file and its contents), held until
    /// [`Sandbox::write_change`]. Missing parent directories are created. A symlink at `abs`
    /// is refused ([`io::ErrorKind::PermissionDenied`]), and so are directories and other
    /// files as [`Sandbox::open_file`] refuses them.
    pub fn open_change(&self, abs: &Path) -> io::Result<Change> {
        let (parent, name) = self.parent_of(abs)?;
        let mut options = read_options();
        options._cap_fs_ext_follow(cap_primitives::fs::FollowSymlinks::No);
        let mut held = match parent.open_with(name, &options) {
            Ok(file) => Some(file),
            Err(err) if err.kind() == io::ErrorKind::NotFound => None,
            Err(err) if parent.symlink_metadata(name).is_ok_and(|m| m.is_symlink()) => {
                return Err(swapped(abs, err));
            }
            Err(err) => return self.refused(abs, Err(err)),
        };
        let old = match held.as_mut() {
            Some(file) => {
                regular(file)?;
                let mut bytes = Vec::new();
                file.read_to_end(&mut bytes)?;
                Some(bytes)
            }
            None => None,
        };
        Ok(Change {
            parent,
            name: name.to_owned(),
            held,
            old,
        })
    }

    /// Writes `contents` over what `change` opened, atomically (as [`Sandbox::replace`]), or,
    /// when there was nothing, into a new file opened create-new (as [`Sandbox::create_new`],
    /// failing with [`io::ErrorKind::AlreadyExists`] when something appeared). Refused, with
    /// nothing written, when the name no longer holds what was opened.
    pub fn write_change(&self, abs: &Path, change: Change, contents: &[u8]) -> io::Result<()> {
        let Change {
            parent, name, held, ..
        } = change;
        let Some(held) = held else {
            return self.create_in(abs, &parent, &name, contents);
        };
        let now = parent.symlink_metadata(&name);
        if !now
            .as_ref()
            .is_ok_and(|now| held.metadata().is_ok_and(|was| same_file(&was, now)))
        {
            return Err(swapped(
                abs,
                io::Error::other("the name holds something else now"),
            ));
        }
        let mut tmp = cap_tempfile::TempFile::new(&parent)?;
        tmp.write_all(contents)?;
        tmp.as_file()
            .set_permissions(held.metadata()?.permissions())?;
        tmp.as_file().sync_all()?;
        self.refused(abs, tmp.replace(&name))
    }

    /// The metadata of `abs`, following symlinks that stay inside the root.
    pub fn metadata(&self, abs: &Path) -> io::Result<Metadata> {
        let inner = self.inner(abs)?;
        self.refused(abs, self.dir.metadata(inner))
    }

    /// The whole contents of the regular file `abs`.
    pub fn read(&self, abs: &Path) -> io::Result<Vec<u8>> {
        let mut bytes = Vec::new();
        self.open_file(abs)?.read_to_end(&mut bytes)?;
        Ok(bytes)
    }

    /// Creates the file `abs` with `contents`, and its missing parent directories; fails
    /// with [`io::ErrorKind::AlreadyExists`] when anything (a symlink too) is there.
    pub fn create_new(&self, abs: &Path, contents: &[u8]) -> io::Result<()> {
        let (parent, name) = self.parent_of(abs)?;
        self.create_in(abs, &parent, name, contents)
    }

    /// Creates `name` in `parent` (the directory of `abs`) create-new, with `contents`.
    fn create_in(&self, abs: &Path, parent: &Dir, name: &OsStr, contents: &[u8]) -> io::Result<()> {
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        let mut file = self.refused(abs, parent.open_with(name, &options))?;
        file.write_all(contents)?;
        file.sync_all()
    }

    /// Replaces the contents of `abs` (which may not exist yet; missing parent directories
    /// are created) atomically; see the module doc.
    pub fn replace(&self, abs: &Path, contents: &[u8]) -> io::Result<()> {
        let (parent, name) = self.parent_of(abs)?;
        if parent.symlink_metadata(name).is_ok_and(|m| m.is_symlink()) {
            return Err(swapped(abs, io::Error::other("it is a symlink")));
        }
        let permissions = parent.metadata(name).ok().map(|m| m.permissions());
        let mut tmp = cap_tempfile::TempFile::new(&parent)?;
        tmp.write_all(contents)?;
        if let Some(permissions) = permissions {
            tmp.as_file().set_permissions(permissions)?;
        }
        tmp.as_file().sync_all()?;
        self.refused(abs, tmp.replace(name))
    }

    /// Removes the file `abs` (a symlink itself, never its target; never a directory).
    pub fn remove_file(&self, abs: &Path) -> io::Result<()> {
        let inner = self.inner(abs)?;
        self.refused(abs, self.dir.remove_file(inner))
    }

    /// The directory holding `abs` (created when missing), and the name of `abs` in it.
    fn parent_of<'a>(&self, abs: &'a Path) -> io::Result<(Dir, &'a OsStr)> {
        let inner = self.inner(abs)?;
        let name = inner
            .file_name()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the path names no file"))?;
        let parent = match inner.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let opened = match self.dir.open_dir(parent) {
            Err(err) if err.kind() == io::ErrorKind::NotFound => self
                .dir
                .create_dir_all(parent)
                .and_then(|()| self.dir.open_dir(parent)),
            opened => opened,
        };
        Ok((self.refused(abs, opened)?, name))
    }

    /// `abs` relative to the root, for the handle (`.` for the root itself).
    fn inner<'a>(&self, abs: &'a Path) -> io::Result<&'a Path> {
        match abs.strip_prefix(self.root()) {
            Ok(rel) if rel.as_os_str().is_empty() => Ok(Path::new(".")),
            Ok(rel) => Ok(rel),
            Err(_) => Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!("`{}` is outside the project root", abs.display()),
            )),
        }
    }

    /// `result`, with a refusal of the handle explained: when the path, checked again, now
    /// leaves the root, the error says how (the symlink), instead of the handle's generic
    /// "a path led outside of the filesystem". "Not found" and "already exists" stay as they
    /// are: the tools answer those themselves.
    fn refused<T>(&self, abs: &Path, result: io::Result<T>) -> io::Result<T> {
        use io::ErrorKind::{AlreadyExists, NotFound};
        match result {
            Err(err) if !matches!(err.kind(), NotFound | AlreadyExists) => {
                match self.resolve(&abs.to_string_lossy()) {
                    Err(why) => Err(io::Error::new(io::ErrorKind::PermissionDenied, why)),
                    Ok(_) => Err(err),
                }
            }
            other => other,
        }
    }
}

/// A file opened for a change by [`Sandbox::open_change`].
pub struct Change {
    parent: Dir,
    name: OsString,
    held: Option<cap_std::fs::File>,
    old: Option<Vec<u8>>,
}

impl Change {
    /// The contents when opened; `None` when there was no file.
    pub fn old(&self) -> Option<&[u8]> {
        self.old.as_deref()
    }
}

/// Read-only, never blocking on a FIFO or device.
fn read_options() -> OpenOptions {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use cap_std::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    options
}

/// Refuses, by the handle's own metadata, anything but a regular file.
fn regular(file: &cap_std::fs::File) -> io::Result<()> {
    let meta = file.metadata()?;
    if meta.is_dir() {
        Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            "it is a directory",
        ))
    } else if !meta.is_file() {
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "it is not a regular file (a pipe, socket or device)",
        ))
    } else {
        Ok(())
    }
}

#[cfg(unix)]
fn same_file(a: &Metadata, b: &Metadata) -> bool {
    use cap_std::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(not(unix))]
fn same_file(a: &Metadata, b: &Metadata) -> bool {
    a.file_type() == b.file_type() && a.len() == b.len() && a.modified().ok() == b.modified().ok()
}

fn swapped(abs: &Path, err: io::Error) -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!(
            "`{}` was swapped for a symlink or another file while it was being changed \
             ({err}); nothing was written",
            abs.display()
        ),
    )
}

/// Whether the file looks binary (a NUL in its first 8 KiB); the file is read from the
/// start and left at the start.
pub fn file_looks_binary(file: &mut File) -> io::Result<bool> {
    let mut buf = Vec::with_capacity(crate::util::BINARY_SNIFF_BYTES);
    Read::by_ref(file)
        .take(crate::util::BINARY_SNIFF_BYTES as u64)
        .read_to_end(&mut buf)?;
    file.rewind()?;
    Ok(crate::util::looks_binary(&buf))
}

#[cfg(test)]
#[path = "rooted_tests.rs"]
mod tests;
