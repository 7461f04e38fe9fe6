//! qore's own accept loop (instead of `axum::serve`, which runs hyper without a timer): the
//! server closes what it must and keeps what it should.
//!
//! Promises:
//! - a connection takes a slot of the cap ([`limits`]) *before* it is accepted and holds it
//!   until it closes; past the cap new connections wait in the kernel's backlog (they are not
//!   refused), and each wait is counted;
//! - an accept error never ends the loop and never spins it ([`limits::AcceptErrors`]);
//! - every phase of a connection has a limit ([`conn`]): first byte or TLS handshake, each
//!   request head and keep-alive wait, the whole request body ([`body`], 408), a write the
//!   client does not read; a stream's total time has none;
//! - HTTPS with a certificate reloaded on SIGHUP or file change ([`tls`]);
//! - once `stopping`, nothing more is accepted, and [`serve`] returns when every connection
//!   has closed (requests in flight finish; the caller ends streams at the drain's end);
//! - every close by a limit, the cap and accept errors are counted ([`ConnectionCounts`]).

mod body;
mod conn;
mod counts;
mod h2;
pub mod limits;
mod service;
mod settings;
pub mod tls;

use std::sync::Arc;

use qore_client::CancellationToken;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

pub use body::{body_deadline, BodyDeadline};
pub use counts::ConnectionCounts;
pub use settings::{ListenFlags, ListenSettings, TlsFiles};
pub use tls::TlsError;

/// A bound listener and how it serves.
pub struct Listener {
    tcp: TcpListener,
    settings: ListenSettings,
    counts: ConnectionCounts,
    certs: Option<Arc<tls::Certs>>,
}

impl Listener {
    /// Serve `tcp` with `settings` (its certificate loaded now when TLS is set).
    pub fn new(
        tcp: TcpListener,
        settings: ListenSettings,
        counts: ConnectionCounts,
    ) -> Result<Listener, TlsError> {
        let certs = match &settings.tls {
            Some(files) => Some(tls::Certs::open(files.clone(), counts.clone())?),
            None => None,
        };
        Ok(Listener {
            tcp,
            settings,
            counts,
            certs,
        })
    }

    /// Whether it serves HTTPS.
    pub fn is_tls(&self) -> bool {
        self.certs.is_some()
    }

    /// Accept and serve connections with `router` until `stopping`, then wait for every
    /// connection to close.
    pub async fn serve(
        self,
        router: axum::Router,
        stopping: CancellationToken,
    ) -> std::io::Result<()> {
        let Listener {
            tcp,
            settings,
            counts,
            certs,
        } = self;
        let acceptor = match &certs {
            Some(certs) => {
                let config = certs.server_config().map_err(std::io::Error::other)?;
                tokio::spawn(tls::watch(certs.clone(), stopping.clone()));
                Some(tokio_rustls::TlsAcceptor::from(config))
            }
            None => None,
        };
        // Always raise the descriptor limit; a cap set above what it allows is the
        // operator's choice, but said.
        let allowed = limits::descriptor_cap();
        let cap = (settings.max_connections.unwrap_or(allowed))
            .min(Semaphore::MAX_PERMITS)
            .min(u32::MAX as usize);
        if cap > allowed {
            tracing::warn!(
                "max_connections {cap} is above the {allowed} the open file limit allows: \
                 accepting may fail with EMFILE (then it pauses and logs)"
            );
        }
        counts.set_cap(cap);
        tracing::debug!("accepting at most {cap} connections at once");
        let slots = Arc::new(Semaphore::new(cap));
        let serving = Arc::new(conn::Serving::new(
            router,
            settings,
            counts.clone(),
            acceptor,
            stopping.clone(),
        ));
        let mut errors = limits::AcceptErrors::default();
        loop {
            let slot = match slots.clone().try_acquire_owned() {
                Ok(slot) => slot,
                Err(_) => {
                    counts.cap_waited();
                    tokio::select! {
                        () = stopping.cancelled() => break,
                        slot = slots.clone().acquire_owned() => match slot {
                            Ok(slot) => slot,
                            Err(_) => break,
                        },
                    }
                }
            };
            let accepted = tokio::select! {
                () = stopping.cancelled() => break,
                accepted = tcp.accept() => accepted,
            };
            match accepted {
                Ok((stream, _peer)) => {
                    tokio::spawn(serving.clone().serve(stream, slot));
                }
                Err(err) => {
                    drop(slot);
                    if let Some(pause) = errors.failed(&err, &counts) {
                        tokio::select! {
                            () = stopping.cancelled() => break,
                            () = tokio::time::sleep(pause) => {}
                        }
                    }
                }
            }
        }
        // New connections are refused from here on; the open ones finish.
        drop(tcp);
        let all = u32::try_from(cap).unwrap_or(u32::MAX);
        let _ = slots.acquire_many(all).await;
        Ok(())
    }
}
