//! Starting the server: settings, the store, the listener (its URL printed alone on
//! stdout's first line, so a script can read it), and the drain on SIGTERM or Ctrl-C: stop
//! accepting, let streams in flight finish for the drain time, then end the rest (they are
//! recorded as cancelled).
//!
//! With no key in the store the server listens on loopback only and says so; another
//! address without keys needs `--no-auth`, and the warning stays.

use std::future::IntoFuture as _;

use axum::serve::ListenerExt as _;
use std::io::Write as _;
use std::sync::Arc;

use qore_client::CancellationToken;
use qore_session::{traced_notes, SessionManager};

use crate::app::{routes, App};
use crate::config::{ServeFlags, ServeSettings};
use crate::gate::{AuthMode, Gate};
use crate::metrics::Metrics;
use crate::route::Router;

/// Why the server could not start (or stopped).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{0}")]
    Config(#[from] crate::config::ConfigError),
    #[error("the session store: {0}")]
    Store(#[from] qore_store::StoreError),
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        addr: std::net::SocketAddr,
        source: std::io::Error,
    },
    #[error("{0}")]
    Refused(String),
    #[error("the server failed: {0}")]
    Serve(std::io::Error),
}

/// Run `qore serve` until SIGTERM or Ctrl-C and the drain are over.
pub async fn run(flags: ServeFlags) -> Result<(), RunError> {
    // The config dir (QORE_CONFIG_DIR, else the user's): its providers, agents and [serve].
    let config_dir = qore_agents::config::default_dir();
    let config = qore_agents::config::Config::load(config_dir.as_deref());
    let settings = ServeSettings::load(&flags, config.dir.as_deref())?;
    let store = qore_store::Store::open_default()?;
    let manager = SessionManager::new(Some(store), config, traced_notes());
    let Some(store) = manager.store().cloned() else {
        return Err(RunError::Refused("no session store".into()));
    };
    let keyed = Gate::has_keys(&store)?;
    let loopback = settings.listen.ip().is_loopback();
    let mode = match (keyed, settings.no_auth) {
        (_, true) => AuthMode::Open,
        (true, false) => AuthMode::Keys,
        (false, false) if loopback => AuthMode::UntilKeys,
        (false, false) => {
            return Err(RunError::Refused(format!(
                "no API keys exist, so qore serve listens on loopback only; to listen on {} \
                 create a key (`qore serve keys create NAME`) or pass --no-auth",
                settings.listen
            )))
        }
    };
    match mode {
        AuthMode::Open if !loopback => eprintln!(
            "qore serve: WARNING: --no-auth on {}: anyone who can reach it may use every model",
            settings.listen
        ),
        AuthMode::Open => eprintln!("qore serve: --no-auth: keys are not checked"),
        AuthMode::UntilKeys => eprintln!(
            "qore serve: no API keys yet: serving any caller on loopback only \
             (`qore serve keys create NAME` makes keys required)"
        ),
        AuthMode::Keys => {}
    }
    let listener = (tokio::net::TcpListener::bind(settings.listen).await).map_err(|source| {
        RunError::Listen {
            addr: settings.listen,
            source,
        }
    })?;
    let addr = listener.local_addr().map_err(RunError::Serve)?;
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "http://{addr}");
    let _ = stdout.flush();
    drop(stdout);
    eprintln!("qore serve: listening on http://{addr}");
    let drain = settings.drain_timeout;
    let (server_tools, warnings) =
        crate::server_tools::ServerTools::start(&settings, manager.config().dir.as_deref()).await;
    for warning in warnings {
        eprintln!("qore serve: warning: {warning}");
    }
    if let Some(tools) = &server_tools {
        let names: Vec<String> = match tools.toolset() {
            Ok(set) => set
                .registry
                .specs()
                .iter()
                .map(|s| s.name.clone())
                .collect(),
            Err(_) => Vec::new(),
        };
        eprintln!("qore serve: server-side tools: {}", names.join(", "));
    }
    let app = Arc::new(App {
        router: Router::new(settings.root.clone()),
        gate: Gate::new(store, mode),
        metrics: Metrics::new(),
        manager,
        settings,
        shutdown: CancellationToken::new(),
        stopping: CancellationToken::new(),
        server_tools,
    });
    let shutdown = app.shutdown.clone();
    let stopping = app.stopping.clone();
    let signal = {
        let stopping = stopping.clone();
        async move {
            stop_signal().await;
            eprintln!("qore serve: stopping: streams in flight have {drain:?} to finish");
            stopping.cancel();
            let shutdown = shutdown.clone();
            tokio::spawn(async move {
                tokio::time::sleep(drain).await;
                shutdown.cancel();
            });
        }
    };
    let kept = app.clone();
    // Each chunk of a stream goes out when written (Nagle's algorithm would hold a small
    // write until the client's delayed ACK: ~40 ms a delta).
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    let server = axum::serve(listener, routes(app)).with_graceful_shutdown(signal);
    let server = std::pin::pin!(server.into_future());
    let deadline = async {
        stopping.cancelled().await;
        // The drain, then a moment for the cancelled streams to write their end.
        tokio::time::sleep(drain + std::time::Duration::from_secs(2)).await;
    };
    let result = tokio::select! {
        result = server => result.map_err(RunError::Serve),
        () = deadline => Ok(()),
    };
    // Usage still queued is written before the process ends.
    let flushed =
        tokio::task::spawn_blocking(move || kept.gate.flush(std::time::Duration::from_secs(5)));
    if !flushed.await.unwrap_or(false) {
        eprintln!("qore serve: some usage rows could not be written before stopping");
    }
    result
}

async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut term = match signal(SignalKind::terminate()) {
            Ok(term) => term,
            Err(_) => return std::future::pending().await,
        };
        tokio::select! {
            _ = term.recv() => {}
            _ = tokio::signal::ctrl_c() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
