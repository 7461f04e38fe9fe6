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
//!   an existing target keeps its permissions;
//! - [`Sandbox::create_new`] never replaces anything: the file is opened create-new;
//! - [`Sandbox::remove_file`] removes a file or symlink, never a directory.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Read, Seek, Write};
use std::path::Path;

use cap_std::fs::{Dir, Metadata, OpenOptions};

use crate::Sandbox;

impl Sandbox {
    /// Opens the existing file `abs` (a path [`Sandbox::resolve`] returned) for reading.
    pub fn open_file(&self, abs: &Path) -> io::Result<File> {
        let inner = self.inner(abs)?;
        self.refused(abs, self.dir.open(inner))
            .map(cap_std::fs::File::into_std)
    }

    /// The metadata of `abs`, following symlinks that stay inside the root.
    pub fn metadata(&self, abs: &Path) -> io::Result<Metadata> {
        let inner = self.inner(abs)?;
        self.refused(abs, self.dir.metadata(inner))
    }

    /// The whole contents of the file `abs`.
    pub fn read(&self, abs: &Path) -> io::Result<Vec<u8>> {
        let mut bytes = Vec::new();
        self.open_file(abs)?.read_to_end(&mut bytes)?;
        Ok(bytes)
    }

    /// Creates the file `abs` with `contents`, and its missing parent directories; fails
    /// with [`io::ErrorKind::AlreadyExists`] when anything (a symlink too) is there.
    pub fn create_new(&self, abs: &Path, contents: &[u8]) -> io::Result<()> {
        let (parent, name) = self.parent_of(abs)?;
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
