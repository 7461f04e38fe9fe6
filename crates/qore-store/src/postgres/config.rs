//! Reading a `postgres://` store URL: what goes to `tokio-postgres`, what is ours, and TLS.
//!
//! Promises:
//! - our own query parameters are taken out before the URL reaches `tokio-postgres`:
//!   `pool_max_size` (connections in the pool, default 16, at least 1), `pool_timeout`
//!   (seconds to wait for a free connection, default 5), `call_timeout` (seconds one store
//!   call may take in all, waiting for a connection and every answer, default 30; a server
//!   that accepts and never answers is thus bounded) and `sslrootcert` (a PEM file of CA
//!   certificates to trust besides the bundled webpki roots and the system's); a bad value is
//!   [`StoreError::PgConfig`] naming the parameter, never a panic;
//! - every other parameter (`sslmode=disable|prefer|require`, `connect_timeout`, …) is
//!   `tokio-postgres`'s; without `connect_timeout`, connecting gives up after 5 seconds;
//! - TLS is rustls with the `ring` provider, and the server's certificate is always verified
//!   (also with `sslmode=prefer` and `require`, unlike libpq's unverified `require`);
//! - [`Settings::location`] is the URL without its password (neither `user:password@` nor a
//!   `password=` parameter), for messages.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use tokio_postgres::config::SslMode;
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::error::one_line;
use crate::location::percent_decoded;
use crate::StoreError;

/// Connections in the pool when the URL does not say.
pub(super) const DEFAULT_POOL_MAX_SIZE: usize = 16;
/// How long a call waits for a free connection when the URL does not say.
pub(super) const DEFAULT_POOL_TIMEOUT: Duration = Duration::from_secs(5);
/// How long one store call may take when the URL does not say.
pub(super) const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(30);
/// How long connecting may take when the URL does not say.
pub(super) const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// A store URL, read.
pub(super) struct Settings {
    /// What `tokio-postgres` connects with.
    pub pg: tokio_postgres::Config,
    /// The URL without its password.
    pub location: String,
    pub pool_max_size: usize,
    pub pool_timeout: Duration,
    pub call_timeout: Duration,
    /// A PEM file of CA certificates to trust too.
    pub root_cert: Option<PathBuf>,
}

impl Settings {
    /// Read `url` (see the module doc).
    pub(super) fn parse(url: &str) -> Result<Settings, StoreError> {
        let url = url.trim();
        let (base, query) = url.split_once('?').unwrap_or((url, ""));
        let mut kept = Vec::new();
        let mut pool_max_size = DEFAULT_POOL_MAX_SIZE;
        let mut pool_timeout = DEFAULT_POOL_TIMEOUT;
        let mut call_timeout = DEFAULT_CALL_TIMEOUT;
        let mut root_cert = None;
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            let (key, value) = (percent_decoded(key), percent_decoded(value));
            match key.as_str() {
                "pool_max_size" => pool_max_size = positive(&value, "pool_max_size")?,
                "pool_timeout" => pool_timeout = seconds(&value, "pool_timeout")?,
                "call_timeout" => call_timeout = seconds(&value, "call_timeout")?,
                "sslrootcert" => root_cert = Some(PathBuf::from(value)),
                _ => kept.push(pair),
            }
        }
        let with_query = |pairs: &[&str]| match pairs.is_empty() {
            true => base.to_owned(),
            false => format!("{base}?{}", pairs.join("&")),
        };
        let location = crate::location::shown(url);
        let mut pg: tokio_postgres::Config = with_query(&kept)
            .parse()
            .map_err(|e| StoreError::PgConfig(format!("{location}: {}", one_line(&e))))?;
        if pg.get_connect_timeout().is_none() {
            pg.connect_timeout(DEFAULT_CONNECT_TIMEOUT);
        }
        Ok(Settings {
            pg,
            location,
            pool_max_size,
            pool_timeout,
            call_timeout,
            root_cert,
        })
    }

    /// The TLS connector: the server's certificate verified against webpki's roots, the
    /// system's, and `sslrootcert`'s.
    pub(super) fn tls(&self) -> Result<MakeRustlsConnect, StoreError> {
        let mut roots = rustls::RootCertStore::empty();
        if self.pg.get_ssl_mode() != SslMode::Disable {
            roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
            let native = rustls_native_certs::load_native_certs();
            roots.add_parsable_certificates(native.certs);
        }
        if let Some(path) = &self.root_cert {
            let bad = |why: String| {
                StoreError::PgConfig(format!("sslrootcert {}: {why}", path.display()))
            };
            let certs = CertificateDer::pem_file_iter(path)
                .map_err(|e| bad(e.to_string()))?
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| bad(e.to_string()))?;
            if certs.is_empty() {
                return Err(bad("no certificate in it".into()));
            }
            for cert in certs {
                roots.add(cert).map_err(|e| bad(e.to_string()))?;
            }
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| StoreError::PgConfig(format!("TLS: {e}")))?
            .with_root_certificates(roots)
            .with_no_client_auth();
        Ok(MakeRustlsConnect::new(config))
    }
}

fn positive(value: &str, name: &str) -> Result<usize, StoreError> {
    match value.parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(StoreError::PgConfig(format!(
            "{name} must be a whole number above 0, not '{value}'"
        ))),
    }
}

fn seconds(value: &str, name: &str) -> Result<Duration, StoreError> {
    let bad = || {
        StoreError::PgConfig(format!(
            "{name} must be seconds (e.g. 5 or 0.5), not '{value}'"
        ))
    };
    let n: f64 = value.parse().map_err(|_| bad())?;
    Duration::try_from_secs_f64(n).map_err(|_| bad())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn our_parameters_are_taken_out_and_the_password_is_never_shown() {
        // (url, location, pool size, pool timeout ms, call timeout ms, CA file)
        let cases = [
            (
                "postgres://u:secret@h:5432/db",
                "postgres://u@h:5432/db",
                16,
                5_000,
                30_000,
                None,
            ),
            (
                "postgresql://u:p%40ss@h/db?sslmode=require&pool_max_size=2&pool_timeout=0.5&call_timeout=2",
                "postgresql://u@h/db?sslmode=require&pool_max_size=2&pool_timeout=0.5&call_timeout=2",
                2,
                500,
                2_000,
                None,
            ),
            (
                "postgres://u@h/db?password=secret&sslrootcert=%2Ftmp%2Fca.pem",
                "postgres://u@h/db?sslrootcert=%2Ftmp%2Fca.pem",
                16,
                5_000,
                30_000,
                Some("/tmp/ca.pem"),
            ),
        ];
        for (url, location, size, timeout, call, ca) in cases {
            let settings = Settings::parse(url).unwrap();
            assert_eq!(settings.location, location, "{url}");
            assert!(!settings.location.contains("secret"), "{url}");
            assert_eq!(settings.pool_max_size, size, "{url}");
            assert_eq!(
                settings.pool_timeout,
                Duration::from_millis(timeout),
                "{url}"
            );
            assert_eq!(settings.call_timeout, Duration::from_millis(call), "{url}");
            assert_eq!(settings.root_cert, ca.map(PathBuf::from), "{url}");
            assert_eq!(
                settings.pg.get_connect_timeout(),
                Some(&DEFAULT_CONNECT_TIMEOUT)
            );
        }
    }

    #[test]
    fn bad_values_are_refused_with_their_name() {
        // (url, words of the error)
        let cases = [
            ("postgres://u:secret@h/db?pool_max_size=0", "pool_max_size"),
            ("postgres://u:secret@h/db?pool_timeout=soon", "pool_timeout"),
            ("postgres://u:secret@h/db?call_timeout=-1", "call_timeout"),
            ("postgres://u:secret@h/db?sslmode=maybe", "invalid"),
        ];
        for (url, words) in cases {
            let error = Settings::parse(url).err().unwrap().to_string();
            assert!(error.contains(words), "{url}: {error}");
            assert!(!error.contains("secret"), "{url}: {error}");
        }
    }
}
