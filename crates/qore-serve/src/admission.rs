//! Letting a request in, the same for every endpoint: the key (401), the body under the limit
//! (413), the endpoint's decoding (400 naming the field), the key's models (403) and limits
//! (429). A refused request is counted and answered in the endpoint's own error shape; it
//! never reaches a provider. A store that cannot be reached while checking the key or its
//! limits is a 503 with `Retry-After`, in the same shape. An admitted request of a key with
//! `rpm` or `tpm` carries what is left of them as `x-ratelimit-*` headers ([`rate_headers`]).

use std::sync::Arc;

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue};
use axum::response::Response;

use crate::exchange::Exchange;
use crate::gate::{Admission, Caller};
use crate::respond::read_body;
use crate::state::App;
use crate::{ErrorKind, ServeError};

/// A request let in.
pub struct Admitted<T> {
    pub caller: Caller,
    pub request: T,
    pub exchange: Exchange,
    /// What the key's limits leave (for the rate-limit headers).
    pub admission: Admission,
}

/// A request turned away, with its bookkeeping.
pub struct Refused {
    pub exchange: Exchange,
    pub error: ServeError,
}

impl Refused {
    /// Count the refusal and answer it with `write` (the endpoint's error shape).
    pub fn respond(self, write: impl FnOnce(&ServeError) -> Response) -> Response {
        self.exchange.refused(&self.error);
        write(&self.error)
    }
}

/// Let in the request `body` of `endpoint`, decoded by `decode`; `model` names what it asks
/// for and `estimate` its input tokens.
pub async fn admit<T>(
    app: &Arc<App>,
    endpoint: &'static str,
    headers: &HeaderMap,
    body: Body,
    decode: impl FnOnce(&[u8]) -> Result<T, ServeError>,
    model: impl Fn(&T) -> &str,
    estimate: impl Fn(&T) -> u64,
) -> Result<Admitted<T>, Refused> {
    let caller = match app.gate.authenticate(headers).await {
        Ok(caller) => caller,
        Err(error) => {
            let exchange = Exchange::new(app.clone(), endpoint, Caller::open(), "unknown");
            return Err(Refused { exchange, error });
        }
    };
    let mut exchange = Exchange::new(app.clone(), endpoint, caller.clone(), "unknown");
    let decoded = match read_body(body, app.settings.body_limit).await {
        Ok(bytes) => decode(&bytes),
        Err(error) => Err(error),
    };
    let request = match decoded {
        Ok(request) => request,
        Err(error) => return Err(Refused { exchange, error }),
    };
    let asked = model(&request);
    exchange.note.asked = asked.chars().take(200).collect();
    // Only names the server knows become metric labels.
    if app.router.knows(&app.manager, asked) {
        exchange.model = asked.to_owned();
    }
    if !app.gate.permits(&caller, asked) {
        let error = ServeError::new(
            ErrorKind::Permission,
            format!("this key may not use the model {asked:?}"),
        );
        return Err(Refused { exchange, error });
    }
    let admission = match app.gate.admit(&caller, estimate(&request)).await {
        Ok(admission) => admission,
        Err(error) => return Err(Refused { exchange, error }),
    };
    Ok(Admitted {
        caller,
        request,
        exchange,
        admission,
    })
}

/// OpenAI's `x-ratelimit-{limit,remaining}-{requests,tokens}` for the limits a key has.
pub fn rate_headers(admission: &Admission, headers: &mut HeaderMap) {
    let pairs = [
        (admission.requests, "requests"),
        (admission.tokens, "tokens"),
    ];
    for (limit, what) in pairs {
        let Some((limit, left)) = limit else {
            continue;
        };
        for (name, value) in [("limit", limit), ("remaining", left)] {
            let header = format!("x-ratelimit-{name}-{what}");
            if let (Ok(name), Ok(value)) = (
                axum::http::HeaderName::try_from(header),
                HeaderValue::from_str(&value.to_string()),
            ) {
                headers.insert(name, value);
            }
        }
    }
}
