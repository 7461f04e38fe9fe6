//! Cleaning a completion or refactor reply (written on another branch; placeholder so this
//! branch builds).
