//! What Gemini's `finishReason` and `promptFeedback.blockReason` mean for the turn.
//!
//! Decision: a turn Gemini stopped for anything but a normal end (`STOP`) or the token limit
//! (`MAX_TOKENS`) fails with a typed error, never a finished message. These reasons are not
//! the model declining politely (that arrives as ordinary text with `STOP`): they are
//! filters that withheld or cut the answer (safety, recitation, blocklists, prohibited
//! content, personal data, images), or answers the client cannot use (a malformed or
//! unexpected function call, too many tool calls, a missing thought signature). A caller
//! that appends finished turns to history must not store such a turn as if it were the
//! model's answer; the error says why, in words, with the wire's reason as its type.
//!
//! Reasons this table does not know become [`StopReason::Other`] with the raw value: not an
//! `EndTurn`, so they never look like a normal success either.

use qore_core::{ErrorInfo, ProviderDetail, StopReason};

/// What one `finishReason` means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finish {
    /// The turn ended (`tool_use` decides between EndTurn and ToolUse for `STOP`).
    Stop(StopReason),
    /// The answer was stopped or withheld: the turn fails with this explanation.
    Blocked(&'static str),
}

/// The meaning of a candidate's `finishReason`; `called_tools`: function calls were made.
pub fn finish(reason: &str, called_tools: bool) -> Finish {
    let blocked = match reason {
        "STOP" if called_tools => return Finish::Stop(StopReason::ToolUse),
        "STOP" => return Finish::Stop(StopReason::EndTurn),
        "MAX_TOKENS" => return Finish::Stop(StopReason::MaxTokens),
        "SAFETY" => "Gemini's safety filters flagged the answer",
        "RECITATION" => "the answer recited copyrighted or training material",
        "LANGUAGE" => "the answer was in a language Gemini does not support",
        "BLOCKLIST" => "the answer contained terms on a blocklist",
        "PROHIBITED_CONTENT" => "the answer may contain prohibited content",
        "SPII" => "the answer may contain sensitive personal information",
        "MALFORMED_FUNCTION_CALL" => "the model produced a function call that is not valid",
        "UNEXPECTED_TOOL_CALL" => "the model called a tool although no tool is enabled",
        "TOO_MANY_TOOL_CALLS" => "the model made too many tool calls in a row",
        "MISSING_THOUGHT_SIGNATURE" => {
            "the request lacked a thought signature Gemini requires on replayed parts"
        }
        "MALFORMED_RESPONSE" => "Gemini produced a malformed response",
        "IMAGE_SAFETY" => "Gemini's safety filters flagged the generated image",
        "IMAGE_PROHIBITED_CONTENT" => "the generated image may contain prohibited content",
        "IMAGE_RECITATION" => "the generated image recited protected material",
        "IMAGE_OTHER" => "image generation stopped for an unspecified reason",
        "NO_IMAGE" => "the model was expected to generate an image but did not",
        "OTHER" => "Gemini stopped the answer for an unspecified reason",
        other => return Finish::Stop(StopReason::Other(other.to_owned())),
    };
    Finish::Blocked(blocked)
}

/// The error for a stopped answer: `Gemini stopped the answer (SAFETY): <why>[: <finishMessage>]`.
pub fn blocked_error(
    reason: &str,
    why: &str,
    finish_message: Option<&str>,
    raw: &str,
) -> ErrorInfo {
    let mut message = format!("Gemini stopped the answer ({reason}): {why}");
    if let Some(detail) = finish_message.filter(|m| !m.is_empty()) {
        message.push_str(": ");
        message.push_str(detail);
    }
    ErrorInfo::provider(message).with_detail(ProviderDetail {
        status: None,
        error_type: Some(reason.to_owned()),
        body: Some(raw.to_owned()),
    })
}

/// The error for a prompt Gemini refused to answer (`promptFeedback.blockReason`).
pub fn blocked_prompt(reason: &str, detail: Option<&str>, raw: &str) -> ErrorInfo {
    let why = match reason {
        "SAFETY" => "Gemini's safety filters flagged the prompt",
        "BLOCKLIST" => "the prompt contains terms on a blocklist",
        "PROHIBITED_CONTENT" => "the prompt may contain prohibited content",
        "IMAGE_SAFETY" => "an image in the prompt was flagged as unsafe",
        _ => "the prompt was blocked",
    };
    let mut message = format!("Gemini blocked the prompt ({reason}): {why}");
    if let Some(detail) = detail.filter(|m| !m.is_empty()) {
        message.push_str(": ");
        message.push_str(detail);
    }
    ErrorInfo::provider(message).with_detail(ProviderDetail {
        status: None,
        error_type: Some(reason.to_owned()),
        body: Some(raw.to_owned()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_ends_stop_and_filters_block() {
        assert_eq!(finish("STOP", false), Finish::Stop(StopReason::EndTurn));
        assert_eq!(finish("STOP", true), Finish::Stop(StopReason::ToolUse));
        assert_eq!(
            finish("MAX_TOKENS", true),
            Finish::Stop(StopReason::MaxTokens)
        );
        for reason in [
            "SAFETY",
            "RECITATION",
            "BLOCKLIST",
            "PROHIBITED_CONTENT",
            "SPII",
            "MALFORMED_FUNCTION_CALL",
            "IMAGE_SAFETY",
            "UNEXPECTED_TOOL_CALL",
            "LANGUAGE",
            "OTHER",
        ] {
            assert!(
                matches!(finish(reason, false), Finish::Blocked(_)),
                "{reason}"
            );
        }
        assert_eq!(
            finish("SOMETHING_NEW", false),
            Finish::Stop(StopReason::Other("SOMETHING_NEW".into()))
        );
    }

    #[test]
    fn errors_name_the_reason_and_keep_the_chunk() {
        let error = blocked_error("SAFETY", "flagged", Some("details here"), "{raw}");
        assert_eq!(
            error.message,
            "Gemini stopped the answer (SAFETY): flagged: details here"
        );
        let detail = error.provider.unwrap();
        assert_eq!(detail.error_type.as_deref(), Some("SAFETY"));
        assert_eq!(detail.body.as_deref(), Some("{raw}"));
        let prompt = blocked_prompt("OTHER", None, "{}");
        assert_eq!(
            prompt.message,
            "Gemini blocked the prompt (OTHER): the prompt was blocked"
        );
    }
}
