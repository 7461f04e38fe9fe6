//! The console's browser test environment: `scripts/console-env.sh` (Debian's Chromium and
//! Playwright pinned in a venv under `$QORE_CACHE_DIR`).
//!
//! Promises: [`console_python`] installs on first use and returns the venv's interpreter, or
//! an error with the script's stderr.

use std::path::Path;
use std::process::Command;

/// The interpreter of the venv `scripts/console-env.sh python` prints.
pub fn console_python() -> Result<String, String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/console-env.sh");
    let out = Command::new("bash")
        .arg(&script)
        .arg("python")
        .output()
        .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
    if !out.status.success() {
        return Err(format!(
            "console-env.sh python failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}
