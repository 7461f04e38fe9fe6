//! [`encode_spliced`]: a request body from a protocol's encoder with its conversation
//! entries taken from an [`EncodeCache`], the same bytes as encoding the whole body.
//!
//! Promises: the body is `serde_json::to_vec(&protocol.encode(request))`, byte for byte.
//! The members other than the conversation come from encoding the request with only the
//! messages that lie outside the conversation ([`Conversation::outside`]: system prompts in
//! a top-level field) as its history; they are encoded every time. Each conversation entry
//! is keyed by the content hashes of the messages it covers (taken from the cache for the
//! messages the owner vouched for, [`EncodeCache::vouch_unchanged`]), mixed with its
//! context ([`Conversation::context`], read every time, vouch or not) and the number of
//! messages it covers.

use qore_core::{ErrorInfo, History, Message};
use serde_json::Value;

use super::{message_key, EncodeCache, KeyHasher};
use crate::{ChatRequest, Conversation, Protocol};

/// `request`'s body from `protocol`'s encoder, each conversation entry taken from `cache`
/// or encoded once and stored there; `None` when the protocol does not encode entry by
/// entry or the request's extra fields replace the conversation (then encode the whole
/// body). See the module doc.
pub(crate) fn encode_spliced(
    protocol: &dyn Protocol,
    request: &ChatRequest<'_>,
    cache: &mut EncodeCache,
) -> Option<Result<Vec<u8>, ErrorInfo>> {
    let key = protocol.conversation_key()?;
    if request.options.extra.contains_key(key) {
        return None;
    }
    let history = request.history.messages();
    let conversation = protocol.conversation(history)?;
    let outside: Vec<Message> = (history.iter().enumerate())
        .filter(|(at, _)| conversation.outside(*at))
        .map(|(_, message)| message.clone())
        .collect();
    let outside = History::from(outside);
    let skeleton = match protocol.encode(&ChatRequest {
        history: &outside,
        ..*request
    }) {
        Ok(Value::Object(members)) => match members.get(key) {
            Some(Value::Array(items)) if items.is_empty() => members,
            _ => return None,
        },
        Ok(_) => return None,
        Err(error) => return Some(Err(error)),
    };
    let vouched = cache.vouched;
    cache.begin(&protocol.encoding_tag(), history.len());
    for (at, message) in history.iter().enumerate() {
        let hash = match cache.hashes.get(at) {
            Some(&hash) if at < vouched => hash,
            _ => message_key(message),
        };
        match cache.hashes.get_mut(at) {
            Some(slot) => *slot = hash,
            None => cache.hashes.push(hash),
        }
    }
    let mut out = Vec::with_capacity(cache.bytes_held() + 4096);
    out.push(b'{');
    for (n, (name, value)) in skeleton.iter().enumerate() {
        if n > 0 {
            out.push(b',');
        }
        write_json(&mut out, name)?;
        out.push(b':');
        if name != key {
            write_json(&mut out, value)?;
            continue;
        }
        out.push(b'[');
        if let Err(error) = write_entries(&*conversation, history.len(), cache, &mut out) {
            return Some(Err(error));
        }
        out.push(b']');
    }
    out.push(b'}');
    Some(Ok(out))
}

/// The conversation's entries, comma-separated, from `cache` or encoded into it.
fn write_entries(
    conversation: &dyn Conversation,
    len: usize,
    cache: &mut EncodeCache,
    out: &mut Vec<u8>,
) -> Result<(), ErrorInfo> {
    let mut first = true;
    let mut at = 0;
    while at < len {
        if conversation.outside(at) {
            at += 1;
            continue;
        }
        let end = conversation.entry_end(at).clamp(at + 1, len);
        let mut key = KeyHasher::default();
        key.num((end - at) as u64);
        for hash in &cache.hashes[at..end] {
            key.num(*hash);
        }
        conversation.context(at, &mut key);
        let bytes = cache.get_or_fill(at, key.finish(), |bytes| {
            let mut items = Vec::new();
            conversation.encode(at, &mut items)?;
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    bytes.push(b',');
                }
                serde_json::to_writer(&mut *bytes, item).map_err(failed)?;
            }
            Ok::<(), ErrorInfo>(())
        })?;
        if !bytes.is_empty() {
            if !first {
                out.push(b',');
            }
            out.extend_from_slice(bytes);
            first = false;
        }
        at = end;
    }
    Ok(())
}

fn write_json(out: &mut Vec<u8>, value: &impl serde::Serialize) -> Option<()> {
    // Writing a map key or a `Value` to a Vec cannot fail (no I/O, string keys only).
    serde_json::to_writer(out, value).ok()
}

fn failed(err: serde_json::Error) -> ErrorInfo {
    ErrorInfo::validation(format!("cannot serialize the request: {err}"))
}
