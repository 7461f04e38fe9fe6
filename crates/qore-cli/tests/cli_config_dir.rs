//! Where `qore` finds its config dir: `QORE_CONFIG_DIR`, else `qore` in the platform's
//! config dir (on Unix-likes `$XDG_CONFIG_HOME/qore` when that is an absolute path, else
//! `~/.config/qore`). `qore config init` writes there, so the files show where it looked.
#![cfg(unix)]

mod common;

use common::{command, run_cmd};

#[tokio::test]
async fn the_config_dir_follows_qore_config_dir_then_xdg_then_home() {
    // (QORE_CONFIG_DIR, XDG_CONFIG_HOME, where the starter config lands); paths are under
    // a fresh temp dir, which is also HOME; `-` leaves the variable unset.
    let cases = [
        ("own", "xdg", "own"),
        ("-", "xdg", "xdg/qore"),
        ("-", "-", "home/.config/qore"),
        // A relative XDG_CONFIG_HOME is invalid by the spec and ignored.
        ("-", "relative/xdg", "home/.config/qore"),
        ("", "-", "home/.config/qore"),
    ];
    for (qore_dir, xdg, expected) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let at = |rel: &str| tmp.path().join(rel);
        let mut cmd = command(&["config", "init"]);
        // A relative path would land under the working directory: the temp dir.
        cmd.current_dir(tmp.path())
            .env("HOME", at("home"))
            .env_remove("QORE_CONFIG_DIR")
            .env_remove("XDG_CONFIG_HOME");
        match qore_dir {
            "-" => {}
            "" => {
                cmd.env("QORE_CONFIG_DIR", "");
            }
            dir => {
                cmd.env("QORE_CONFIG_DIR", at(dir));
            }
        }
        match xdg {
            "-" => {}
            "relative/xdg" => {
                cmd.env("XDG_CONFIG_HOME", xdg);
            }
            dir => {
                cmd.env("XDG_CONFIG_HOME", at(dir));
            }
        }
        let run = run_cmd(cmd).await;
        let case = format!("QORE_CONFIG_DIR={qore_dir} XDG_CONFIG_HOME={xdg}");
        assert_eq!(run.code, Some(0), "{case}: {run:?}");
        assert!(
            at(expected).join("pipelines.toml").is_file(),
            "{case}: nothing in {expected}; {run:?}"
        );
    }
}
