//! What the completion tests share: a Python file with its cursor after `return `, one
//! other open document, and completing there.

use std::path::Path;

use qore_client::CancellationToken;
use qore_core::ErrorInfo;
use qore_session::completion::clean::{Completion, Mode};
use qore_session::completion::context::{CompletionContext, Cursor, OpenFile, Window};
use qore_session::completion::request::complete;
use qore_session::Target;

/// The file being completed.
pub const FILE: &str = "def add(a, b):\n    return \n\nprint(add(1, 2))\n";

/// [`FILE`]'s context with the cursor after `return ` (line 1, character 11).
pub fn context() -> CompletionContext {
    let cursor = Cursor {
        line: 1,
        character: 11,
    };
    CompletionContext::new(FILE, cursor, &Window::default())
}

/// The other open document: `util.py`.
pub fn util_py() -> [OpenFile; 1] {
    [OpenFile {
        path: "util.py".into(),
        text: "def sub(a, b):\n    return a - b\n".into(),
    }]
}

/// `request::complete` of [`context`] in `add.py` (multi-line) with `extra`.
pub async fn complete_add_py(
    target: &Target,
    extra: &[OpenFile],
) -> Result<Option<Completion>, ErrorInfo> {
    let cancel = CancellationToken::new();
    complete(
        target,
        &context(),
        Path::new("add.py"),
        Mode::Multi,
        extra,
        cancel,
    )
    .await
}
