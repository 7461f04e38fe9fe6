//! Hearing that a server's tools changed.
//!
//! Promises: every `notifications/tools/list_changed` a server sends moves its
//! [`Changes`] counter: on a connection with `initialize` the notification comes as it is
//! (the [`Watch`] client handler); on a `2026-07-28` connection, where such notifications
//! only ride a `subscriptions/listen` stream, [`listen`] opens that stream when the server
//! says its tool list can change, for as long as the connection lives. A stream the
//! server refuses is a log line, never a failure of the connection.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use rmcp::model::{ServerNotification, SubscriptionFilter};
use rmcp::service::{NotificationContext, Peer};
use rmcp::{ClientHandler, RoleClient};

/// How often a server said its tools changed (or was started again).
#[derive(Debug, Clone, Default)]
pub struct Changes(Arc<AtomicU64>);

impl Changes {
    pub fn count(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }

    pub fn bump(&self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// qore's client side of a connection: it counts tool list changes.
#[derive(Debug, Clone, Default)]
pub struct Watch {
    pub changes: Changes,
}

impl ClientHandler for Watch {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.changes.bump();
    }
}

/// On a connection without `initialize` whose server's tool list can change, listen for
/// the changes (see the module doc).
pub fn listen(server: &str, peer: &Peer<RoleClient>, changes: &Changes) {
    let Some(info) = peer.peer_info() else {
        return;
    };
    let can_change = (info.capabilities.tools.as_ref()).and_then(|t| t.list_changed);
    if info.protocol_version.has_initialize() || can_change != Some(true) {
        return;
    }
    let (server, peer, changes) = (server.to_string(), peer.clone(), changes.clone());
    tokio::spawn(async move {
        let filter = SubscriptionFilter::builder().tools_list_changed().build();
        let mut stream = match peer.listen(filter).await {
            Ok(stream) => stream,
            Err(err) => {
                tracing::info!(server = %server, "MCP server refused to report tool changes: {err}");
                return;
            }
        };
        while let Ok(Some(notification)) = stream.next().await {
            if matches!(
                notification,
                ServerNotification::ToolListChangedNotification(_)
            ) {
                changes.bump();
            }
        }
    });
}
