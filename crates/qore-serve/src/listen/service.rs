//! The router as hyper calls it: each request's body under its total deadline
//! ([`super::body`]); on HTTP/2, each request counted open until its response body is done,
//! so a connection with no request open for `header_read_timeout` can be closed ([`idle`]).
//! (HTTP/1.1's keep-alive wait is hyper's own header timer.)

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;
use tokio::sync::Notify;

use super::body::DeadlineBody;
use super::counts::ConnectionCounts;

/// The requests open on one connection.
#[derive(Debug, Default)]
pub struct Activity {
    open: AtomicUsize,
    changed: Notify,
}

/// Counts one open request until dropped.
struct Open(Arc<Activity>);

impl Open {
    fn new(activity: Arc<Activity>) -> Open {
        activity.open.fetch_add(1, Ordering::SeqCst);
        activity.changed.notify_one();
        Open(activity)
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::SeqCst);
        self.0.changed.notify_one();
    }
}

/// Once `activity` had no request open for `limit`.
pub async fn idle(activity: Arc<Activity>, limit: Duration) {
    loop {
        if activity.open.load(Ordering::SeqCst) > 0 {
            activity.changed.notified().await;
            continue;
        }
        let quiet = tokio::time::timeout(limit, activity.changed.notified()).await;
        if quiet.is_err() && activity.open.load(Ordering::SeqCst) == 0 {
            return;
        }
    }
}

/// The router with the listener's per-request limits.
#[derive(Clone)]
pub struct Routed {
    pub router: axum::Router,
    pub body_timeout: Duration,
    pub counts: ConnectionCounts,
    /// HTTP/2: the connection's open requests.
    pub activity: Option<Arc<Activity>>,
}

impl hyper::service::Service<hyper::Request<Incoming>> for Routed {
    type Response = axum::response::Response;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Self::Response, Infallible>>;

    fn call(&self, request: hyper::Request<Incoming>) -> Self::Future {
        let (limit, counts) = (self.body_timeout, self.counts.clone());
        let request =
            request.map(|body| axum::body::Body::new(DeadlineBody::new(body, limit, counts)));
        let open = self.activity.clone().map(Open::new);
        // The router is always ready: no poll_ready needed.
        let routed = tower_service::Service::call(&mut self.router.clone(), request);
        Box::pin(async move {
            let response = routed.await?;
            Ok(match open {
                Some(open) => {
                    response.map(|inner| axum::body::Body::new(Tracked { inner, _open: open }))
                }
                None => response,
            })
        })
    }
}

/// A response body that keeps its request counted open until it is dropped.
struct Tracked {
    inner: axum::body::Body,
    _open: Open,
}

impl Body for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.get_mut().inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn idle_waits_for_no_request_open_for_the_whole_limit() {
        let limit = Duration::from_millis(200);
        let activity = Arc::new(Activity::default());
        let open = Open::new(activity.clone());
        let waiting = tokio::spawn(idle(activity.clone(), limit));
        // A request open: never idle.
        tokio::time::sleep(limit * 2).await;
        assert!(!waiting.is_finished());
        let closed = tokio::time::Instant::now();
        drop(open);
        waiting.await.unwrap();
        assert!(closed.elapsed() >= limit);
    }
}
