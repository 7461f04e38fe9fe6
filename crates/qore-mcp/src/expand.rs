//! `${VAR}` expansion in config values, as Claude Code and codex configs use it.
//!
//! Promises: `${VAR}` is the variable's value; `${VAR:-default}` is the default when the
//! variable is unset or empty; `$$` is a literal `$`; any other `$` is kept as it is; an
//! unset variable without a default, or an unclosed `${`, is an error naming it.

/// Expand `text` with `lookup` (the environment in production).
pub fn expand(text: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix('$') {
            out.push('$');
            rest = tail;
        } else if let Some(body) = after.strip_prefix('{') {
            let end = body
                .find('}')
                .ok_or_else(|| format!("unclosed '${{' in {text:?}"))?;
            let inner = &body[..end];
            let (name, default) = match inner.split_once(":-") {
                Some((name, default)) => (name, Some(default)),
                None => (inner, None),
            };
            let value = lookup(name).filter(|v| !v.is_empty());
            match (value, default) {
                (Some(value), _) => out.push_str(&value),
                (None, Some(default)) => out.push_str(default),
                (None, None) => {
                    return Err(format!(
                        "environment variable {name} is not set (used as ${{{name}}})"
                    ))
                }
            }
            rest = &body[end + 1..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    Ok(out)
}

/// The process environment as a lookup.
pub fn env_lookup(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_expand_with_defaults_and_errors() {
        let lookup = |name: &str| match name {
            "HOME" => Some("/home/me".to_string()),
            "EMPTY" => Some(String::new()),
            _ => None,
        };
        let cases: &[(&str, Result<&str, &str>)] = &[
            ("plain", Ok("plain")),
            ("${HOME}/x", Ok("/home/me/x")),
            ("a${HOME}b${HOME}", Ok("a/home/meb/home/me")),
            ("${NOPE:-dflt}", Ok("dflt")),
            ("${EMPTY:-dflt}", Ok("dflt")),
            ("$$HOME $HOME", Ok("$HOME $HOME")),
            ("cost: 5$", Ok("cost: 5$")),
            ("${NOPE}", Err("NOPE is not set")),
            ("${HOME", Err("unclosed")),
        ];
        for (input, want) in cases {
            match (expand(input, &lookup), want) {
                (Ok(got), Ok(want)) => assert_eq!(&got, want, "{input}"),
                (Err(got), Err(want)) => assert!(got.contains(want), "{input}: {got}"),
                (got, want) => panic!("{input}: got {got:?}, want {want:?}"),
            }
        }
    }
}
