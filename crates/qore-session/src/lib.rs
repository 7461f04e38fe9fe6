pub mod undo;
