pub mod compress;
pub mod tokens;
pub mod undo;
