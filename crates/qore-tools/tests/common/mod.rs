//! A project on a real temp directory, with a sibling directory outside it, and a way to call
//! the built-in tools by name.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use qore_core::{CancellationToken, Tool, ToolOutput};
use qore_tools::{builtin_tools, Sandbox, ToolOptions};
use serde_json::Value;

pub struct Project {
    _tmp: tempfile::TempDir,
    /// The project root (canonical).
    pub root: PathBuf,
    /// A directory next to the root, outside the sandbox, holding `secret.txt`.
    pub outside: PathBuf,
    pub tools: Vec<Arc<dyn Tool>>,
}

impl Project {
    pub fn new() -> Project {
        Project::with_options(ToolOptions::default())
    }

    pub fn with_options(options: ToolOptions) -> Project {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        let root = base.join("project");
        let outside = base.join("outside");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("secret.txt"), "TOP SECRET\n").unwrap();
        let tools = builtin_tools(Sandbox::new(&root).unwrap(), &options);
        Project {
            _tmp: tmp,
            root,
            outside,
            tools,
        }
    }

    pub fn sandbox(&self) -> Sandbox {
        Sandbox::new(&self.root).unwrap()
    }

    /// Writes `contents` at `rel` under the root, creating directories.
    pub fn write(&self, rel: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, contents).unwrap();
        path
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.root.join(rel)).unwrap()
    }

    pub fn tool(&self, name: &str) -> Arc<dyn Tool> {
        self.tools
            .iter()
            .find(|t| t.spec().name == name)
            .unwrap_or_else(|| panic!("no tool {name}"))
            .clone()
    }

    pub async fn call(&self, name: &str, input: Value) -> ToolOutput {
        self.tool(name).call(input, CancellationToken::new()).await
    }

    /// Calls and asserts success, returning the text.
    pub async fn ok(&self, name: &str, input: Value) -> String {
        let out = self.call(name, input.clone()).await;
        assert!(
            !out.is_error,
            "{name} {input} failed: {}",
            out.text_content()
        );
        out.text_content()
    }

    /// Calls and asserts an error, returning the text.
    pub async fn err(&self, name: &str, input: Value) -> String {
        let out = self.call(name, input.clone()).await;
        assert!(
            out.is_error,
            "{name} {input} should fail, got: {}",
            out.text_content()
        );
        out.text_content()
    }
}

#[cfg(unix)]
pub fn symlink(target: &Path, link: &Path) {
    std::os::unix::fs::symlink(target, link).unwrap();
}
