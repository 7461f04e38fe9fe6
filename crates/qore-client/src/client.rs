//! [`Client`]: a protocol, a base URL and credentials, ready to stream.
//!
//! A request goes to the protocol's path, or the `endpoint` that overrides it, joined to
//! `base_url` by the URL rule of [`crate::join_endpoint`] (`crate::endpoint`). An empty API
//! key sends no credential header.

use std::sync::Arc;

use qore_core::ErrorInfo;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE};
use tokio_util::sync::CancellationToken;

use crate::codec::{body_bytes, BodyRenderer, ChatRequest, FimRequest, Protocol};
use crate::encode_cache::{encode_spliced, EncodeCache};
use crate::endpoint::join_under;
use crate::stream::{Attempts, NewDecoder};
use crate::transport::bad_answer;
use crate::transport::get::Got;
use crate::transport::http::{build_client, redact, Timeouts, REDACTED};
use crate::transport::parsed_url::ParsedUrl;
use crate::transport::retry::{is_retryable_status, RetryPolicy};
use crate::{transport, ModelInfo, ResponseStream};

/// Where and how to reach a provider. Its `Debug` output shows whether there is an API key,
/// never the key.
#[derive(Clone, Default)]
pub struct ClientConfig {
    /// The provider's base URL as it documents it (`https://api.openai.com/v1`); request paths are joined to it by the endpoint rule.
    pub base_url: String,
    /// Overrides the protocol's request path (see the module doc).
    pub endpoint: Option<String>,
    /// The API key, sent the way the protocol wants it (bearer, `x-api-key`, `key=`); never shown by `Debug`.
    pub api_key: Option<String>,
    /// Extra headers sent with every request.
    pub headers: Vec<(String, String)>,
    /// Connect and idle timeouts.
    pub timeouts: Timeouts,
    /// When a request is sent again (see [`crate::transport::retry`]).
    pub retry: RetryPolicy,
}

impl std::fmt::Debug for ClientConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientConfig")
            .field("base_url", &self.base_url)
            .field("endpoint", &self.endpoint)
            .field("api_key", &self.api_key.as_ref().map(|_| REDACTED))
            .field("headers", &self.headers)
            .field("timeouts", &self.timeouts)
            .field("retry", &self.retry)
            .finish()
    }
}

impl ClientConfig {
    /// A configuration for `base_url` with no key, no extra headers and the default timeouts and retries.
    pub fn new(base_url: impl Into<String>) -> Self {
        ClientConfig {
            base_url: base_url.into(),
            ..Default::default()
        }
    }
}

/// A client for one provider endpoint speaking one protocol.
#[derive(Clone)]
pub struct Client {
    protocol: Arc<dyn Protocol>,
    config: ClientConfig,
    headers: HeaderMap,
    http: reqwest::Client,
    renderer: Option<Arc<dyn BodyRenderer>>,
    /// The base URL's path, parsed once (see [`join_under`]).
    base_path: Arc<str>,
    url: ParsedUrl,
}

impl Client {
    /// Validates the base URL and headers; builds the HTTP client.
    pub fn new(protocol: Arc<dyn Protocol>, config: ClientConfig) -> Result<Self, ErrorInfo> {
        let base = reqwest::Url::parse(&config.base_url).map_err(|err| {
            ErrorInfo::config(format!("invalid base URL {:?}: {err}", config.base_url))
        })?;
        if !matches!(base.scheme(), "http" | "https") {
            return Err(ErrorInfo::config(format!(
                "base URL {:?} is not http(s)",
                config.base_url
            )));
        }
        let mut pairs = protocol.default_headers();
        if let Some(key) = config.api_key.as_deref().filter(|k| !k.is_empty()) {
            pairs.extend(protocol.auth_headers(key));
        }
        pairs.extend(config.headers.iter().cloned());
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        for (name, value) in pairs {
            let name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|err| ErrorInfo::config(format!("invalid header name {name:?}: {err}")))?;
            let value = HeaderValue::from_str(&value).map_err(|err| {
                ErrorInfo::config(format!("invalid value for header {name}: {err}"))
            })?;
            headers.insert(name, value);
        }
        let loopback = match base.host() {
            Some(url::Host::Domain(name)) => name == "localhost",
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            None => false,
        };
        let http = build_client(&config.timeouts, loopback)?;
        Ok(Client {
            protocol,
            config,
            headers,
            http,
            renderer: None,
            base_path: base.path().into(),
            url: ParsedUrl::default(),
        })
    }

    /// The same client sending `pairs` too, over its own (a header of the same name is
    /// replaced): what a gateway passes on from its caller. Cheap: the connection pool is
    /// shared.
    pub fn with_headers(&self, pairs: &[(String, String)]) -> Result<Client, ErrorInfo> {
        let mut client = self.clone();
        for (name, value) in pairs {
            let name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|err| ErrorInfo::config(format!("invalid header name {name:?}: {err}")))?;
            let value = HeaderValue::from_str(value).map_err(|err| {
                ErrorInfo::config(format!("invalid value for header {name}: {err}"))
            })?;
            client.headers.insert(name, value);
        }
        Ok(client)
    }

    /// Write chat request bodies with `renderer` (an agent profile's `[body]`) instead of
    /// the protocol's encoder: the first request and every tool-loop continuation alike.
    pub fn with_renderer(mut self, renderer: Arc<dyn BodyRenderer>) -> Self {
        self.renderer = Some(renderer);
        self
    }

    /// The same client sending each request by `policy` (e.g. [`RetryPolicy::none`] where a
    /// newer request will soon ask again).
    pub fn with_retry(mut self, policy: RetryPolicy) -> Self {
        self.config.retry = policy;
        self
    }

    /// The wire protocol this client speaks.
    pub fn protocol(&self) -> &Arc<dyn Protocol> {
        &self.protocol
    }

    /// Where and how this client reaches its provider.
    pub fn config(&self) -> &ClientConfig {
        &self.config
    }

    /// The URL chat requests for `model` go to.
    pub fn chat_url(&self, model: &str, stream: bool) -> String {
        match &self.config.endpoint {
            Some(endpoint) => self.resolve(endpoint),
            None => self.resolve(&self.protocol.chat_path(model, stream)),
        }
    }

    fn resolve(&self, path: &str) -> String {
        join_under(&self.config.base_url, &self.base_path, path)
    }

    /// The request body for `request`, as bytes: the renderer's when there is one, else
    /// the protocol's encoder's.
    pub fn encode(&self, request: &ChatRequest<'_>) -> Result<Vec<u8>, ErrorInfo> {
        if let Some(renderer) = &self.renderer {
            return renderer.render(request);
        }
        body_bytes(&self.protocol.encode(request)?)
    }

    /// The same bytes as [`Client::encode`], each message encoded once per `cache`
    /// ([`EncodeCache`]: the renderer's fragments or the protocol's per-message entries).
    pub fn encode_cached(
        &self,
        request: &ChatRequest<'_>,
        cache: &mut EncodeCache,
    ) -> Result<Vec<u8>, ErrorInfo> {
        if let Some(renderer) = &self.renderer {
            return renderer.render_cached(request, cache);
        }
        match encode_spliced(&*self.protocol, request, cache) {
            Some(body) => body,
            None => self.encode(request),
        }
    }

    /// Encode `request` from history and stream the answer.
    pub fn stream(&self, request: &ChatRequest<'_>, cancel: CancellationToken) -> ResponseStream {
        self.stream_cached(request, &mut EncodeCache::new(), cancel)
    }

    /// [`Client::stream`], encoding through `cache` ([`Client::encode_cached`]).
    pub fn stream_cached(
        &self,
        request: &ChatRequest<'_>,
        cache: &mut EncodeCache,
        cancel: CancellationToken,
    ) -> ResponseStream {
        match self.encode_cached(request, cache) {
            Ok(body) => {
                let url = self.chat_url(request.model, request.options.stream);
                self.send(&url, body, request.options.stream, cancel)
            }
            Err(error) => ResponseStream::failed(self.protocol.clone(), error),
        }
    }

    /// Send an already encoded body (an agent template's rendering) and stream the answer.
    pub fn send(
        &self,
        url: &str,
        body: Vec<u8>,
        stream: bool,
        cancel: CancellationToken,
    ) -> ResponseStream {
        self.send_with(url, body, stream, |p| p.decoder(), cancel)
    }

    /// The URL fill-in-the-middle requests for `model` go to (`endpoint` still overrides).
    pub fn fim_url(&self, model: &str, stream: bool) -> Result<String, ErrorInfo> {
        if let Some(endpoint) = &self.config.endpoint {
            return Ok(self.resolve(endpoint));
        }
        let path = self.protocol.fim_path(model, stream).ok_or_else(|| {
            ErrorInfo::config(format!(
                "the {} protocol has no fill-in-the-middle endpoint",
                self.protocol.name()
            ))
        })?;
        Ok(self.resolve(&path))
    }

    /// The body of a fill-in-the-middle request: the renderer's (an agent's `[body]`) when
    /// it has one for it, else the protocol's encoder's.
    pub fn encode_fim(&self, request: &FimRequest<'_>) -> Result<Vec<u8>, ErrorInfo> {
        if let Some(body) = (self.renderer.as_ref()).and_then(|r| r.render_fim(request)) {
            return body;
        }
        body_bytes(&self.protocol.encode_fim(request)?)
    }

    /// Ask for the text between `request.prefix` and `request.suffix`; the answer streams as
    /// text deltas. The body is [`Client::encode_fim`]'s.
    pub fn complete_fim(
        &self,
        request: &FimRequest<'_>,
        cancel: CancellationToken,
    ) -> ResponseStream {
        let stream = request.options.stream;
        let prepared = (self.fim_url(request.model, stream))
            .and_then(|url| Ok((url, self.encode_fim(request)?)));
        match prepared {
            Ok((url, body)) => self.send_with(&url, body, stream, |p| p.fim_decoder(), cancel),
            Err(error) => ResponseStream::failed(self.protocol.clone(), error),
        }
    }

    fn send_with(
        &self,
        url: &str,
        body: Vec<u8>,
        stream: bool,
        new_decoder: NewDecoder,
        cancel: CancellationToken,
    ) -> ResponseStream {
        let failed = |error| ResponseStream::failed(self.protocol.clone(), error);
        if body.is_empty() {
            return failed(ErrorInfo::validation(
                "refusing to send an empty request body",
            ));
        }
        let mut headers = self.headers.clone();
        if stream {
            headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        }
        let parsed = self.url.parse(url).map_err(|err| err.to_string());
        let built = parsed.and_then(|parsed| {
            let request = self.http.post(parsed).headers(headers).body(body);
            request.build().map_err(|err| err.to_string())
        });
        let request = match built {
            Ok(request) => request,
            Err(err) => {
                return failed(ErrorInfo::config(format!(
                    "cannot build a request to {url}: {err}"
                )))
            }
        };
        let attempts = Attempts {
            http: self.http.clone(),
            request,
            stream,
            policy: self.config.retry,
            new_decoder,
            sent: 0,
            secret: self.config.api_key.clone(),
            connect_timeout: self.config.timeouts.connect,
        };
        ResponseStream::connecting(
            self.protocol.clone(),
            attempts,
            self.config.timeouts.idle,
            cancel,
        )
    }

    /// The models the server lists. "Try later" answers are retried like chat requests.
    /// Every error fails the way a stream's does (`transport::get`), the key
    /// redacted from it.
    pub async fn list_models(&self) -> Result<Vec<ModelInfo>, ErrorInfo> {
        let url = self.resolve(self.protocol.models_path());
        let doing = format!("listing models at {url}");
        let mut attempt = 1;
        loop {
            let got = self.probe(&url, &doing).await?;
            let status = got.head.status;
            if (200..300).contains(&status) {
                return self.protocol.models(&got.body).map_err(|e| self.tidied(e));
            }
            let text = String::from_utf8_lossy(&got.body);
            let wait = got.wait.or_else(|| self.protocol.retry_delay(&text));
            match self.config.retry.delay(attempt, wait) {
                Some(delay) if is_retryable_status(status) => {
                    tokio::time::sleep(delay).await;
                    attempt += 1;
                }
                _ => {
                    let error = self.protocol.error(status, &text);
                    let error = bad_answer::http_answer(error, &got.head.with_body(&got.body));
                    return Err(self.tidied(error));
                }
            }
        }
    }

    /// An authenticated `GET` of `path`, resolved against the base URL like a protocol path
    /// (the endpoint override does not apply): the status and body as received, whatever the
    /// status, but a 2xx page or text is an error, as for [`Client::list_models`]. For probes
    /// beside the chat wire, such as llama.cpp's `/health` and `/props`.
    pub async fn get(&self, path: &str) -> Result<(u16, bytes::Bytes), ErrorInfo> {
        let url = self.resolve(path);
        let got = self.probe(&url, &format!("GET {url}")).await?;
        Ok((got.head.status, got.body))
    }

    /// [`transport::get::get`] with this client's headers (no content type), its errors
    /// [`Client::tidied`].
    async fn probe(&self, url: &str, doing: &str) -> Result<Got, ErrorInfo> {
        let mut headers = self.headers.clone();
        headers.remove(CONTENT_TYPE);
        let got = transport::get::get(&self.http, url, headers, &self.config.timeouts, doing);
        got.await.map_err(|e| self.tidied(e))
    }

    /// `error` without the API key, then [`bad_answer::tidied`] (the key goes first, so no
    /// part of it is left by the shortening).
    fn tidied(&self, mut error: ErrorInfo) -> ErrorInfo {
        redact(
            &mut error,
            self.config.api_key.as_deref().unwrap_or_default(),
        );
        bad_answer::tidied(error)
    }
}
