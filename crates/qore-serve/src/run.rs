//! Starting the server: settings, the store, the listener (its URL printed alone on
//! stdout's first line, so a script can read it), and the drain on SIGTERM or Ctrl-C: stop
//! accepting, let streams in flight finish for the drain time, then end the rest (they are
//! recorded as cancelled).
//!
//! The listener is qore's own ([`crate::listen`]): every phase of a connection has a limit,
//! the open connections a cap, and with `--tls-cert`/`--tls-key` it serves HTTPS (the URL
//! printed is then `https://`).
//!
//! With no key in the store the server listens on loopback only and says so; another
//! address without keys needs `--no-auth`, and the warning stays.
//!
//! The store is given (qore-cli opens it from `--store` / `QORE_STORE_URL`): SQLite for one
//! machine, PostgreSQL for several servers behind a load balancer. A server keeps nothing per
//! process that another would need (keys are rechecked, limits and conversations live in the
//! store), so several [`Server`]s on one store answer as one.

use std::io::Write as _;
use std::sync::Arc;

use qore_client::CancellationToken;
use qore_session::{traced_notes, SessionManager};
use qore_store::Store;

use crate::config::{ServeFlags, ServeSettings};
use crate::gate::{AuthMode, Gate};
use crate::metrics::Metrics;
use crate::route::Router;
use crate::routes::routes;
use crate::state::App;

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
    #[error("TLS: {0}")]
    Tls(#[from] crate::listen::TlsError),
    #[error("the server failed: {0}")]
    Serve(std::io::Error),
}

/// Run `qore serve` on `store` until SIGTERM or Ctrl-C and the drain are over.
pub async fn run(flags: ServeFlags, store: Arc<dyn Store>) -> Result<(), RunError> {
    // The config dir (QORE_CONFIG_DIR, else the user's): its providers, agents and [serve].
    let config_dir = qore_agents::config::default_dir();
    let config = qore_agents::config::Config::load(config_dir.as_deref());
    let settings = ServeSettings::load(&flags, config.dir.as_deref())?;
    let listen = settings.listen;
    let server = Server::start(settings, config, store).await?;
    let loopback = listen.ip().is_loopback();
    match server.auth_mode() {
        AuthMode::Open if !loopback => eprintln!(
            "qore serve: WARNING: --no-auth on {listen}: anyone who can reach it may use every \
             model"
        ),
        AuthMode::Open => eprintln!("qore serve: --no-auth: keys are not checked"),
        AuthMode::UntilKeys => eprintln!(
            "qore serve: no API keys yet: serving any caller on loopback only \
             (`qore serve keys create NAME` makes keys required)"
        ),
        AuthMode::Keys => {}
    }
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{}", server.url());
    let _ = stdout.flush();
    drop(stdout);
    eprintln!("qore serve: listening on {}", server.url());
    for warning in &server.warnings {
        eprintln!("qore serve: warning: {warning}");
    }
    if let Some(tools) = &server.app.server_tools {
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
    tokio::select! {
        () = stop_signal() => {}
        // The server failed by itself: stop says how.
        () = server.ended() => {}
    }
    let drain = server.app.settings.drain_timeout;
    eprintln!("qore serve: stopping: streams in flight have {drain:?} to finish");
    let (result, flushed) = server.stop().await;
    if !flushed {
        eprintln!("qore serve: some usage rows could not be written before stopping");
    }
    result
}

/// A server listening: what [`run`] starts, and what tests start several of on one store.
pub struct Server {
    addr: std::net::SocketAddr,
    /// Whether it serves HTTPS.
    tls: bool,
    app: Arc<App>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
    /// Cancelled once the server stopped serving.
    ended: CancellationToken,
    /// What the server-side tools said at start.
    pub warnings: Vec<String>,
}

impl Server {
    /// Listen on `settings.listen` and serve `config`'s agents with `store` (keys, limits,
    /// usage, stored conversations). Without a key in the store only a loopback address is
    /// allowed, unless `settings.no_auth`.
    pub async fn start(
        settings: ServeSettings,
        config: qore_agents::config::Config,
        store: Arc<dyn Store>,
    ) -> Result<Server, RunError> {
        let keyed = Gate::has_keys(&*store).await?;
        let loopback = settings.listen.ip().is_loopback();
        let mode = match (keyed, settings.no_auth) {
            (_, true) => AuthMode::Open,
            (true, false) => AuthMode::Keys,
            (false, false) if loopback => AuthMode::UntilKeys,
            (false, false) => {
                return Err(RunError::Refused(format!(
                    "no API keys exist, so qore serve listens on loopback only; to listen on \
                     {} create a key (`qore serve keys create NAME`) or pass --no-auth",
                    settings.listen
                )))
            }
        };
        let listener =
            (tokio::net::TcpListener::bind(settings.listen).await).map_err(|source| {
                RunError::Listen {
                    addr: settings.listen,
                    source,
                }
            })?;
        let addr = listener.local_addr().map_err(RunError::Serve)?;
        let (server_tools, warnings) =
            crate::server_tools::ServerTools::start(&settings, config.dir.as_deref()).await;
        let metrics = Metrics::with_store(store.clone());
        let listener = crate::listen::Listener::new(
            listener,
            settings.listener.clone(),
            metrics.connections.clone(),
        )?;
        let tls = listener.is_tls();
        let gate = Gate::start(store.clone(), mode, metrics.store_errors()).await;
        let manager = SessionManager::new(Some(store), config, traced_notes());
        let app = Arc::new(App {
            router: Router::new(settings.root.clone()),
            gate,
            metrics,
            manager,
            settings,
            shutdown: CancellationToken::new(),
            stopping: CancellationToken::new(),
            server_tools,
        });
        let store = app.gate.store().clone();
        crate::request_log::start_pruning(store, app.settings.request_log, app.stopping.clone());
        let server = listener.serve(routes(app.clone()), app.stopping.clone());
        let ended = CancellationToken::new();
        let task = tokio::spawn({
            let ended = ended.clone();
            async move {
                let served = server.await;
                ended.cancel();
                served
            }
        });
        Ok(Server {
            addr,
            tls,
            app,
            task,
            ended,
            warnings,
        })
    }

    /// `http://ADDR:PORT`, or `https://` when it serves TLS.
    pub fn url(&self) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://{}", self.addr)
    }

    pub fn auth_mode(&self) -> AuthMode {
        self.app.gate.auth_mode()
    }

    /// Once the server stopped by itself (it failed).
    async fn ended(&self) {
        self.ended.cancelled().await;
    }

    /// Stop as at SIGTERM: `/readyz` says so and no connection is accepted, streams in
    /// flight have the drain time to finish, then the rest end (recorded as cancelled); the
    /// usage still queued is written. How the server ended, and whether the usage was.
    pub async fn stop(self) -> (Result<(), RunError>, bool) {
        let drain = self.app.settings.drain_timeout;
        self.app.stopping.cancel();
        let shutdown = self.app.shutdown.clone();
        let ends = tokio::spawn(async move {
            tokio::time::sleep(drain).await;
            shutdown.cancel();
        });
        // The drain, then a moment for the cancelled streams to write their end.
        let deadline = drain + std::time::Duration::from_secs(2);
        let mut task = self.task;
        let result = match tokio::time::timeout(deadline, &mut task).await {
            Ok(Ok(served)) => served.map_err(RunError::Serve),
            Ok(Err(join)) => Err(RunError::Serve(std::io::Error::other(join.to_string()))),
            Err(_) => {
                task.abort();
                Ok(())
            }
        };
        ends.abort();
        self.app.shutdown.cancel();
        let flushed = (self.app.gate)
            .flush(std::time::Duration::from_secs(5))
            .await;
        (result, flushed)
    }
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
