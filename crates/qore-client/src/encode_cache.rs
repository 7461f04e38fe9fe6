//! [`EncodeCache`]: each message of a history encoded once, its bytes reused by every later
//! request of the same history (a tool loop's rounds, a session's turns).
//!
//! Promises:
//! - the owner of a history holds the cache (the tool loop for one run, a session across
//!   turns); nothing is global, and a cache never holds more entries than the last history
//!   it encoded had messages, so its memory is at most one encoding of that history
//!   ([`EncodeCache::bytes_held`]);
//! - an entry is the encoding of the message at one position (or of the messages from
//!   there that the wire merges into one turn), keyed by the content hash of each message
//!   it covers ([`message_key`]: every field of every block, lengths included, 64-bit
//!   foldhash) mixed with whatever else the encoder read ([`crate::Conversation::context`]:
//!   a tool result's call name, the turn being the one that carries a cache mark): a
//!   message that a sanitize pass changed, dropped or moved misses and is encoded again,
//!   it is never served stale. Every wire's encoder goes through it ([`encode_spliced`]);
//! - a cache is bound to one encoder (a tag: the protocol and its dialect, or a profile's
//!   body): asking with another tag empties it first;
//! - the one exception to hashing: an owner that only appends to its history between two
//!   requests (a tool loop between its rounds) may vouch for the messages the cache encoded
//!   last ([`EncodeCache::vouch_unchanged`]); the next encode takes their content hashes
//!   from the cache instead of hashing them again (the context is still read), so a round
//!   costs what it adds, not the whole history. A vouch lasts one encode.
//!
//! Hashing walks the blocks with exhaustive patterns: a field added to the model does not
//! compile here until it is hashed.

use std::hash::{BuildHasher, Hasher};

use qore_core::{ContentBlock, ImageData, ImageSource, Message, Role, ToolResultPart};
use serde_json::Value;

/// The encoded messages of one history, by position (see the module doc).
#[derive(Debug, Default, Clone)]
pub struct EncodeCache {
    tag: String,
    entries: Vec<Cached>,
    beside: Vec<Vec<u8>>,
    /// The content hash ([`message_key`]) of each message of the last history a
    /// protocol's encoder went through, by position.
    hashes: Vec<u64>,
    /// Leading messages the owner vouched for, for the next encode only.
    vouched: usize,
}

#[derive(Debug, Clone)]
struct Cached {
    key: u64,
    bytes: Vec<u8>,
}

impl EncodeCache {
    /// An empty cache.
    pub fn new() -> Self {
        EncodeCache::default()
    }

    /// Start encoding a history of `len` messages with the encoder `tag`: entries of
    /// another encoder are dropped, and so are entries at positions `len` and after.
    pub fn begin(&mut self, tag: &str, len: usize) {
        self.vouched = 0;
        if self.tag != tag {
            self.tag.clear();
            self.tag.push_str(tag);
            self.entries.clear();
            self.beside.clear();
            self.hashes.clear();
        }
        self.entries.truncate(len);
        self.hashes.truncate(len);
    }

    /// The bytes stored at `index` under `key`; on a miss, what `fill` writes, stored.
    pub fn get_or_fill<E>(
        &mut self,
        index: usize,
        key: u64,
        fill: impl FnOnce(&mut Vec<u8>) -> Result<(), E>,
    ) -> Result<&[u8], E> {
        if self.entries.len() < index {
            // A gap (a position never filled): keep positions aligned with the history.
            self.entries.resize_with(index, || Cached {
                key: 0,
                bytes: Vec::new(),
            });
        }
        let hit = self.entries.get(index).is_some_and(|c| c.key == key);
        if !hit {
            let mut bytes = Vec::new();
            fill(&mut bytes)?;
            let cached = Cached { key, bytes };
            match self.entries.get_mut(index) {
                Some(slot) => *slot = cached,
                None => self.entries.push(cached),
            }
        }
        Ok(&self.entries[index].bytes)
    }

    /// The owner vouches that the first `len` messages of the next history it encodes are
    /// the ones this cache encoded last, unchanged (it only appended since): their entries
    /// are served without hashing. Only the next encode reads the vouch.
    pub fn vouch_unchanged(&mut self, len: usize) {
        self.vouched = len;
    }

    /// What the encoder keeps beside the messages (the text around them), valid while the
    /// tag is: emptied with the entries when it changes.
    pub fn beside(&mut self) -> &mut Vec<Vec<u8>> {
        &mut self.beside
    }

    /// The bytes stored at `index`, whatever their key.
    pub fn get(&self, index: usize) -> Option<&[u8]> {
        self.entries.get(index).map(|c| &c.bytes[..])
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing is cached yet.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The bytes the entries hold (their capacity).
    pub fn bytes_held(&self) -> usize {
        (self.entries.iter())
            .map(|c| c.bytes.capacity() + std::mem::size_of::<Cached>())
            .sum::<usize>()
            + self.tag.capacity()
            + self.beside.iter().map(Vec::capacity).sum::<usize>()
            + self.hashes.capacity() * std::mem::size_of::<u64>()
    }
}

/// A hasher for cache keys: [`message_key`] and whatever an encoder mixes in.
pub struct KeyHasher(foldhash::quality::FoldHasher<'static>);

impl Default for KeyHasher {
    fn default() -> Self {
        KeyHasher(foldhash::quality::FixedState::with_seed(0x716f_7265).build_hasher())
    }
}

impl KeyHasher {
    /// Add a string, its length first (so `"ab" + "c"` and `"a" + "bc"` differ).
    pub fn str(&mut self, s: &str) -> &mut Self {
        self.0.write_usize(s.len());
        self.0.write(s.as_bytes());
        self
    }

    /// Add an optional string, marked present or absent.
    pub fn opt(&mut self, s: Option<&str>) -> &mut Self {
        match s {
            Some(s) => {
                self.0.write_u8(1);
                self.str(s)
            }
            None => self.tag(0),
        }
    }

    /// Add raw bytes (no length prefix: use where the length is fixed or already added).
    pub fn bytes(&mut self, bytes: &[u8]) -> &mut Self {
        self.0.write(bytes);
        self
    }

    /// Add a one-byte tag (a variant or a flag).
    pub fn tag(&mut self, n: u8) -> &mut Self {
        self.0.write_u8(n);
        self
    }

    /// Add a number.
    pub fn num(&mut self, n: u64) -> &mut Self {
        self.0.write_u64(n);
        self
    }

    /// The key of everything added so far.
    pub fn finish(&self) -> u64 {
        self.0.finish()
    }

    /// Mix in `message` (see the module doc).
    pub fn message(&mut self, message: &Message) -> &mut Self {
        let Message { role, blocks } = message;
        self.tag(match role {
            Role::System => 0,
            Role::User => 1,
            Role::Assistant => 2,
        });
        self.num(blocks.len() as u64);
        for block in blocks {
            self.block(block);
        }
        self
    }

    fn block(&mut self, block: &ContentBlock) {
        match block {
            ContentBlock::Text { text, signature } => {
                self.tag(0).str(text).opt(signature.as_deref());
            }
            ContentBlock::Image(source) => {
                self.tag(1).image(source);
            }
            ContentBlock::Thinking { text, signature } => {
                self.tag(2).str(text).opt(signature.as_deref());
            }
            ContentBlock::RedactedThinking { data } => {
                self.tag(3).str(data);
            }
            ContentBlock::ToolUse {
                id,
                name,
                input,
                raw_input,
                signature,
            } => {
                self.tag(4).str(id).str(name).value(input);
                self.opt(raw_input.as_deref()).opt(signature.as_deref());
            }
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => {
                self.tag(5).str(tool_use_id).tag(u8::from(*is_error));
                self.num(content.len() as u64);
                for part in content {
                    match part {
                        ToolResultPart::Text { text } => self.tag(0).str(text),
                        ToolResultPart::Image(source) => self.tag(1).image(source),
                    };
                }
            }
        }
    }

    fn image(&mut self, source: &ImageSource) -> &mut Self {
        let ImageSource { media_type, data } = source;
        self.opt(media_type.as_deref());
        match data {
            ImageData::Bytes(bytes) => {
                self.tag(0).num(bytes.len() as u64);
                self.0.write(bytes);
            }
            ImageData::Url(url) => {
                self.tag(1).str(url);
            }
        }
        self
    }

    /// Mix in a JSON value.
    pub fn value(&mut self, value: &Value) -> &mut Self {
        match value {
            Value::Null => self.tag(0),
            Value::Bool(b) => self.tag(1).tag(u8::from(*b)),
            // The number's text: 1 and 1.0 are different bytes on the wire.
            Value::Number(n) => self.tag(2).str(&n.to_string()),
            Value::String(s) => self.tag(3).str(s),
            Value::Array(items) => {
                self.tag(4).num(items.len() as u64);
                for item in items {
                    self.value(item);
                }
                self
            }
            Value::Object(members) => {
                self.tag(5).num(members.len() as u64);
                for (key, item) in members {
                    self.str(key).value(item);
                }
                self
            }
        }
    }
}

/// The content hash of `message` (see the module doc).
pub fn message_key(message: &Message) -> u64 {
    KeyHasher::default().message(message).finish()
}

#[path = "encode_splice.rs"]
mod splice;
pub(crate) use splice::encode_spliced;

#[cfg(test)]
#[path = "encode_cache_tests.rs"]
mod tests;
