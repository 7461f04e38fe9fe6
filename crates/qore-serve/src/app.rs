//! A re-export kept only so that code still naming `crate::app::App` (the console's
//! `admin/` modules and `exchange.rs`) compiles: [`App`] lives in [`crate::state`]. Promises
//! nothing else; to be removed once those imports read `crate::state::App`.

pub use crate::state::App;
