//! A real PostgreSQL server for tests: Debian's package, started by `scripts/pg.sh` (the
//! script the docs give users) in a temporary directory, as an unprivileged user, on a free
//! loopback port.
//!
//! Promises: [`TestPostgres::start`] returns a running server or an error with the script's
//! stderr; the server stops and its directory is removed when the value is dropped, and also
//! by themselves once this test process has exited (the script watches our pid), so a value
//! held in a static or a killed test run leaves neither behind.
//! [`TestPostgres::fresh_database`] gives each test its own empty database on the one server
//! (created one at a time: `CREATE DATABASE` copies `template1`, which a concurrent creation
//! holds; a failed creation is tried again, three times in all).

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

/// A running PostgreSQL cluster in a temporary directory.
pub struct TestPostgres {
    dir: PathBuf,
    port: u16,
    url: String,
}

static DATABASES: AtomicU32 = AtomicU32::new(0);

/// One `CREATE DATABASE` at a time in this process.
static CREATING: Mutex<()> = Mutex::new(());

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/pg.sh")
}

fn run(args: &[&str]) -> Result<String, String> {
    let out = Command::new("bash")
        .arg(script())
        .args(args)
        .env("QORE_PG_OWNER_PID", std::process::id().to_string())
        .env("QORE_PG_REMOVE_WITH_OWNER", "1")
        .output()
        .map_err(|e| format!("cannot run pg.sh: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "pg.sh {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// A loopback port nobody listens on now.
pub fn free_port() -> Result<u16, String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| e.to_string())
}

impl TestPostgres {
    /// Start a new cluster (installing Debian's `postgresql` first if it is missing).
    pub fn start() -> Result<TestPostgres, String> {
        let base = std::env::temp_dir().join(format!(
            "qore-pg-{}-{}",
            std::process::id(),
            DATABASES.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(&base).map_err(|e| format!("{}: {e}", base.display()))?;
        let port = free_port()?;
        let dir = base.to_string_lossy().into_owned();
        let url = run(&["start", &dir, &port.to_string()])?;
        Ok(TestPostgres {
            dir: base,
            port,
            url,
        })
    }

    /// The URL of the `qore` database.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The server's loopback port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The cluster's directory (`data/`, `server.log`).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Create a new empty database and return its URL.
    pub fn fresh_database(&self) -> Result<String, String> {
        let _one_at_a_time = CREATING.lock().unwrap_or_else(|p| p.into_inner());
        let mut failures = Vec::new();
        for _ in 0..3 {
            let name = format!(
                "t{}_{}",
                std::process::id(),
                DATABASES.fetch_add(1, Ordering::Relaxed)
            );
            match self.psql(&format!("CREATE DATABASE {name} OWNER qore")) {
                Ok(_) => return Ok(format!("postgres://qore@127.0.0.1:{}/{name}", self.port)),
                Err(why) => failures.push(why),
            }
        }
        Err(failures.join("\n"))
    }

    /// Run one SQL command in the `qore` database; its output, unaligned.
    pub fn psql(&self, sql: &str) -> Result<String, String> {
        let dir = self.dir.to_string_lossy().into_owned();
        run(&["psql", &dir, "-v", "ON_ERROR_STOP=1", "-tAc", sql])
    }

    /// Run one SQL command in the database named `database`.
    pub fn psql_in(&self, database: &str, sql: &str) -> Result<String, String> {
        let dir = self.dir.to_string_lossy().into_owned();
        run(&[
            "psql",
            &dir,
            "-d",
            database,
            "-v",
            "ON_ERROR_STOP=1",
            "-tAc",
            sql,
        ])
    }

    /// Stop the server (fast shutdown: open sessions are cut).
    pub fn stop(&self) -> Result<(), String> {
        run(&["stop", &self.dir.to_string_lossy()]).map(drop)
    }

    /// Stop every process of the server (SIGSTOP) without closing anything: connections stay
    /// open and nothing is answered until [`TestPostgres::thaw`]. Thaw before dropping:
    /// stopping waits for the server.
    pub fn freeze(&self) -> Result<(), String> {
        run(&["freeze", &self.dir.to_string_lossy()]).map(drop)
    }

    /// Let a frozen server go on (SIGCONT): what was queued is answered.
    pub fn thaw(&self) -> Result<(), String> {
        run(&["thaw", &self.dir.to_string_lossy()]).map(drop)
    }

    /// Start it again on the same port, with its data.
    pub fn restart(&self) -> Result<(), String> {
        let dir = self.dir.to_string_lossy().into_owned();
        run(&["start", &dir, &self.port.to_string()]).map(drop)
    }
}

impl Drop for TestPostgres {
    fn drop(&mut self) {
        // A frozen server (a test that panicked between freeze and thaw) would never stop.
        let _ = self.thaw();
        let _ = self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
