//! qore-lsp: `qore lsp`, the editor server. LSP over stdio on tower-lsp-server, behind a
//! guard that survives malformed frames ([`transport`]).
//!
//! What it promises (details in each module's doc):
//! - [`serve`] runs the server over any byte streams until `exit` or the end of the input,
//!   never ending on a bad request, a provider failure or a malformed message;
//! - inline completion (`textDocument/inlineCompletion`) and the `textDocument/completion`
//!   fallback, debounced, cancelled by `$/cancelRequest` or a newer request for the same
//!   document ([`complete`]);
//! - quick refactor: code actions on a selection and the `qore.refactor` command, applied
//!   with one `workspace/applyEdit` ([`refactor`]);
//! - documents kept in step with incremental sync ([`documents`]), settings from the editor
//!   ([`settings`]), files excluded by `.qoreignore`/`.gitignore` never completed nor sent
//!   ([`ignored`]);
//! - the Copilot language server's protocol, for the editor plugins written for it
//!   (`getCompletions`, `checkStatus`, `notify*`, ...: [`copilot`], [`copilot_methods`]).

pub mod backend;
pub mod complete;
pub mod copilot;
pub mod copilot_methods;
pub mod documents;
pub mod error;
pub mod feedback;
pub mod frame;
pub mod ignored;
pub mod inflight;
mod lock;
pub mod refactor;
pub mod settings;
pub mod transport;

pub use backend::{Backend, Setup, ACCEPTED_COMMAND, REFACTOR_COMMAND};
pub use error::{FrameError, LspError};

use tokio::io::{AsyncRead, AsyncWrite};
use tower_lsp_server::LspService;

/// Serve the editor on `input`/`output` (stdin/stdout for `qore lsp`).
pub async fn serve<I, O>(input: I, output: O, setup: Setup) -> Result<(), LspError>
where
    I: AsyncRead + Unpin,
    O: AsyncWrite + Unpin,
{
    let builder = LspService::build(|client| Backend::new(client, setup))
        .custom_method("textDocument/inlineCompletion", Backend::inline_completion);
    let (service, socket) = copilot_methods::register(builder).finish();
    transport::serve_guarded(input, output, service, socket).await
}

/// [`serve`] on the process's stdin and stdout.
pub async fn serve_stdio(setup: Setup) -> Result<(), LspError> {
    serve(tokio::io::stdin(), tokio::io::stdout(), setup).await
}
