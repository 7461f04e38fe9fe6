//! What hyper does not bound on HTTP/2, per connection:
//!
//! - a connection with no request open for `header_read_timeout` ([`Activity::idle`]): each
//!   request counts as open from its head until its response body is done;
//! - a stream the client stopped reading: HTTP/2's flow control stops the server's writes
//!   before the socket fills, so the connection's write-stall timer never sees it. Each
//!   response body notes when it handed hyper a frame that hyper has not come back for;
//!   past `write_stall_timeout` ([`Activity::sweep`]) the body is dropped, which cancels the
//!   upstream request, and the stream ends in a reset. Other streams go on.

use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use tokio::sync::Notify;

use super::counts::ConnectionCounts;

/// The requests open on one connection.
#[derive(Debug, Default)]
pub struct Activity {
    open: AtomicUsize,
    changed: Notify,
    streams: Mutex<Vec<Weak<Stream>>>,
}

/// Why a stream's body was dropped.
#[derive(Debug, thiserror::Error)]
#[error("the client read nothing of this stream for {0:?}")]
struct Stalled(Duration);

/// One response body, shared with the sweep.
#[derive(Debug, Default)]
struct Stream {
    state: Mutex<StreamState>,
}

#[derive(Debug, Default)]
struct StreamState {
    body: Option<axum::body::Body>,
    /// When a frame was handed to hyper that it has not come back for since.
    handed: Option<Instant>,
    /// Dropped by the sweep after this long.
    stalled: Option<Duration>,
}

impl Activity {
    /// A request begins: counted open until its response body is done (or it is dropped
    /// before it has one).
    pub fn begin(self: &Arc<Self>) -> Opened {
        self.open.fetch_add(1, Ordering::SeqCst);
        self.changed.notify_one();
        Opened(self.clone())
    }

    /// Once no request was open for `limit`.
    pub async fn idle(&self, limit: Duration) {
        loop {
            if self.open.load(Ordering::SeqCst) > 0 {
                self.changed.notified().await;
                continue;
            }
            let quiet = tokio::time::timeout(limit, self.changed.notified()).await;
            if quiet.is_err() && self.open.load(Ordering::SeqCst) == 0 {
                return;
            }
        }
    }

    /// Forever: drop the body of every stream hyper has not come back to for `limit`.
    pub async fn sweep(&self, limit: Duration, counts: &ConnectionCounts) {
        let every = (limit / 2).max(Duration::from_millis(100));
        loop {
            tokio::time::sleep(every).await;
            let streams: Vec<Arc<Stream>> = (self.streams.lock())
                .unwrap_or_else(PoisonError::into_inner)
                .iter()
                .filter_map(Weak::upgrade)
                .collect();
            for stream in streams {
                let mut state = stream.lock();
                if state.handed.is_some_and(|at| at.elapsed() >= limit) {
                    // Dropped outside the lock's scope below: the relay's drop cancels the
                    // upstream request.
                    let body = state.body.take();
                    state.handed = None;
                    state.stalled = Some(limit);
                    drop(state);
                    drop(body);
                    counts.closed("write_stall");
                }
            }
        }
    }
}

impl Stream {
    fn lock(&self) -> std::sync::MutexGuard<'_, StreamState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// One request counted open until dropped.
pub struct Opened(Arc<Activity>);

impl Drop for Opened {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::SeqCst);
        self.0.changed.notify_one();
    }
}

impl Opened {
    /// `body` as this request's response body, still counted open, and watched by
    /// [`Activity::sweep`].
    pub fn track(self, body: axum::body::Body) -> axum::body::Body {
        let stream = Arc::new(Stream::default());
        stream.lock().body = Some(body);
        let mut streams = (self.0.streams.lock()).unwrap_or_else(PoisonError::into_inner);
        streams.retain(|s| s.strong_count() > 0);
        streams.push(Arc::downgrade(&stream));
        drop(streams);
        axum::body::Body::new(Tracked {
            stream,
            _open: self,
        })
    }
}

/// A response body counted open until dropped.
struct Tracked {
    stream: Arc<Stream>,
    _open: Opened,
}

impl Body for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let mut state = self.stream.lock();
        state.handed = None;
        let polled = match state.body.as_mut() {
            Some(body) => Pin::new(body).poll_frame(cx),
            None => {
                return match state.stalled.take() {
                    Some(limit) => Poll::Ready(Some(Err(axum::Error::new(Stalled(limit))))),
                    None => Poll::Ready(None),
                }
            }
        };
        if let Poll::Ready(Some(Ok(_))) = &polled {
            state.handed = Some(Instant::now());
        }
        if let Poll::Ready(None) = &polled {
            state.body = None;
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        let state = self.stream.lock();
        state.stalled.is_none() && state.body.as_ref().is_none_or(|b| b.is_end_stream())
    }

    fn size_hint(&self) -> SizeHint {
        match self.stream.lock().body.as_ref() {
            Some(body) => body.size_hint(),
            None => SizeHint::with_exact(0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn idle_waits_for_no_request_open_for_the_whole_limit() {
        let limit = Duration::from_millis(200);
        let activity = Arc::new(Activity::default());
        let open = activity.begin();
        let waiting = tokio::spawn({
            let activity = activity.clone();
            async move { activity.idle(limit).await }
        });
        // A request open: never idle.
        tokio::time::sleep(limit * 2).await;
        assert!(!waiting.is_finished());
        let closed = tokio::time::Instant::now();
        drop(open);
        waiting.await.unwrap();
        assert!(closed.elapsed() >= limit);
    }

    #[tokio::test]
    async fn a_frame_not_taken_for_the_limit_drops_the_body() {
        use futures_util::StreamExt as _;
        let limit = Duration::from_millis(200);
        let activity = Arc::new(Activity::default());
        let counts = ConnectionCounts::default();
        // An endless body; a guard in its stream tells when it is dropped.
        let (dropped_tx, dropped_rx) = tokio::sync::oneshot::channel::<()>();
        let endless = futures_util::stream::repeat(()).map(move |()| {
            let _keep = &dropped_tx;
            Ok::<_, std::io::Error>(Bytes::from_static(b"x"))
        });
        let mut body = activity
            .begin()
            .track(axum::body::Body::from_stream(endless));
        let sweeping = tokio::spawn({
            let (activity, counts) = (activity.clone(), counts.clone());
            async move { activity.sweep(limit, &counts).await }
        });
        // Taken promptly: never stalled.
        for _ in 0..5 {
            let frame = futures_util::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx));
            assert!(frame.await.unwrap().is_ok());
            tokio::time::sleep(limit / 4).await;
        }
        assert_eq!(counts.closed_count("write_stall"), 0);
        // Then not taken: dropped by the sweep, and the next poll is an error.
        tokio::time::timeout(limit * 4, dropped_rx)
            .await
            .unwrap()
            .unwrap_err();
        assert_eq!(counts.closed_count("write_stall"), 1);
        let next = futures_util::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx));
        assert!(next.await.unwrap().is_err());
        sweeping.abort();
    }
}
