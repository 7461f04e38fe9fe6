//! Writing SSE frames: `event:` (when the dialect names its events) and one `data:` line of
//! compact JSON, then a blank line. JSON never holds a raw line break, so one `data:` line
//! always suffices.

use serde::Serialize;

/// Append one frame.
pub fn frame(out: &mut Vec<u8>, event: Option<&str>, data: &impl Serialize) {
    if let Some(event) = event {
        out.extend_from_slice(b"event: ");
        out.extend_from_slice(event.as_bytes());
        out.push(b'\n');
    }
    out.extend_from_slice(b"data: ");
    // Serializing a serde_json::Value or a derived struct into a Vec cannot fail.
    if serde_json::to_writer(&mut *out, data).is_err() {
        out.extend_from_slice(b"{}");
    }
    out.extend_from_slice(b"\n\n");
}

/// Append a frame whose data is `raw` as is (`[DONE]`).
pub fn raw(out: &mut Vec<u8>, data: &str) {
    out.extend_from_slice(b"data: ");
    out.extend_from_slice(data.as_bytes());
    out.extend_from_slice(b"\n\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_have_one_data_line_and_a_blank_line() {
        let mut out = Vec::new();
        frame(
            &mut out,
            Some("ping"),
            &serde_json::json!({"type": "ping", "t": "a\nb"}),
        );
        raw(&mut out, "[DONE]");
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "event: ping\ndata: {\"t\":\"a\\nb\",\"type\":\"ping\"}\n\ndata: [DONE]\n\n"
        );
    }
}
