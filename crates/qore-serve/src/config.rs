//! The server's settings: the `[serve]` table of `<config dir>/config.toml` (or of the file
//! `--config` names), read through qore-config's loader, under the command line's flags. A
//! bad value is an error naming the file, the key and the line; unknown keys are errors.
//!
//! ```toml
//! [serve]
//! listen = "127.0.0.1:8787"
//! drain_timeout_secs = 30
//! body_limit = 33554432          # bytes
//! tools = ["read_file", "list_files", "docs__*"]   # server-side tools agents may run
//! root = "/srv/project"          # the project the built-in tools see
//! models = ["anthropic/claude-sonnet-4-5"]          # listed by /v1/models beside the agents
//! # Slow and greedy clients (src/listen; docs/deploy.md "Timeouts, limits and TLS"):
//! header_read_timeout_secs = 10  # first byte, whole header, and keep-alive idle
//! body_timeout_secs = 60         # the whole request body (408 past it)
//! write_stall_timeout_secs = 60  # a client that stops reading is closed
//! tls_handshake_timeout_secs = 10
//! max_connections = 4096         # default: min(4096, (RLIMIT_NOFILE - reserve) / 2)
//! max_headers = 100
//! max_header_bytes = 65536       # hyper's read buffer: the largest request head
//! h2_max_streams = 100           # concurrent streams on one HTTP/2 connection
//! tls_cert = "/etc/qore/cert.pem"  # both or neither: serve HTTPS
//! tls_key = "/etc/qore/key.pem"
//! # Streams (src/relay.rs): idle limits only, never a total; 0 turns one off.
//! stream_keepalive_secs = 15     # an SSE comment when the upstream is silent that long
//! upstream_idle_secs = 300       # the stream ends in the dialect's error event past it
//! ```

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use qore_config::ConfigFile;
use serde::Deserialize;

/// Where the server listens unless told otherwise.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8787";
/// Request bodies over this many bytes are 413.
pub const DEFAULT_BODY_LIMIT: usize = 32 * 1024 * 1024;
/// How long SIGTERM waits for streams in flight.
pub const DEFAULT_DRAIN: Duration = Duration::from_secs(30);

/// The listener's limits (src/listen): what a client may take before it is closed.
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(60);
pub const DEFAULT_WRITE_STALL_TIMEOUT: Duration = Duration::from_secs(60);
pub const DEFAULT_TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
pub const DEFAULT_MAX_HEADERS: usize = 100;
pub const DEFAULT_MAX_HEADER_BYTES: usize = 64 * 1024;
pub const DEFAULT_H2_MAX_STREAMS: u32 = 100;
/// The connection cap's ceiling when it comes from `RLIMIT_NOFILE`.
pub const DEFAULT_MAX_CONNECTIONS_CEILING: usize = 4096;

/// How often a silent stream gets an SSE comment (`: keep-alive`).
pub const DEFAULT_STREAM_KEEPALIVE: Duration = Duration::from_secs(15);
/// How long the upstream may be silent in a stream before it is ended as failed.
pub const DEFAULT_UPSTREAM_IDLE: Duration = Duration::from_secs(300);

/// The limits of a relayed stream (src/relay.rs): idle limits only, never a total; `None`
/// turns one off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamLimits {
    /// Write `: keep-alive` when nothing was written to the caller for this long.
    pub keepalive: Option<Duration>,
    /// End the stream with the dialect's error event when the upstream sent nothing for this
    /// long.
    pub upstream_idle: Option<Duration>,
}

impl Default for StreamLimits {
    fn default() -> Self {
        StreamLimits {
            keepalive: Some(DEFAULT_STREAM_KEEPALIVE),
            upstream_idle: Some(DEFAULT_UPSTREAM_IDLE),
        }
    }
}

impl StreamLimits {
    /// The flags over the `[serve]` table's values over the defaults (0: off).
    pub fn of(flags: &ServeFlags, table: &ServeTable) -> StreamLimits {
        let pick = |flag: Option<Duration>, value: Option<u64>, default: Duration| {
            let chosen = flag.or(value.map(Duration::from_secs)).unwrap_or(default);
            (!chosen.is_zero()).then_some(chosen)
        };
        StreamLimits {
            keepalive: pick(
                flags.stream_keepalive,
                table.stream_keepalive_secs,
                DEFAULT_STREAM_KEEPALIVE,
            ),
            upstream_idle: pick(
                flags.upstream_idle,
                table.upstream_idle_secs,
                DEFAULT_UPSTREAM_IDLE,
            ),
        }
    }
}

/// The `[serve]` table as written.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ServeTable {
    pub listen: Option<String>,
    pub drain_timeout_secs: Option<u64>,
    pub body_limit: Option<usize>,
    #[serde(default)]
    pub tools: Vec<String>,
    pub root: Option<PathBuf>,
    #[serde(default)]
    pub models: Vec<String>,
    // The listener's limits and TLS (src/listen).
    pub header_read_timeout_secs: Option<u64>,
    pub body_timeout_secs: Option<u64>,
    pub write_stall_timeout_secs: Option<u64>,
    pub tls_handshake_timeout_secs: Option<u64>,
    pub max_connections: Option<usize>,
    pub max_headers: Option<usize>,
    pub max_header_bytes: Option<usize>,
    pub h2_max_streams: Option<u32>,
    pub tls_cert: Option<PathBuf>,
    pub tls_key: Option<PathBuf>,
    // Streams (src/relay.rs).
    pub stream_keepalive_secs: Option<u64>,
    pub upstream_idle_secs: Option<u64>,
    // The request log (src/request_log.rs) and the console (src/admin).
    pub log_bodies: Option<bool>,
    pub log_body_cap: Option<usize>,
    pub log_retention_days: Option<u64>,
    pub console: Option<bool>,
    pub console_path: Option<String>,
}

/// What the command line says; `None` leaves the file's value (or the default).
#[derive(Debug, Clone, Default)]
pub struct ServeFlags {
    pub listen: Option<String>,
    pub config: Option<PathBuf>,
    pub no_auth: bool,
    pub drain_timeout: Option<Duration>,
    pub body_limit: Option<usize>,
    /// The listener's limits and TLS.
    pub listener: crate::listen::ListenFlags,
    /// A relayed stream's keep-alive and upstream idle limit (`Duration::ZERO`: off).
    pub stream_keepalive: Option<Duration>,
    pub upstream_idle: Option<Duration>,
    /// How the front end makes the built-in tools' options for `[serve] root` (qore-cli:
    /// config.toml's `[sandbox]` and `[tools]`); without it `run_command` is never offered.
    pub tool_options: Option<crate::ToolOptionsFor>,
}

/// The settings the server runs with.
#[derive(Debug, Clone)]
pub struct ServeSettings {
    pub listen: SocketAddr,
    pub no_auth: bool,
    pub drain_timeout: Duration,
    pub body_limit: usize,
    /// Glob patterns of the server-side tools an agent may run (none by default).
    pub tools: Vec<String>,
    pub root: Option<PathBuf>,
    /// Extra `provider/model` names `/v1/models` lists.
    pub models: Vec<String>,
    /// The listener's limits and TLS.
    pub listener: crate::listen::ListenSettings,
    /// A relayed stream's idle limits.
    pub streams: StreamLimits,
    /// How the request log is kept.
    pub request_log: crate::log_settings::LogSettings,
    /// Whether and where the console is served.
    pub console: crate::console_settings::ConsoleSettings,
    /// The built-in tools' options for the root (see [`ServeFlags::tool_options`]).
    pub tool_options: Option<crate::ToolOptionsFor>,
}

/// Every default (on 127.0.0.1:8787, keys required): what tests start from.
impl Default for ServeSettings {
    fn default() -> Self {
        ServeSettings {
            listen: SocketAddr::from(([127, 0, 0, 1], 8787)),
            no_auth: false,
            drain_timeout: DEFAULT_DRAIN,
            body_limit: DEFAULT_BODY_LIMIT,
            tools: Vec::new(),
            root: None,
            models: Vec::new(),
            listener: Default::default(),
            streams: StreamLimits::default(),
            request_log: Default::default(),
            console: Default::default(),
            tool_options: None,
        }
    }
}

/// A settings error: the file (or flag) and what is wrong.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);

/// The loader's errors name the file, the section and the line already.
impl From<qore_config::ConfigError> for ConfigError {
    fn from(err: qore_config::ConfigError) -> Self {
        ConfigError(err.to_string())
    }
}

impl ServeSettings {
    /// Read `flags.config`, else `config_dir/config.toml` when it exists, and lay the flags
    /// over it.
    pub fn load(flags: &ServeFlags, config_dir: Option<&Path>) -> Result<Self, ConfigError> {
        let file = match (&flags.config, config_dir) {
            (Some(file), _) => Some(ConfigFile::at(file)?),
            (None, Some(dir)) => ConfigFile::read(dir)?,
            (None, None) => None,
        };
        let table = match &file {
            Some(file) => file.section::<ServeTable>("serve")?.unwrap_or_default(),
            None => ServeTable::default(),
        };
        let listen_text = (flags.listen.as_deref())
            .or(table.listen.as_deref())
            .unwrap_or(DEFAULT_LISTEN);
        let listen = parse_listen(listen_text)?;
        let listener = crate::listen::ListenSettings::resolve(&flags.listener, &table)?;
        let streams = StreamLimits::of(flags, &table);
        let request_log = crate::log_settings::LogSettings::of(
            table.log_bodies,
            table.log_body_cap,
            table.log_retention_days,
        );
        let console = crate::console_settings::ConsoleSettings::of(
            table.console,
            table.console_path.as_deref(),
        )
        .map_err(ConfigError)?;
        Ok(ServeSettings {
            listen,
            no_auth: flags.no_auth,
            drain_timeout: (flags.drain_timeout)
                .or(table.drain_timeout_secs.map(Duration::from_secs))
                .unwrap_or(DEFAULT_DRAIN),
            body_limit: (flags.body_limit)
                .or(table.body_limit)
                .unwrap_or(DEFAULT_BODY_LIMIT),
            tools: table.tools,
            root: table.root,
            models: table.models,
            listener,
            streams,
            request_log,
            console,
            tool_options: flags.tool_options,
        })
    }
}

/// `ADDR:PORT`, or a bare port (on 127.0.0.1).
pub fn parse_listen(text: &str) -> Result<SocketAddr, ConfigError> {
    if let Ok(port) = text.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    text.parse().map_err(|err| {
        ConfigError(format!(
            "listen address {text:?} is not ADDR:PORT or a port: {err}"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_is_read_and_flags_win() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(
            &path,
            "[mcp_servers.x]\ncommand = \"y\"\n\n[serve]\nlisten = \"0.0.0.0:9000\"\n\
             drain_timeout_secs = 5\ntools = [\"read_file\"]\n",
        )
        .unwrap();
        let settings = ServeSettings::load(&ServeFlags::default(), Some(dir.path())).unwrap();
        assert_eq!(settings.listen, "0.0.0.0:9000".parse().unwrap());
        assert_eq!(settings.drain_timeout, Duration::from_secs(5));
        assert_eq!(settings.tools, ["read_file"]);
        assert_eq!(settings.body_limit, DEFAULT_BODY_LIMIT);
        let flags = ServeFlags {
            listen: Some("7000".into()),
            ..ServeFlags::default()
        };
        let settings = ServeSettings::load(&flags, Some(dir.path())).unwrap();
        assert_eq!(settings.listen, "127.0.0.1:7000".parse().unwrap());
    }

    #[test]
    fn bad_values_name_the_file_and_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        for (text, needle) in [
            ("[serve]\ndrain_timeout_secs = \"x\"\n", "line 2"),
            ("[serve]\nlisen = \"1\"\n", "lisen"),
            ("[serve\n", "config.toml"),
        ] {
            std::fs::write(&path, text).unwrap();
            let err = ServeSettings::load(&ServeFlags::default(), Some(dir.path())).unwrap_err();
            assert!(err.0.contains(needle), "{text:?}: {err}");
            assert!(err.0.contains("config.toml"), "{err}");
        }
        let flags = ServeFlags {
            listen: Some("nowhere".into()),
            ..ServeFlags::default()
        };
        assert!(ServeSettings::load(&flags, None)
            .unwrap_err()
            .0
            .contains("nowhere"));
    }

    #[test]
    fn stream_limits_default_to_15_s_and_300_s_and_0_turns_one_off() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let secs = |n| Some(Duration::from_secs(n));
        // (the [serve] table's lines, keep-alive, upstream idle limit)
        let cases = [
            ("", secs(15), secs(300)),
            ("stream_keepalive_secs = 5\n", secs(5), secs(300)),
            ("upstream_idle_secs = 0\n", secs(15), None),
            (
                "stream_keepalive_secs = 0\nupstream_idle_secs = 60\n",
                None,
                secs(60),
            ),
        ];
        for (lines, keepalive, upstream_idle) in cases {
            std::fs::write(&path, format!("[serve]\n{lines}")).unwrap();
            let settings = ServeSettings::load(&ServeFlags::default(), Some(dir.path())).unwrap();
            let wanted = StreamLimits {
                keepalive,
                upstream_idle,
            };
            assert_eq!(settings.streams, wanted, "{lines:?}");
        }
        // A flag wins over the file; 0 turns it off.
        std::fs::write(&path, "[serve]\nstream_keepalive_secs = 5\n").unwrap();
        let flags = ServeFlags {
            stream_keepalive: Some(Duration::ZERO),
            upstream_idle: Some(Duration::from_millis(1500)),
            ..ServeFlags::default()
        };
        let settings = ServeSettings::load(&flags, Some(dir.path())).unwrap();
        let wanted = StreamLimits {
            keepalive: None,
            upstream_idle: Some(Duration::from_millis(1500)),
        };
        assert_eq!(settings.streams, wanted);
    }
}
