//! [`CallId`]: the id of a tool call as its argument deltas carry it.
//!
//! Promises: a clone is a reference count, never an allocation (a call's arguments stream as
//! hundreds of deltas, each naming the call; ids such as Anthropic's `toolu_…` or OpenAI's
//! `call_…` are longer than a [`crate::DeltaText`] keeps inline); it derefs to `str`,
//! compares with strings, and is a plain JSON string.

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The id of a tool call, shared by every delta of the call (see the module doc).
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CallId(Arc<str>);

impl CallId {
    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for CallId {
    fn default() -> Self {
        CallId::from("")
    }
}

impl Deref for CallId {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for CallId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl std::borrow::Borrow<str> for CallId {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl From<&str> for CallId {
    fn from(id: &str) -> Self {
        CallId(Arc::from(id))
    }
}

impl From<String> for CallId {
    fn from(id: String) -> Self {
        CallId(Arc::from(id))
    }
}

impl From<&String> for CallId {
    fn from(id: &String) -> Self {
        CallId::from(id.as_str())
    }
}

impl fmt::Debug for CallId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for CallId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl PartialEq<str> for CallId {
    fn eq(&self, other: &str) -> bool {
        &*self.0 == other
    }
}

impl PartialEq<&str> for CallId {
    fn eq(&self, other: &&str) -> bool {
        &*self.0 == *other
    }
}

impl PartialEq<String> for CallId {
    fn eq(&self, other: &String) -> bool {
        *self.0 == **other
    }
}

impl PartialEq<CallId> for str {
    fn eq(&self, other: &CallId) -> bool {
        self == &*other.0
    }
}

impl PartialEq<CallId> for &str {
    fn eq(&self, other: &CallId) -> bool {
        *self == &*other.0
    }
}

impl PartialEq<CallId> for String {
    fn eq(&self, other: &CallId) -> bool {
        **self == *other.0
    }
}

impl Serialize for CallId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for CallId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(CallId::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clone_shares_the_text_and_json_is_a_plain_string() {
        let id = CallId::from("toolu_01A09q90qw90lq917835lq9");
        let copy = id.clone();
        assert!(
            std::ptr::eq(id.as_str(), copy.as_str()),
            "no copy of the text"
        );
        assert_eq!(copy, "toolu_01A09q90qw90lq917835lq9");
        let json = serde_json::to_string(&id).unwrap();
        assert_eq!(json, r#""toolu_01A09q90qw90lq917835lq9""#);
        assert_eq!(serde_json::from_str::<CallId>(&json).unwrap(), id);
        assert_eq!(format!("{id:?}"), r#""toolu_01A09q90qw90lq917835lq9""#);
    }
}
