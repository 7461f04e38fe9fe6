pub mod compress;
pub mod tokens;
pub mod undo;
pub mod transcript;
