//! Edits of a rendered body as text, so every byte before an edit stays as it was (a
//! continuation's conversation prefix stays byte-identical).
//!
//! Promises: [`set_members`] replaces the value of a top-level member in place or appends
//! it before the closing brace, in one pass; a member marked "only if absent" never
//! replaces one the body has; of two members with one key, the later one is set; a body that is not a JSON object is an error, never a panic.
//! [`top_level_members`] is string-aware (braces and commas inside strings are text).

use qore_core::ErrorInfo;
use serde_json::Value;

/// When a member is set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// Always: a value the body has is replaced.
    Always,
    /// Only when the body has no such member (a default).
    Absent,
}

/// `body` with `members` set at the top level (see the module doc).
pub fn set_members(body: Vec<u8>, members: &[(&str, Value, When)]) -> Result<Vec<u8>, ErrorInfo> {
    if members.is_empty() {
        return Ok(body);
    }
    let existing = top_level_members(&body).ok_or_else(not_object)?;
    set_members_of(body, &existing, members)
}

/// Why a body's members cannot be set.
pub(crate) fn not_object() -> ErrorInfo {
    ErrorInfo::validation("the rendered body is not a JSON object")
}

/// [`set_members`] of a body whose members [`top_level_members`] found: `existing`.
pub fn set_members_of(
    body: Vec<u8>,
    existing: &[(String, usize, usize)],
    members: &[(&str, Value, When)],
) -> Result<Vec<u8>, ErrorInfo> {
    if members.is_empty() {
        return Ok(body);
    }
    let close = body
        .iter()
        .rposition(|b| *b == b'}')
        .ok_or_else(not_object)?;
    let json = |v: &Value| serde_json::to_vec(v).unwrap_or_default();
    // Replacements, in body order, then appends.
    let mut edits: Vec<(usize, usize, Vec<u8>)> = Vec::new();
    let mut appended = Vec::new();
    for (n, (key, value, when)) in members.iter().enumerate() {
        if members[n + 1..].iter().any(|(later, _, _)| later == key) {
            continue; // a later member of the same key wins
        }
        match existing.iter().find(|(k, _, _)| k == key) {
            Some(_) if *when == When::Absent => {}
            Some((_, start, end)) => edits.push((*start, *end, json(value))),
            None => {
                if !existing.is_empty() || !appended.is_empty() {
                    appended.push(b',');
                }
                appended.extend(json(&Value::String((*key).to_owned())));
                appended.push(b':');
                appended.extend(json(value));
            }
        }
    }
    edits.push((close, close, appended));
    edits.sort_by_key(|(start, _, _)| *start);
    let mut out = Vec::with_capacity(body.len() + 64);
    let mut last = 0;
    for (start, end, text) in edits {
        out.extend_from_slice(&body[last..start]);
        out.extend(text);
        last = end;
    }
    out.extend_from_slice(&body[last..]);
    Ok(out)
}

/// The members of a JSON object: (key, value start, value end), or `None` when `body` is
/// not an object. String-aware; values are skipped by bracket depth.
pub fn top_level_members(body: &[u8]) -> Option<Vec<(String, usize, usize)>> {
    let skip_ws = |mut i: usize| {
        while i < body.len() && body[i].is_ascii_whitespace() {
            i += 1;
        }
        i
    };
    // Past the closing quote of the string opening at `start` (memchr jumps over text).
    let string_end = |start: usize| {
        let mut i = start + 1;
        while let Some(at) = body
            .get(i..)
            .and_then(|rest| memchr::memchr2(b'"', b'\\', rest))
        {
            match body[i + at] {
                b'"' => return Some(i + at + 1),
                _ => i += at + 2,
            }
        }
        None
    };
    let mut i = skip_ws(0);
    if body.get(i) != Some(&b'{') {
        return None;
    }
    i = skip_ws(i + 1);
    let mut members = Vec::new();
    while body.get(i) == Some(&b'"') {
        let key_end = string_end(i)?;
        let key: String = serde_json::from_slice(&body[i..key_end]).ok()?;
        i = skip_ws(key_end);
        if body.get(i) != Some(&b':') {
            return None;
        }
        let start = skip_ws(i + 1);
        let mut depth = 0usize;
        let mut j = start;
        while j < body.len() {
            match body[j] {
                b'"' => {
                    j = string_end(j)?;
                    continue;
                }
                b'{' | b'[' => depth += 1,
                b'}' | b']' if depth == 0 => break,
                b'}' | b']' => depth -= 1,
                b',' if depth == 0 => break,
                _ => {}
            }
            j += 1;
        }
        let mut end = j;
        while end > start && body[end - 1].is_ascii_whitespace() {
            end -= 1;
        }
        members.push((key, start, end));
        i = skip_ws(j);
        if body.get(i) == Some(&b',') {
            i = skip_ws(i + 1);
        }
    }
    (body.get(i) == Some(&b'}')).then_some(members)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_extra_(
        body: Vec<u8>,
        extra: &serde_json::Map<String, Value>,
    ) -> Result<Vec<u8>, ErrorInfo> {
        let members: Vec<(&str, Value, When)> = extra
            .iter()
            .map(|(k, v)| (k.as_str(), v.clone(), When::Always))
            .collect();
        set_members(body, &members)
    }

    #[test]
    fn extra_fields_are_appended_without_touching_the_rest() {
        let mut extra = serde_json::Map::new();
        extra.insert("tool_choice".into(), "none".into());
        let out = with_extra_(br#"{"b":1,"a":[2]}"#.to_vec(), &extra).unwrap();
        assert_eq!(out, br#"{"b":1,"a":[2],"tool_choice":"none"}"#);
        let out = with_extra_(b"{ }".to_vec(), &extra).unwrap();
        assert_eq!(out, br#"{ "tool_choice":"none"}"#);
        let body = br#"{"m": [{"a": "}\"],"}], "tool_choice" : "auto" ,"x":1}"#;
        let out = with_extra_(body.to_vec(), &extra).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"{"m": [{"a": "}\"],"}], "tool_choice" : "none" ,"x":1}"#
        );
        extra.insert("y".into(), serde_json::json!([1]));
        let out = with_extra_(br#"{"tool_choice": {"type": "auto"}}"#.to_vec(), &extra).unwrap();
        assert_eq!(out, br#"{"tool_choice": "none","y":[1]}"#);
        assert!(with_extra_(b"[1]".to_vec(), &extra).is_err());
    }

    #[test]
    fn defaults_never_replace_what_the_body_has() {
        let model = ("model", Value::from("m"), When::Absent);
        let out = set_members(
            br#"{"model":"mine","a":1}"#.to_vec(),
            std::slice::from_ref(&model),
        )
        .unwrap();
        assert_eq!(out, br#"{"model":"mine","a":1}"#);
        let out = set_members(br#"{"a":""model":"}"#.to_vec(), &[model]).unwrap();
        assert_eq!(out, br#"{"a":""model":","model":"m"}"#);
    }
}
