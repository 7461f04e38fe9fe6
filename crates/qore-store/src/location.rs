//! How a store's location is shown: never with a password.
//!
//! Promises: [`shown`] gives a `postgres://` location without the password of its user
//! (`user:secret@` becomes `user@`) and without a `password=` parameter, and any other
//! location (a SQLite path) as it is; [`passwords`] finds every password written in the
//! `postgres://` URLs of a text, as written and percent-decoded, longest first, so a caller
//! can scrub them from a message that quotes one. Both backends and every front end show
//! locations through these two.

use crate::open::is_postgres;

/// `location` as messages show it: a URL without its password.
pub fn shown(location: &str) -> String {
    if !is_postgres(location) {
        return location.to_owned();
    }
    let (base, query) = location.split_once('?').unwrap_or((location, ""));
    let base = match base.split_once("://") {
        Some((scheme, rest)) => {
            let end = rest.find('/').unwrap_or(rest.len());
            let (authority, tail) = rest.split_at(end);
            match authority.rsplit_once('@') {
                Some((user_info, hosts)) => {
                    let user = user_info.split_once(':').map_or(user_info, |(u, _)| u);
                    format!("{scheme}://{user}@{hosts}{tail}")
                }
                None => base.to_owned(),
            }
        }
        None => base.to_owned(),
    };
    let kept: Vec<&str> = (query.split('&'))
        .filter(|pair| !pair.is_empty())
        .filter(|pair| {
            !pair
                .split('=')
                .next()
                .unwrap_or("")
                .eq_ignore_ascii_case("password")
        })
        .collect();
    match kept.is_empty() {
        true => base,
        false => format!("{base}?{}", kept.join("&")),
    }
}

/// The passwords written in the URLs of `text` (`user:password@`, `password=`), as written
/// and percent-decoded.
pub fn passwords(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for location in text.split_whitespace().filter(|l| is_postgres(l)) {
        let (base, query) = location.split_once('?').unwrap_or((location, ""));
        if let Some((_, rest)) = base.split_once("://") {
            let authority = &rest[..rest.find('/').unwrap_or(rest.len())];
            let user_info = authority.rsplit_once('@').map(|(u, _)| u);
            if let Some((_, password)) = user_info.and_then(|u| u.split_once(':')) {
                found.push(password.to_owned());
            }
        }
        for pair in query.split('&') {
            if let Some((key, value)) = pair.split_once('=') {
                if key.eq_ignore_ascii_case("password") {
                    found.push(value.to_owned());
                }
            }
        }
    }
    let decoded: Vec<String> = found.iter().map(|p| percent_decoded(p)).collect();
    found.extend(decoded);
    found.retain(|p| !p.is_empty());
    found.sort_by_key(|p| std::cmp::Reverse(p.len()));
    found.dedup();
    found
}

/// `%XX` escapes decoded; anything else as written.
pub(crate) fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |at: usize| (bytes.get(at).map(|b| char::from(*b))).and_then(|c| c.to_digit(16));
        match (bytes[i], hex(i + 1), hex(i + 2)) {
            (b'%', Some(high), Some(low)) => {
                out.push((high * 16 + low) as u8);
                i += 3;
            }
            (byte, _, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_location_is_shown_without_its_password() {
        let cases = [
            ("/data/qore.db", "/data/qore.db"),
            ("postgres://qore@db/qore", "postgres://qore@db/qore"),
            (
                "postgres://qore:s3cret@db:5432/qore",
                "postgres://qore@db:5432/qore",
            ),
            (
                "postgresql://qore:p%40ss@db/qore?sslmode=require&password=other",
                "postgresql://qore@db/qore?sslmode=require",
            ),
            ("postgres://db/qore?password=x", "postgres://db/qore"),
        ];
        for (location, expected) in cases {
            assert_eq!(shown(location), expected, "{location}");
        }
    }
}
