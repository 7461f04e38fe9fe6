//! The router as hyper calls it: each request's body under its total deadline
//! ([`super::body`]); on HTTP/2, each response body tracked by the connection's
//! [`Activity`] (idle connections, stalled streams).

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use hyper::body::Incoming;

use super::body::DeadlineBody;
use super::counts::ConnectionCounts;
use super::h2::Activity;

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
        let opened = self.activity.as_ref().map(|activity| activity.begin());
        // The router is always ready: no poll_ready needed.
        let routed = tower_service::Service::call(&mut self.router.clone(), request);
        Box::pin(async move {
            let response = routed.await?;
            Ok(match opened {
                Some(opened) => response.map(|body| opened.track(body)),
                None => response,
            })
        })
    }
}
