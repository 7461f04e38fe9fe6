//! Tools that change while a turn runs, over real loopback HTTP on every codec: a tool
//! source (what an MCP server is to the registry) whose `unlock` tool swaps its list from
//! `unlock, vanish` to `unlock, secret` and moves its version, as a server's
//! `notifications/tools/list_changed` does. The round after `unlock` ran must offer
//! `secret` and no longer `vanish` (read from the request the server received, with the
//! test's own parser), run the model's call to `secret`, and answer its call to `vanish`
//! with an error result, without running it. The source is fetched again only after its
//! version moved.

#[path = "tool_loop/support.rs"]
mod support;

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use qore_client::tool_loop::{ApprovalMode, ApprovalPolicy, ToolProtocol, TurnOutcome};
use qore_client::CancellationToken;
use qore_core::{Tool, ToolOutput, ToolSource};
use qore_testkit::{ReplayServer, Reply};
use serde_json::{json, Value};
use support::*;

/// What the vault's "server" holds now; `unlock` changes it.
#[derive(Default)]
struct VaultState {
    unlocked: AtomicBool,
    /// Moves with every change of the list (a server's change count).
    version: AtomicU64,
}

/// A tool source over [`VaultState`]: its snapshot is the list as last fetched.
struct Vault {
    state: Arc<VaultState>,
    log: Log,
    fetched: Mutex<(u64, Vec<Arc<dyn Tool>>)>,
    fetches: AtomicUsize,
}

impl Vault {
    fn new(log: &Log) -> Arc<Vault> {
        let state = Arc::new(VaultState::default());
        let vault = Vault {
            fetched: Mutex::new((0, Vec::new())),
            state,
            log: log.clone(),
            fetches: AtomicUsize::new(0),
        };
        *vault.fetched.lock().unwrap() = (0, vault.list());
        Arc::new(vault)
    }

    /// The tools the vault offers in its current state.
    fn list(&self) -> Vec<Arc<dyn Tool>> {
        let state = self.state.clone();
        let unlock = TestTool::new("unlock", &self.log).answer(move |_| {
            state.unlocked.store(true, Ordering::SeqCst);
            state.version.fetch_add(1, Ordering::SeqCst);
            ToolOutput::text("unlocked")
        });
        let other = match self.state.unlocked.load(Ordering::SeqCst) {
            false => TestTool::new("vanish", &self.log),
            true => TestTool::new("secret", &self.log).answer(|_| ToolOutput::text("the code")),
        };
        vec![unlock.arc(), other.arc()]
    }
}

impl ToolSource for Vault {
    fn snapshot(&self) -> (u64, Vec<Arc<dyn Tool>>) {
        self.fetched.lock().unwrap().clone()
    }

    fn version(&self) -> u64 {
        self.state.version.load(Ordering::SeqCst)
    }

    fn refetch(&self) -> Pin<Box<dyn Future<Output = ()> + Send + '_>> {
        Box::pin(async move {
            self.fetches.fetch_add(1, Ordering::SeqCst);
            *self.fetched.lock().unwrap() = (self.version(), self.list());
        })
    }
}

fn bodies(server: &ReplayServer) -> Vec<Value> {
    (server.requests().iter())
        .map(|r| r.json().expect("a JSON request body"))
        .collect()
}

/// The loop with `echo` and the vault's tools (auto approval) against `replies`.
async fn run_vault(
    wire: Wire,
    protocol: ToolProtocol,
    replies: Vec<Reply>,
) -> (Vec<Value>, Harness, Log, Arc<Vault>, TurnOutcome) {
    let server = ReplayServer::start(replies).await.expect("replay server");
    let client = wire.client(&server);
    let log = Log::default();
    let vault = Vault::new(&log);
    let mut h = Harness::new(
        vec![TestTool::echo(&log).arc()],
        ApprovalPolicy::new(ApprovalMode::Auto),
    );
    assert!(h.registry.add_source(vault.clone()).is_empty());
    h.config.tool_protocol = protocol;
    let approver = ScriptedApprover::silent(&log);
    let (outcome, _) = h.run(&client, &approver, &CancellationToken::new()).await;
    (bodies(&server), h, log, vault, outcome)
}

fn offered(wire: Wire, body: &Value) -> Vec<String> {
    (wire.tool_specs(body).into_iter())
        .map(|s| s.name)
        .collect()
}

#[tokio::test]
async fn a_changed_list_is_offered_from_the_next_round_of_the_same_turn_on_every_wire() {
    for wire in Wire::ALL {
        let replies = vec![
            wire.turn(&[call("c1", "unlock", json!({}))], (10, 3)),
            wire.turn(
                &[
                    call("c2", "secret", json!({"n": 1})),
                    call("c3", "vanish", json!({})),
                ],
                (10, 3),
            ),
            wire.answer("Done."),
        ];
        let (bodies, h, log, vault, outcome) = run_vault(wire, ToolProtocol::Native, replies).await;
        let what = wire.name();
        assert!(
            matches!(outcome, TurnOutcome::Finished { rounds: 2, .. }),
            "{what}: {outcome:?}"
        );
        assert_eq!(bodies.len(), 3, "{what}");
        let expected: [&[&str]; 3] = [
            &["echo", "unlock", "vanish"],
            &["echo", "unlock", "secret"],
            &["echo", "unlock", "secret"],
        ];
        for (n, (body, names)) in bodies.iter().zip(expected).enumerate() {
            assert_eq!(offered(wire, body), names, "{what}: request {}", n + 1);
        }
        let results = results_of(&wire.items(&bodies[2]));
        assert_eq!(results.len(), 3, "{what}: {results:?}");
        // (Gemini's results carry no call ids: they are matched by order.)
        let unlocked = &results[0];
        assert_eq!((&*unlocked.1, unlocked.2), ("unlocked", false), "{what}");
        let (secret, vanish) = (&results[1], &results[2]);
        assert!(
            secret.1.contains("the code") && !secret.2,
            "{what}: {results:?}"
        );
        assert!(
            vanish.2
                && vanish.1.contains("\"vanish\" is not available")
                && vanish.1.contains("secret"),
            "{what}: the call to the removed tool is not answered as unavailable: {results:?}"
        );
        assert_eq!(log.count("start vanish"), 0, "{what}: {:?}", log.entries());
        assert_eq!(log.count("start secret"), 1, "{what}: {:?}", log.entries());
        // Fetched once, after `unlock` moved the version; the other rounds only compared it.
        assert_eq!(vault.fetches.load(Ordering::SeqCst), 1, "{what}");
        assert_history_well_formed(&h.history);
    }
}

/// The system text of a Chat Completions request.
fn system_text(body: &Value) -> String {
    (Wire::OpenAiChat.items(body).into_iter())
        .filter_map(|item| match item {
            Item::System(text) => Some(text),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn the_text_protocol_describes_the_changed_list_from_the_next_round() {
    let wire = Wire::OpenAiChat;
    let block = |name: &str| {
        format!("<tool_call>{{\"name\": \"{name}\", \"arguments\": {{}}}}</tool_call>")
    };
    let replies = vec![
        wire.turn(&[text(&block("unlock"))], (10, 3)),
        wire.turn(&[text(&block("secret"))], (10, 3)),
        wire.answer("Done."),
    ];
    let (bodies, h, log, _, outcome) = run_vault(wire, ToolProtocol::Text, replies).await;
    assert!(
        matches!(outcome, TurnOutcome::Finished { rounds: 2, .. }),
        "{outcome:?}"
    );
    assert_eq!(bodies.len(), 3);
    // (request, tools its system text names, tools it must not name)
    let cases: [(usize, &str, &str); 3] = [
        (0, "vanish", "secret"),
        (1, "secret", "vanish"),
        (2, "secret", "vanish"),
    ];
    for (n, named, absent) in cases {
        let system = system_text(&bodies[n]);
        // Each tool is a heading of the tools list.
        let mentions = |tool: &str| system.contains(&format!("#### {tool}\n"));
        assert!(mentions(named), "request {}: {system}", n + 1);
        assert!(!mentions(absent), "request {}: {system}", n + 1);
    }
    assert_eq!(log.count("start secret"), 1, "{:?}", log.entries());
    assert_history_well_formed(&h.history);
}
