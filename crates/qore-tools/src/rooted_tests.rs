use super::*;

fn sandbox() -> (tempfile::TempDir, Sandbox) {
    let dir = tempfile::tempdir().unwrap();
    let sandbox = Sandbox::new(dir.path()).unwrap();
    (dir, sandbox)
}

#[test]
fn replace_creates_replaces_and_keeps_permissions() {
    let (dir, sb) = sandbox();
    let target = sb.root().join("sub/f.txt");
    sb.replace(&target, b"one").unwrap();
    assert_eq!(std::fs::read(&target).unwrap(), b"one");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o751)).unwrap();
    }
    sb.replace(&target, b"two").unwrap();
    assert_eq!(sb.read(&target).unwrap(), b"two");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&target).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o751);
    }
    let leftovers: Vec<_> = std::fs::read_dir(dir.path().join("sub")).unwrap().collect();
    assert_eq!(leftovers.len(), 1, "no temp file is left behind");
}

#[test]
fn create_new_never_replaces() {
    let (_dir, sb) = sandbox();
    let target = sb.root().join("a/b/new.txt");
    sb.create_new(&target, b"first").unwrap();
    let err = sb.create_new(&target, b"second").unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
    assert_eq!(sb.read(&target).unwrap(), b"first");
}

#[test]
fn binary_sniffing_leaves_the_file_at_its_start() {
    let (_dir, sb) = sandbox();
    let target = sb.root().join("t.txt");
    sb.replace(&target, b"text\n").unwrap();
    let mut file = sb.open_file(&target).unwrap();
    assert!(!file_looks_binary(&mut file).unwrap());
    let mut all = String::new();
    file.read_to_string(&mut all).unwrap();
    assert_eq!(all, "text\n");
}

/// Opened once and judged by the handle: a directory or a FIFO (with a writer holding it
/// open, so a blocking open would go through) is refused, without blocking.
#[test]
fn only_regular_files_open() {
    let (dir, sb) = sandbox();
    std::fs::create_dir(dir.path().join("d")).unwrap();
    let mut cases = vec![("d", io::ErrorKind::IsADirectory)];
    #[cfg(unix)]
    let _writer = {
        let made = std::process::Command::new("mkfifo")
            .arg(dir.path().join("pipe"))
            .status()
            .unwrap();
        assert!(made.success());
        cases.push(("pipe", io::ErrorKind::InvalidInput));
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(dir.path().join("pipe"))
            .unwrap()
    };
    for (name, kind) in cases {
        let path = sb.root().join(name);
        let err = sb.open_file(&path).unwrap_err();
        assert_eq!(err.kind(), kind, "{name}: {err}");
        let err = sb.open_change(&path).err().unwrap();
        assert_eq!(err.kind(), kind, "{name}: {err}");
    }
}
