//! The listener's settings: each limit from its flag, else the `[serve]` table, else its
//! default (the `DEFAULT_*` constants of [`crate::config`]). TLS is on when both a
//! certificate and a key are named, and an error when only one is.

use std::path::PathBuf;
use std::time::Duration;

use crate::config::{
    ConfigError, ServeTable, DEFAULT_BODY_TIMEOUT, DEFAULT_H2_MAX_STREAMS,
    DEFAULT_HEADER_READ_TIMEOUT, DEFAULT_MAX_HEADERS, DEFAULT_MAX_HEADER_BYTES,
    DEFAULT_TLS_HANDSHAKE_TIMEOUT, DEFAULT_WRITE_STALL_TIMEOUT,
};

/// What the command line says about the listener; `None` leaves the file's value.
#[derive(Debug, Clone, Default)]
pub struct ListenFlags {
    pub header_read_timeout: Option<Duration>,
    pub body_timeout: Option<Duration>,
    pub write_stall_timeout: Option<Duration>,
    pub tls_handshake_timeout: Option<Duration>,
    pub max_connections: Option<usize>,
    pub max_headers: Option<usize>,
    pub max_header_bytes: Option<usize>,
    pub h2_max_streams: Option<u32>,
    pub tls_cert: Option<PathBuf>,
    pub tls_key: Option<PathBuf>,
}

/// The certificate chain and private key files (PEM) of an HTTPS listener.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// The limits the listener runs with.
#[derive(Debug, Clone, PartialEq)]
pub struct ListenSettings {
    /// From the connection's start to its first request head, and between two requests
    /// (keep-alive idle); also an HTTP/2 connection with no request open.
    pub header_read_timeout: Duration,
    /// The whole request body, from its head on (408 past it).
    pub body_timeout: Duration,
    /// A write that cannot go out (the client stopped reading) for this long closes the
    /// connection.
    pub write_stall_timeout: Duration,
    pub tls_handshake_timeout: Duration,
    /// Open connections at most; `None`: from the descriptor limit ([`super::limits`]).
    pub max_connections: Option<usize>,
    pub max_headers: usize,
    pub max_header_bytes: usize,
    pub h2_max_streams: u32,
    pub tls: Option<TlsFiles>,
}

impl Default for ListenSettings {
    fn default() -> Self {
        ListenSettings {
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
            body_timeout: DEFAULT_BODY_TIMEOUT,
            write_stall_timeout: DEFAULT_WRITE_STALL_TIMEOUT,
            tls_handshake_timeout: DEFAULT_TLS_HANDSHAKE_TIMEOUT,
            max_connections: None,
            max_headers: DEFAULT_MAX_HEADERS,
            max_header_bytes: DEFAULT_MAX_HEADER_BYTES,
            h2_max_streams: DEFAULT_H2_MAX_STREAMS,
            tls: None,
        }
    }
}

impl ListenSettings {
    /// `flags` over `table` over the defaults.
    pub fn resolve(flags: &ListenFlags, table: &ServeTable) -> Result<Self, ConfigError> {
        let secs = |flag: Option<Duration>, file: Option<u64>, default: Duration| {
            flag.or(file.map(Duration::from_secs)).unwrap_or(default)
        };
        let cert = flags.tls_cert.clone().or(table.tls_cert.clone());
        let key = flags.tls_key.clone().or(table.tls_key.clone());
        let tls = match (cert, key) {
            (Some(cert), Some(key)) => Some(TlsFiles { cert, key }),
            (None, None) => None,
            _ => {
                return Err(ConfigError(
                    "TLS needs both a certificate and a key (--tls-cert and --tls-key, or \
                     [serve] tls_cert and tls_key)"
                        .into(),
                ))
            }
        };
        let settings = ListenSettings {
            header_read_timeout: secs(
                flags.header_read_timeout,
                table.header_read_timeout_secs,
                DEFAULT_HEADER_READ_TIMEOUT,
            ),
            body_timeout: secs(
                flags.body_timeout,
                table.body_timeout_secs,
                DEFAULT_BODY_TIMEOUT,
            ),
            write_stall_timeout: secs(
                flags.write_stall_timeout,
                table.write_stall_timeout_secs,
                DEFAULT_WRITE_STALL_TIMEOUT,
            ),
            tls_handshake_timeout: secs(
                flags.tls_handshake_timeout,
                table.tls_handshake_timeout_secs,
                DEFAULT_TLS_HANDSHAKE_TIMEOUT,
            ),
            max_connections: flags.max_connections.or(table.max_connections),
            max_headers: (flags.max_headers)
                .or(table.max_headers)
                .unwrap_or(DEFAULT_MAX_HEADERS),
            max_header_bytes: (flags.max_header_bytes)
                .or(table.max_header_bytes)
                .unwrap_or(DEFAULT_MAX_HEADER_BYTES),
            h2_max_streams: (flags.h2_max_streams)
                .or(table.h2_max_streams)
                .unwrap_or(DEFAULT_H2_MAX_STREAMS),
            tls,
        };
        for (name, zero) in [
            (
                "header_read_timeout",
                settings.header_read_timeout.is_zero(),
            ),
            ("body_timeout", settings.body_timeout.is_zero()),
            (
                "write_stall_timeout",
                settings.write_stall_timeout.is_zero(),
            ),
            (
                "tls_handshake_timeout",
                settings.tls_handshake_timeout.is_zero(),
            ),
            ("max_connections", settings.max_connections == Some(0)),
            ("max_headers", settings.max_headers == 0),
            ("h2_max_streams", settings.h2_max_streams == 0),
        ] {
            if zero {
                return Err(ConfigError(format!("[serve] {name} must be above 0")));
            }
        }
        if settings.max_header_bytes < 8192 {
            return Err(ConfigError(
                "[serve] max_header_bytes must be at least 8192".into(),
            ));
        }
        Ok(settings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_win_over_the_file_and_defaults_fill_the_rest() {
        let table = ServeTable {
            header_read_timeout_secs: Some(5),
            max_connections: Some(300),
            h2_max_streams: Some(8),
            ..ServeTable::default()
        };
        let flags = ListenFlags {
            header_read_timeout: Some(Duration::from_millis(1500)),
            ..ListenFlags::default()
        };
        let settings = ListenSettings::resolve(&flags, &table).unwrap();
        assert_eq!(settings.header_read_timeout, Duration::from_millis(1500));
        assert_eq!(settings.max_connections, Some(300));
        assert_eq!(settings.h2_max_streams, 8);
        assert_eq!(settings.body_timeout, Duration::from_secs(60));
        assert_eq!(settings.write_stall_timeout, Duration::from_secs(60));
        assert_eq!(settings.tls, None);
    }

    #[test]
    fn bad_combinations_are_errors() {
        // (table, what the error names)
        let cases = [
            (
                ServeTable {
                    tls_cert: Some("c.pem".into()),
                    ..ServeTable::default()
                },
                "both a certificate and a key",
            ),
            (
                ServeTable {
                    max_connections: Some(0),
                    ..ServeTable::default()
                },
                "max_connections",
            ),
            (
                ServeTable {
                    body_timeout_secs: Some(0),
                    ..ServeTable::default()
                },
                "body_timeout",
            ),
            (
                ServeTable {
                    max_header_bytes: Some(100),
                    ..ServeTable::default()
                },
                "max_header_bytes",
            ),
        ];
        for (table, needle) in cases {
            let err = ListenSettings::resolve(&ListenFlags::default(), &table).unwrap_err();
            assert!(err.0.contains(needle), "{needle}: {err}");
        }
    }
}
