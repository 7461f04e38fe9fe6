//! Ctrl-C in a chat: it cancels the turn in flight, never the chat.
//!
//! Promises: the SIGINT handler is installed once, before the first turn, and stays for the
//! whole chat, so a Ctrl-C never ends the process; each turn gets a fresh token from
//! [`Interrupts::turn`], and a Ctrl-C with no turn in flight (at the prompt of a piped chat)
//! does nothing. At a terminal prompt the editor reads Ctrl-C as a key, not a signal.

use std::sync::{Arc, Mutex};

use qore_client::CancellationToken;

/// The token of the turn in flight, cancelled by Ctrl-C.
#[derive(Clone)]
pub struct Interrupts {
    current: Arc<Mutex<Option<CancellationToken>>>,
    /// Cancels every turn: the end of the chat (stdout closed).
    all: CancellationToken,
}

impl Interrupts {
    /// Listen for Ctrl-C from now on; `all` cancels every turn too.
    pub fn install(all: CancellationToken) -> Interrupts {
        let interrupts = Interrupts {
            current: Arc::default(),
            all,
        };
        let on_signal = interrupts.clone();
        tokio::spawn(async move {
            #[cfg(unix)]
            {
                use tokio::signal::unix::{signal, SignalKind};
                if let Ok(mut signals) = signal(SignalKind::interrupt()) {
                    while signals.recv().await.is_some() {
                        on_signal.cancel_turn();
                    }
                    return;
                }
            }
            while tokio::signal::ctrl_c().await.is_ok() {
                on_signal.cancel_turn();
            }
        });
        interrupts
    }

    /// A token for the next turn (the previous turn's, if any, is cancelled: one request in
    /// flight).
    pub fn turn(&self) -> CancellationToken {
        let token = self.all.child_token();
        let previous = self.slot().replace(token.clone());
        if let Some(previous) = previous {
            previous.cancel();
        }
        token
    }

    /// The turn is over: Ctrl-C has nothing to cancel.
    pub fn done(&self) {
        self.slot().take();
    }

    /// Cancel the turn in flight, if there is one.
    pub fn cancel_turn(&self) {
        if let Some(token) = self.slot().as_ref() {
            token.cancel();
        }
    }

    fn slot(&self) -> std::sync::MutexGuard<'_, Option<CancellationToken>> {
        self.current
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}
