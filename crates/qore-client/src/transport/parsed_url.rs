//! The URL a client last sent to, kept parsed.
//!
//! Why: a client sends to one or two URLs (its chat and fill-in-the-middle endpoints), and
//! URL parsing (the host through IDNA, the path) was 3.4% of `qore serve`'s CPU samples at
//! 50 clients of short requests (`perf`). With this and the base path parsed once
//! (`crate::endpoint`) it is 2.3%: reqwest parses each request's URL twice more itself
//! (its redirect policy, the response's URL). A parsed URL is a string and a few indices,
//! so handing out a clone costs one small copy.
//!
//! Promises: [`ParsedUrl::parse`] gives exactly what [`reqwest::Url::parse`] gives for the
//! same text (the text is compared as given, before normalisation); clones of a client share
//! the kept URL; a poisoned lock is taken over, never a panic.

use std::sync::{Arc, Mutex};

use reqwest::Url;

/// The last URL parsed, with the text it was parsed from.
#[derive(Clone, Default)]
pub(crate) struct ParsedUrl {
    last: Arc<Mutex<Option<(String, Url)>>>,
}

impl ParsedUrl {
    /// `text` parsed, from the kept one when it is the same text.
    pub(crate) fn parse(&self, text: &str) -> Result<Url, url::ParseError> {
        let mut last = self
            .last
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some((kept, url)) = last.as_ref() {
            if kept == text {
                return Ok(url.clone());
            }
        }
        let url = Url::parse(text)?;
        *last = Some((text.to_owned(), url.clone()));
        Ok(url)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gives_what_a_fresh_parse_gives_for_each_text_in_turn() {
        let parsed = ParsedUrl::default();
        let texts = [
            "http://127.0.0.1:8080/v1/chat/completions",
            "http://127.0.0.1:8080/v1/chat/completions",
            "https://EXAMPLE.com/v1beta/models/m:streamGenerateContent?alt=sse",
            "http://127.0.0.1:8080/v1/chat/completions",
            "https://bücher.example/v1",
            "https://bücher.example/v1",
        ];
        for text in texts {
            assert_eq!(
                parsed.parse(text).unwrap(),
                Url::parse(text).unwrap(),
                "{text}"
            );
        }
        assert!(parsed.parse("not a url").is_err());
        // A failed parse does not replace the kept URL with anything wrong.
        assert_eq!(
            parsed
                .parse("https://bücher.example/v1")
                .unwrap()
                .host_str(),
            Some("xn--bcher-kva.example")
        );
    }
}
