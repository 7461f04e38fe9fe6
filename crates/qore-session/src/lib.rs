pub mod compress;
pub mod tokens;
