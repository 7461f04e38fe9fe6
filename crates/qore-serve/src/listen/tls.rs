//! HTTPS: rustls (on ring, the provider reqwest already brings) with ALPN `h2` and
//! `http/1.1`. The certificate is served by a [`Certs`] resolver holding the current
//! certificate and key behind an `Arc` that a reload swaps: handshakes after the swap get the
//! new certificate, connections already open keep theirs. [`watch`] reloads on SIGHUP and when
//! either file's modification time changes (polled every [`POLL`]); a reload that fails
//! (unreadable files, a key that does not match the certificate) keeps the old certificate,
//! logs why and counts it in `qore_tls_reloads_total{result="failed"}`.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{Duration, SystemTime};

use qore_client::CancellationToken;
use rustls::crypto::CryptoProvider;
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use rustls_pki_types::pem::PemObject as _;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

use super::counts::ConnectionCounts;
use super::settings::TlsFiles;

/// How often [`watch`] looks at the files' modification times.
pub const POLL: Duration = Duration::from_secs(2);

/// Why a certificate could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("cannot read {path}: {message}")]
    Read { path: PathBuf, message: String },
    #[error("{0} holds no certificate (PEM)")]
    NoCertificate(PathBuf),
    #[error("the key in {path} cannot be used: {source}")]
    Key {
        path: PathBuf,
        source: rustls::Error,
    },
    #[error("the TLS settings: {0}")]
    Config(rustls::Error),
}

/// The certificate being served, and where it comes from.
#[derive(Debug)]
pub struct Certs {
    files: TlsFiles,
    current: RwLock<Arc<CertifiedKey>>,
    /// The files' modification times when last loaded.
    stamps: Mutex<(Option<SystemTime>, Option<SystemTime>)>,
    counts: ConnectionCounts,
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// The certificate chain and key in `files`, checked to belong together.
pub fn load(files: &TlsFiles) -> Result<CertifiedKey, TlsError> {
    let read = |path: &Path| {
        std::fs::read(path).map_err(|err| TlsError::Read {
            path: path.to_owned(),
            message: err.to_string(),
        })
    };
    let cert_pem = read(&files.cert)?;
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&cert_pem)
        .collect::<Result<_, _>>()
        .map_err(|err| TlsError::Read {
            path: files.cert.clone(),
            message: err.to_string(),
        })?;
    if chain.is_empty() {
        return Err(TlsError::NoCertificate(files.cert.clone()));
    }
    let key_pem = read(&files.key)?;
    let key = PrivateKeyDer::from_pem_slice(&key_pem).map_err(|err| TlsError::Read {
        path: files.key.clone(),
        message: err.to_string(),
    })?;
    CertifiedKey::from_der(chain, key, &provider()).map_err(|source| TlsError::Key {
        path: files.key.clone(),
        source,
    })
}

impl Certs {
    /// The certificate in `files`, loaded now (an error if it cannot be).
    pub fn open(files: TlsFiles, counts: ConnectionCounts) -> Result<Arc<Certs>, TlsError> {
        let stamps = (modified(&files.cert), modified(&files.key));
        let key = load(&files)?;
        Ok(Arc::new(Certs {
            files,
            current: RwLock::new(Arc::new(key)),
            stamps: Mutex::new(stamps),
            counts,
        }))
    }

    /// The rustls settings serving these certificates, with ALPN `h2` then `http/1.1`.
    pub fn server_config(self: &Arc<Self>) -> Result<Arc<rustls::ServerConfig>, TlsError> {
        let builder = rustls::ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(TlsError::Config)?;
        let mut config = builder
            .with_no_client_auth()
            .with_cert_resolver(self.clone());
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(Arc::new(config))
    }

    /// Load the files again when `force` or when either changed since the last load. A
    /// failure keeps the certificate being served. Whether a new one is served now.
    pub fn reload(&self, force: bool) -> Result<bool, TlsError> {
        let stamps = (modified(&self.files.cert), modified(&self.files.key));
        let mut last = self.stamps.lock().unwrap_or_else(PoisonError::into_inner);
        if !force && *last == stamps {
            return Ok(false);
        }
        let loaded = load(&self.files);
        // A failed load is not retried until the files change again (or SIGHUP).
        *last = stamps;
        let key = match loaded {
            Ok(key) => key,
            Err(err) => {
                self.counts.tls_reload("failed");
                return Err(err);
            }
        };
        *self.current.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(key);
        self.counts.tls_reload("ok");
        Ok(true)
    }
}

impl ResolvesServerCert for Certs {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(
            self.current
                .read()
                .unwrap_or_else(PoisonError::into_inner)
                .clone(),
        )
    }
}

/// Reload `certs` on SIGHUP and when the files change, until `stopping`.
pub async fn watch(certs: Arc<Certs>, stopping: CancellationToken) {
    #[cfg(unix)]
    let mut hangup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()).ok();
    let mut poll = tokio::time::interval(POLL);
    poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        #[cfg(unix)]
        let hup = async {
            match hangup.as_mut() {
                Some(signal) => {
                    signal.recv().await;
                }
                None => std::future::pending().await,
            }
        };
        #[cfg(not(unix))]
        let hup = std::future::pending::<()>();
        let force = tokio::select! {
            () = stopping.cancelled() => return,
            () = hup => true,
            _ = poll.tick() => false,
        };
        let certs = certs.clone();
        let reloaded = tokio::task::spawn_blocking(move || certs.reload(force)).await;
        match reloaded {
            Ok(Ok(true)) => tracing::info!("the TLS certificate was reloaded"),
            Ok(Ok(false)) => {}
            Ok(Err(err)) => {
                tracing::error!("the TLS certificate was not reloaded (the old one is kept): {err}")
            }
            Err(err) => tracing::error!("the TLS certificate reload failed: {err}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_pair(dir: &Path, name: &str) -> TlsFiles {
        let cert = rcgen::generate_simple_self_signed(vec![name.to_owned()]).unwrap();
        let files = TlsFiles {
            cert: dir.join(format!("{name}.crt")),
            key: dir.join(format!("{name}.key")),
        };
        std::fs::write(&files.cert, cert.cert.pem()).unwrap();
        std::fs::write(&files.key, cert.signing_key.serialize_pem()).unwrap();
        files
    }

    #[test]
    fn a_bad_reload_keeps_the_old_certificate_and_a_good_one_swaps_it() {
        let dir = tempfile::tempdir().unwrap();
        let a = write_pair(dir.path(), "a.test");
        let b = write_pair(dir.path(), "b.test");
        let counts = ConnectionCounts::default();
        let certs = Certs::open(a.clone(), counts).unwrap();
        let served = |certs: &Certs| certs.current.read().unwrap().cert[0].clone();
        let first = served(&certs);
        // Unchanged files: nothing to do.
        assert!(!certs.reload(false).unwrap());
        // b's key under a's certificate: refused, a still served.
        std::fs::copy(&b.key, &a.key).unwrap();
        assert!(matches!(certs.reload(true), Err(TlsError::Key { .. })));
        assert_eq!(served(&certs), first);
        // Garbage: refused.
        std::fs::write(&a.cert, "not a certificate").unwrap();
        assert!(certs.reload(true).is_err());
        assert_eq!(served(&certs), first);
        // b's pair: served.
        std::fs::copy(&b.cert, &a.cert).unwrap();
        assert!(certs.reload(true).unwrap());
        assert_ne!(served(&certs), first);
        let b_cert = std::fs::read(&b.cert).unwrap();
        let b_der = CertificateDer::pem_slice_iter(&b_cert)
            .next()
            .unwrap()
            .unwrap();
        assert_eq!(served(&certs), b_der);
        assert!(matches!(
            Certs::open(
                TlsFiles {
                    cert: dir.path().join("none.crt"),
                    key: a.key.clone()
                },
                ConnectionCounts::default()
            ),
            Err(TlsError::Read { .. })
        ));
    }
}
