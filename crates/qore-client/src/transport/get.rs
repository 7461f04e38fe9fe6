//! A `GET` beside the chat wire (a model listing, llama.cpp's `/health` and `/props`), failing
//! the way a stream does.
//!
//! Promises: [`get`] answers the head and whole body of any status; a transport failure is
//! a `Network` error led by what was being done, naming the connect timeout when that ended
//! it (`super::http::failed_while`), and silence for the idle timeout is one too; a 2xx
//! answer that is an HTML page or plain text is a provider error naming its status, host,
//! title or first line, content type and size ([`super::bad_answer::not_json`]), never a
//! body handed on to be read as JSON. Redacting the key is the caller's (it holds it).

use std::time::Duration;

use qore_core::ErrorInfo;
use reqwest::header::HeaderMap;

use super::bad_answer::{self, Head};
use super::http::{failed_while, Timeouts};
use super::retry::server_wait;

/// An answer received whole.
#[derive(Debug)]
pub struct Got {
    /// The answer's status, host and content type.
    pub head: Head,
    /// The wait the answer's headers asked for before asking again.
    pub wait: Option<Duration>,
    /// The whole body.
    pub body: bytes::Bytes,
}

/// `GET url` with `headers`; `doing` names it in errors (`listing models at URL`).
pub async fn get(
    http: &reqwest::Client,
    url: &str,
    headers: HeaderMap,
    timeouts: &Timeouts,
    doing: &str,
) -> Result<Got, ErrorInfo> {
    let request = async {
        let response = http.get(url).headers(headers).send().await?;
        let wait = server_wait(response.headers());
        let head = Head::of(&response);
        let body = response.bytes().await?;
        Ok::<_, reqwest::Error>(Got { head, wait, body })
    };
    let got = tokio::time::timeout(timeouts.idle, request)
        .await
        .map_err(|_| {
            ErrorInfo::network(format!(
                "{doing}: no answer within the idle timeout ({} s)",
                timeouts.idle.as_secs_f64()
            ))
        })?
        .map_err(|err| failed_while(Some(doing), &err, Some(timeouts.connect)))?;
    let ok = (200..300).contains(&got.head.status);
    if ok && bad_answer::is_page_or_text(&got.head.content_type) {
        return Err(bad_answer::not_json(&got.head.with_body(&got.body)));
    }
    Ok(got)
}
