//! The request body's total deadline: a body not wholly received within
//! `body_timeout` of its request head fails with [`BodyDeadline`], which
//! [`crate::respond::read_body`] answers as 408 in the caller's dialect. A body that drips one byte
//! at a time cannot stretch it: the deadline is total, not between reads.

use std::future::Future as _;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use tokio::time::Sleep;

use super::counts::ConnectionCounts;

/// The error of a body that did not arrive in time.
#[derive(Debug, thiserror::Error)]
#[error("the request body did not arrive within {0:?}")]
pub struct BodyDeadline(pub Duration);

/// The deadline in `error`'s chain of sources, if that is why the body failed.
pub fn body_deadline<'a>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a BodyDeadline> {
    let mut next = Some(error);
    while let Some(error) = next {
        if let Some(late) = error.downcast_ref::<BodyDeadline>() {
            return Some(late);
        }
        next = error.source();
    }
    None
}

/// `inner` that fails once its deadline passes.
pub struct DeadlineBody<B> {
    inner: B,
    limit: Duration,
    deadline: Pin<Box<Sleep>>,
    counts: ConnectionCounts,
    failed: bool,
}

impl<B> DeadlineBody<B> {
    /// `inner`, to be wholly received within `limit` from now.
    pub fn new(inner: B, limit: Duration, counts: ConnectionCounts) -> Self {
        DeadlineBody {
            inner,
            limit,
            deadline: Box::pin(tokio::time::sleep(limit)),
            counts,
            failed: false,
        }
    }
}

impl<B> Body for DeadlineBody<B>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: Into<axum::BoxError>,
{
    type Data = Bytes;
    type Error = axum::BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = self.get_mut();
        if this.failed {
            return Poll::Ready(None);
        }
        if !this.inner.is_end_stream() && this.deadline.as_mut().poll(cx).is_ready() {
            this.failed = true;
            this.counts.closed("body_timeout");
            return Poll::Ready(Some(Err(Box::new(BodyDeadline(this.limit)))));
        }
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Err(error))) => Poll::Ready(Some(Err(error.into()))),
            Poll::Ready(Some(Ok(frame))) => Poll::Ready(Some(Ok(frame))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.failed || self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A body that yields one byte every `gap`, `n` times.
    fn drip(gap: Duration, n: usize) -> axum::body::Body {
        let stream = futures_util::stream::unfold(0, move |i| async move {
            if i == n {
                return None;
            }
            tokio::time::sleep(gap).await;
            Some((Ok::<_, std::io::Error>(Bytes::from_static(b"a")), i + 1))
        });
        axum::body::Body::from_stream(stream)
    }

    #[tokio::test]
    async fn a_body_in_time_passes_and_a_drip_past_the_total_fails() {
        // (gap between bytes, bytes, limit, arrives whole)
        let cases = [
            (Duration::from_millis(10), 5, Duration::from_secs(2), true),
            // Each gap is far below the limit; the total is not.
            (
                Duration::from_millis(100),
                30,
                Duration::from_millis(500),
                false,
            ),
        ];
        for (gap, n, limit, whole) in cases {
            let counts = ConnectionCounts::default();
            let body = DeadlineBody::new(drip(gap, n), limit, counts.clone());
            let body = axum::body::Body::new(body);
            let got = axum::body::to_bytes(body, 1024).await;
            match got {
                Ok(bytes) => {
                    assert!(whole, "{gap:?}×{n}: arrived");
                    assert_eq!(bytes.len(), n);
                }
                Err(err) => {
                    assert!(!whole, "{gap:?}×{n}: {err}");
                    assert!(body_deadline(&err).is_some(), "{err:?}");
                    assert_eq!(counts.closed_count("body_timeout"), 1);
                }
            }
        }
        let other = std::io::Error::other("x");
        assert!(body_deadline(&other).is_none());
    }
}
