//! [`Client`]: a protocol, a base URL and credentials, ready to stream.
//!
//! URL rules: `base_url` is the URL as the provider documents it (OpenAI style ends in
//! `/v1`); the protocol's path is appended. `endpoint` overrides that path: a full URL is
//! used as is, a path starting with `/` replaces the base URL's path, anything else is
//! appended to the base URL. An empty API key sends no credential header.

use std::sync::Arc;

use qore_core::ErrorInfo;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE};
use tokio_util::sync::CancellationToken;

use crate::codec::{BodyRenderer, ChatRequest, FimRequest, Protocol};
use crate::stream::{Attempts, NewDecoder};
use crate::transport::bad_answer;
use crate::transport::http::{build_client, network_error, Timeouts};
use crate::transport::retry::{is_retryable_status, server_wait, RetryPolicy};
use crate::{ModelInfo, ResponseStream};

/// Where and how to reach a provider.
#[derive(Debug, Clone, Default)]
pub struct ClientConfig {
    pub base_url: String,
    /// Overrides the protocol's request path (see the module doc).
    pub endpoint: Option<String>,
    pub api_key: Option<String>,
    /// Extra headers sent with every request.
    pub headers: Vec<(String, String)>,
    pub timeouts: Timeouts,
    /// When a request is sent again (see [`crate::transport::retry`]).
    pub retry: RetryPolicy,
}

impl ClientConfig {
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
        })
    }

    /// Write chat request bodies with `renderer` (an agent profile's `[body]`) instead of
    /// the protocol's encoder: the first request and every tool-loop continuation alike.
    pub fn with_renderer(mut self, renderer: Arc<dyn BodyRenderer>) -> Self {
        self.renderer = Some(renderer);
        self
    }

    pub fn protocol(&self) -> &Arc<dyn Protocol> {
        &self.protocol
    }

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
        if path.starts_with("http://") || path.starts_with("https://") {
            return path.to_owned();
        }
        let base = self.config.base_url.trim_end_matches('/');
        if path.starts_with('/') {
            if let Ok(mut url) = reqwest::Url::parse(base) {
                let (path, query) = path
                    .split_once('?')
                    .map_or((path, None), |(p, q)| (p, Some(q)));
                url.set_path(path);
                url.set_query(query);
                return url.to_string();
            }
        }
        format!("{base}/{}", path.trim_start_matches('/'))
    }

    /// The request body for `request`, as bytes: the renderer's when there is one, else
    /// the protocol's encoder's.
    pub fn encode(&self, request: &ChatRequest<'_>) -> Result<Vec<u8>, ErrorInfo> {
        if let Some(renderer) = &self.renderer {
            return renderer.render(request);
        }
        let body = self.protocol.encode(request)?;
        serde_json::to_vec(&body)
            .map_err(|err| ErrorInfo::validation(format!("cannot serialize the request: {err}")))
    }

    /// Encode `request` from history and stream the answer.
    pub fn stream(&self, request: &ChatRequest<'_>, cancel: CancellationToken) -> ResponseStream {
        match self.encode(request) {
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

    /// Ask for the text between `request.prefix` and `request.suffix`; the answer streams as
    /// text deltas.
    pub fn complete_fim(
        &self,
        request: &FimRequest<'_>,
        cancel: CancellationToken,
    ) -> ResponseStream {
        let stream = request.options.stream;
        let prepared = self.fim_url(request.model, stream).and_then(|url| {
            let body = self.protocol.encode_fim(request)?;
            let body = serde_json::to_vec(&body).map_err(|err| {
                ErrorInfo::validation(format!("cannot serialize the request: {err}"))
            })?;
            Ok((url, body))
        });
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
        if body.is_empty() {
            return ResponseStream::failed(
                self.protocol.clone(),
                ErrorInfo::validation("refusing to send an empty request body"),
            );
        }
        let mut headers = self.headers.clone();
        if stream {
            headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        }
        let request = match self.http.post(url).headers(headers).body(body).build() {
            Ok(request) => request,
            Err(err) => {
                return ResponseStream::failed(
                    self.protocol.clone(),
                    ErrorInfo::config(format!("cannot build a request to {url}: {err}")),
                )
            }
        };
        let attempts = Attempts {
            http: self.http.clone(),
            request,
            stream,
            policy: self.config.retry,
            new_decoder,
            sent: 0,
        };
        ResponseStream::connecting(
            self.protocol.clone(),
            attempts,
            self.config.timeouts.idle,
            cancel,
        )
    }

    /// The models the server lists. "Try later" answers are retried like chat requests.
    pub async fn list_models(&self) -> Result<Vec<ModelInfo>, ErrorInfo> {
        let url = self.resolve(self.protocol.models_path());
        let mut headers = self.headers.clone();
        headers.remove(CONTENT_TYPE);
        let mut attempt = 1;
        loop {
            let request = async {
                let response = self.http.get(&url).headers(headers.clone()).send().await?;
                let status = response.status().as_u16();
                let wait = server_wait(response.headers());
                let head = bad_answer::Head::of(&response);
                let body = response.bytes().await?;
                Ok::<_, reqwest::Error>((status, wait, body, head))
            };
            let (status, wait, body, head) =
                tokio::time::timeout(self.config.timeouts.idle, request)
                    .await
                    .map_err(|_| ErrorInfo::network(format!("listing models at {url} timed out")))?
                    .map_err(|err| {
                        network_error(&format!("listing models at {url} failed"), &err)
                    })?;
            if (200..300).contains(&status) {
                return self.protocol.models(&body).map_err(bad_answer::tidied);
            }
            let text = String::from_utf8_lossy(&body);
            let wait = wait.or_else(|| self.protocol.retry_delay(&text));
            match self.config.retry.delay(attempt, wait) {
                Some(delay) if is_retryable_status(status) => {
                    tokio::time::sleep(delay).await;
                    attempt += 1;
                }
                _ => {
                    let error = self.protocol.error(status, &text);
                    let answer = head.with_body(&body);
                    return Err(bad_answer::tidied(bad_answer::http_answer(error, &answer)));
                }
            }
        }
    }

    /// An authenticated `GET` of `path`, resolved against the base URL like a protocol path
    /// (the endpoint override does not apply): the status and body as received, whatever the
    /// status. For probes beside the chat wire, such as llama.cpp's `/health` and `/props`.
    pub async fn get(&self, path: &str) -> Result<(u16, bytes::Bytes), ErrorInfo> {
        let url = self.resolve(path);
        let mut headers = self.headers.clone();
        headers.remove(CONTENT_TYPE);
        let request = async {
            let response = self.http.get(&url).headers(headers).send().await?;
            let status = response.status().as_u16();
            Ok::<_, reqwest::Error>((status, response.bytes().await?))
        };
        tokio::time::timeout(self.config.timeouts.idle, request)
            .await
            .map_err(|_| ErrorInfo::network(format!("GET {url} timed out")))?
            .map_err(|err| network_error(&format!("GET {url} failed"), &err))
    }
}
