//! Reading an untrusted JSON request body field by field: every accessor names the field at
//! fault (`messages[2].content`) in the 400 it returns, treats `null` as absent, and never
//! panics on any input.

use serde_json::{Map, Value};

use crate::{ErrorKind, ServeError};

pub type Object = Map<String, Value>;

/// The body as a JSON object; malformed JSON or another JSON type is a 400 with no field.
pub fn parse_object(body: &[u8]) -> Result<Object, ServeError> {
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(object)) => Ok(object),
        Ok(other) => Err(ServeError::new(
            ErrorKind::InvalidRequest,
            format!(
                "the request body must be a JSON object, not {}",
                kind(&other)
            ),
        )),
        Err(err) => Err(ServeError::new(
            ErrorKind::InvalidRequest,
            format!("the request body is not valid JSON: {err}"),
        )),
    }
}

/// `path.key`, or `key` at the top level.
pub fn join(path: &str, key: &str) -> String {
    match path {
        "" => key.to_owned(),
        _ => format!("{path}.{key}"),
    }
}

/// `path[index]`.
pub fn at(path: &str, index: usize) -> String {
    format!("{path}[{index}]")
}

/// What a JSON value is, for messages ("a string", "an array" …).
pub fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A 400 saying the field at `path` should be `expected` and is something else.
pub fn wrong_type(path: &str, expected: &str, value: &Value) -> ServeError {
    ServeError::invalid(
        path,
        format!("`{path}` must be {expected}, not {}", kind(value)),
    )
}

/// A 400 for a field that is missing.
pub fn missing(path: &str) -> ServeError {
    ServeError::invalid(path, format!("`{path}` is required"))
}

pub fn as_object<'a>(value: &'a Value, path: &str) -> Result<&'a Object, ServeError> {
    value
        .as_object()
        .ok_or_else(|| wrong_type(path, "an object", value))
}

pub fn as_array<'a>(value: &'a Value, path: &str) -> Result<&'a [Value], ServeError> {
    match value {
        Value::Array(items) => Ok(items),
        other => Err(wrong_type(path, "an array", other)),
    }
}

pub fn as_str<'a>(value: &'a Value, path: &str) -> Result<&'a str, ServeError> {
    value
        .as_str()
        .ok_or_else(|| wrong_type(path, "a string", value))
}

/// The member `key` of `object`, `None` when absent or `null`.
pub fn get<'a>(object: &'a Object, key: &str) -> Option<&'a Value> {
    object.get(key).filter(|v| !v.is_null())
}

pub fn opt_str<'a>(
    object: &'a Object,
    key: &str,
    path: &str,
) -> Result<Option<&'a str>, ServeError> {
    get(object, key)
        .map(|v| as_str(v, &join(path, key)))
        .transpose()
}

pub fn req_str<'a>(object: &'a Object, key: &str, path: &str) -> Result<&'a str, ServeError> {
    opt_str(object, key, path)?.ok_or_else(|| missing(&join(path, key)))
}

pub fn opt_bool(object: &Object, key: &str, path: &str) -> Result<Option<bool>, ServeError> {
    get(object, key)
        .map(|v| {
            v.as_bool()
                .ok_or_else(|| wrong_type(&join(path, key), "a boolean", v))
        })
        .transpose()
}

pub fn opt_f64(object: &Object, key: &str, path: &str) -> Result<Option<f64>, ServeError> {
    get(object, key)
        .map(|v| {
            v.as_f64()
                .ok_or_else(|| wrong_type(&join(path, key), "a number", v))
        })
        .transpose()
}

/// A token count: a whole number from 1 to `u32::MAX`.
pub fn opt_count(object: &Object, key: &str, path: &str) -> Result<Option<u32>, ServeError> {
    let Some(value) = get(object, key) else {
        return Ok(None);
    };
    let field = join(path, key);
    match value.as_u64().map(u32::try_from) {
        Some(Ok(n)) if n >= 1 => Ok(Some(n)),
        Some(_) => Err(ServeError::invalid(
            &field,
            format!("`{field}` must be a whole number from 1 to {}", u32::MAX),
        )),
        None => Err(wrong_type(&field, "a whole number", value)),
    }
}

/// A string or an array of strings (`stop`), as a list; `null` is empty.
pub fn strings(object: &Object, key: &str, path: &str) -> Result<Vec<String>, ServeError> {
    let field = join(path, key);
    match get(object, key) {
        None => Ok(Vec::new()),
        Some(Value::String(one)) => Ok(vec![one.clone()]),
        Some(Value::Array(items)) => (items.iter().enumerate())
            .map(|(i, item)| as_str(item, &at(&field, i)).map(str::to_owned))
            .collect(),
        Some(other) => Err(wrong_type(&field, "a string or an array of strings", other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn accessors_name_the_field_and_read_null_as_absent() {
        let object = json!({"a": null, "n": 0, "big": 5_000_000_000u64, "f": 1.5, "s": ["x", 1]});
        let object = object.as_object().unwrap();
        assert_eq!(opt_str(object, "a", "").unwrap(), None);
        assert_eq!(opt_count(object, "a", "").unwrap(), None);
        assert_eq!(
            opt_count(object, "n", "").unwrap_err().param.as_deref(),
            Some("n")
        );
        assert!(opt_count(object, "big", "p").is_err());
        assert_eq!(
            opt_count(object, "f", "p").unwrap_err().param.as_deref(),
            Some("p.f")
        );
        assert_eq!(
            strings(object, "s", "").unwrap_err().param.as_deref(),
            Some("s[1]")
        );
        assert_eq!(
            req_str(object, "zz", "m[0]").unwrap_err().param.as_deref(),
            Some("m[0].zz")
        );
    }

    #[test]
    fn bodies_that_are_not_objects_are_refused() {
        for body in [&b"{"[..], b"[]", b"\"x\"", b"", b"\xff"] {
            let err = parse_object(body).unwrap_err();
            assert_eq!(err.status, 400, "{body:?}");
            assert_eq!(err.param, None);
        }
    }
}
