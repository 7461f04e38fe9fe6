//! Hearing that a server's tools changed.
//!
//! Promises: every `notifications/tools/list_changed` a server sends moves its
//! [`Changes`] counter, counted by the connection's transport ([`Counted`]) as the message
//! is read, before any message the server sent after it is handled: a change the server
//! announced while answering a tool call is counted by the time the call's result comes
//! back (so a tool loop's next round sees it). On a connection with `initialize` the
//! notification comes as it is; on a `2026-07-28` connection, where such notifications only
//! ride a `subscriptions/listen` stream, [`listen`] opens that stream when the server says
//! its tool list can change, for as long as the connection lives. A stream the server
//! refuses is a log line, never a failure of the connection.

use std::borrow::Cow;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use rmcp::model::{JsonRpcMessage, ServerNotification, SubscriptionFilter};
use rmcp::service::{Peer, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::RoleClient;

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

/// A client transport that counts the tool list changes it reads into [`Changes`].
pub struct Counted<T> {
    inner: T,
    changes: Changes,
}

impl<T> Counted<T> {
    pub fn new(inner: T, changes: &Changes) -> Self {
        Counted {
            inner,
            changes: changes.clone(),
        }
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Counted<T> {
    type Error = T::Error;

    fn name() -> Cow<'static, str> {
        T::name()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let message = self.inner.receive().await?;
        if let JsonRpcMessage::Notification(notification) = &message {
            if let ServerNotification::ToolListChangedNotification(_) = notification.notification {
                self.changes.bump();
            }
        }
        Some(message)
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

/// On a connection without `initialize` whose server's tool list can change, subscribe to
/// the changes (see the module doc; the transport counts them).
pub fn listen(server: &str, peer: &Peer<RoleClient>) {
    let Some(info) = peer.peer_info() else {
        return;
    };
    let can_change = (info.capabilities.tools.as_ref()).and_then(|t| t.list_changed);
    if info.protocol_version.has_initialize() || can_change != Some(true) {
        return;
    }
    let (server, peer) = (server.to_string(), peer.clone());
    tokio::spawn(async move {
        let filter = SubscriptionFilter::builder().tools_list_changed().build();
        let mut stream = match peer.listen(filter).await {
            Ok(stream) => stream,
            Err(err) => {
                tracing::info!(server = %server, "MCP server refused to report tool changes: {err}");
                return;
            }
        };
        // Drained so the subscription stays open; the transport already counted them.
        while let Ok(Some(_)) = stream.next().await {}
    });
}
