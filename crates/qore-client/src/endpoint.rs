//! Where a request goes: a path joined to a provider's base URL.
//!
//! Promises ([`join_endpoint`]): `base_url` is the URL as the provider documents it (OpenAI
//! style ends in `/v1`); the path is appended to it, with or without a leading `/`, and path
//! segments the URL already ends with are not repeated (`https://api.mistral.ai/v1` +
//! `/v1/chat/completions` is `https://api.mistral.ai/v1/chat/completions`); a full
//! `http(s)://` path is used as is. [`join_under`] is the same rule with the base URL's path
//! parsed once by the caller: a client joins a path per request, and parsing the base URL
//! each time showed in `qore serve`'s profile.

/// `endpoint` joined to `base_url` by the module's URL rule.
pub fn join_endpoint(base_url: &str, endpoint: &str) -> String {
    let base_path = reqwest::Url::parse(base_url.trim_end_matches('/'))
        .map_or(String::new(), |u| u.path().to_owned());
    join_under(base_url, &base_path, endpoint)
}

/// [`join_endpoint`] for a `base_url` whose parsed path is `base_path` (empty when it does
/// not parse).
pub(crate) fn join_under(base_url: &str, base_path: &str, endpoint: &str) -> String {
    if endpoint.starts_with("http://") || endpoint.starts_with("https://") {
        return endpoint.to_owned();
    }
    let base = base_url.trim_end_matches('/');
    let endpoint = endpoint.trim_start_matches('/');
    let ends: Vec<&str> = base_path.split('/').filter(|s| !s.is_empty()).collect();
    let path_part = endpoint.split(['?', '#']).next().unwrap_or_default();
    let starts: Vec<&str> = path_part.split('/').collect();
    // The longest run of segments that ends the URL's path and starts the endpoint's.
    let repeated = (1..=ends.len().min(starts.len().saturating_sub(1)))
        .rev()
        .find(|&n| ends[ends.len() - n..] == starts[..n])
        .unwrap_or(0);
    let skip: usize = starts[..repeated].iter().map(|s| s.len() + 1).sum();
    format!("{base}/{}", &endpoint[skip..])
}

#[cfg(test)]
#[path = "endpoint_tests.rs"]
mod tests;
