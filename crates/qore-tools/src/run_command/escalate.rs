//! More rights for one command: what `run_command` offers the model (`sandbox`, `network`,
//! `justification`), what a call asks for, and the policy a granted call runs under.
//!
//! Promises:
//! - the arguments are offered only when the tool is confined and `[sandbox] escalation` is
//!   `ask`;
//! - [`asked`] reads a call: it asks for more rights when its `sandbox` mode is wider than the
//!   policy's or it wants the network the policy does not give; on a kernel that cannot
//!   confine commands with `[sandbox] unconfinable = "ask"`, *every* call asks (to run
//!   unconfined), with a note saying why; a call asking for less (a narrower mode) asks
//!   nothing and runs narrower;
//! - [`policy_for`] is the policy a call runs under: the tool's, narrowed or (only for a
//!   call a person granted) widened as the call asks; on an unconfinable kernel a granted
//!   call runs in full access (the helper then confines nothing, by the person's choice).

use qore_core::RightsRequest;
use qore_sandbox::{Mode, Policy};
use serde_json::{json, Value};

use super::confine::{Escalation, SandboxOptions, Unconfinable};

/// Add the escalation arguments to `schema`'s properties, when offered under `options`.
pub(super) fn offer(schema: &mut Value, options: Option<&SandboxOptions>) {
    if let (Some(Value::Object(more)), Some(Value::Object(properties))) =
        (properties(options), schema.get_mut("properties"))
    {
        properties.extend(more);
    }
}

fn properties(options: Option<&SandboxOptions>) -> Option<Value> {
    let options = options.filter(|o| o.escalation == Escalation::Ask)?;
    let mode = options.mode.name();
    Some(json!({
        "sandbox": {
            "type": "string",
            "enum": ["read-only", "workspace-write", "full-access"],
            "description": format!(
                "Only after this command failed because of the sandbox ({mode} now): run it in \
                 this sandbox mode instead. Needs `justification`; a person must approve it."
            )
        },
        "network": {
            "type": "boolean",
            "description": "Only when the command needs the network (off in the sandbox): run \
                it with the network on. Needs `justification`; a person must approve it."
        },
        "justification": {
            "type": "string",
            "description": "Why this command needs more rights, for the person who approves it."
        }
    }))
}

fn rank(mode: Mode) -> u8 {
    match mode {
        Mode::ReadOnly => 0,
        Mode::WorkspaceWrite => 1,
        Mode::FullAccess => 2,
    }
}

/// What a call's arguments ask of the sandbox.
struct Wanted {
    mode: Option<Mode>,
    network: Option<bool>,
    justification: Option<String>,
}

fn wanted(input: &Value) -> Wanted {
    Wanted {
        mode: input["sandbox"].as_str().and_then(|m| m.parse().ok()),
        network: input["network"].as_bool(),
        justification: input["justification"].as_str().map(str::to_owned),
    }
}

/// The rights a call with `input` asks for under `policy` (see the module doc).
/// `unconfinable`: this kernel cannot confine commands.
pub(super) fn asked(
    options: Option<&SandboxOptions>,
    policy: Option<&Policy>,
    unconfinable: bool,
    input: &Value,
) -> Option<RightsRequest> {
    let (options, policy) = (options?, policy?);
    let w = wanted(input);
    let unconfined = unconfinable
        && options.unconfinable == Unconfinable::Ask
        && policy.mode != Mode::FullAccess;
    if unconfined {
        return Some(RightsRequest {
            mode: Some(format!("{} (unconfined)", Mode::FullAccess)),
            network: None,
            justification: w.justification,
            note: Some(
                "this kernel cannot confine commands (no Landlock or seccomp): if you allow \
                 it, the command runs with all of your rights; you are asked for every command"
                    .to_owned(),
            ),
        });
    }
    if options.escalation != Escalation::Ask {
        return None;
    }
    let wider = w.mode.filter(|m| rank(*m) > rank(policy.mode));
    let network = (w.network == Some(true) && !policy.network)
        .then_some(true)
        .filter(|_| wider.unwrap_or(policy.mode) != Mode::FullAccess);
    if wider.is_none() && network.is_none() {
        return None;
    }
    Some(RightsRequest {
        mode: wider.map(|m| m.name().to_owned()),
        network,
        justification: w.justification,
        note: None,
    })
}

/// Whether `input` asks for more than `policy` gives, granted or not (a call that does must
/// not run through `call`, which grants nothing).
pub(super) fn asks_more(policy: Option<&Policy>, input: &Value) -> bool {
    let Some(policy) = policy else { return false };
    let w = wanted(input);
    w.mode.is_some_and(|m| rank(m) > rank(policy.mode))
        || (w.network == Some(true) && !policy.network && policy.mode != Mode::FullAccess)
}

/// The policy a call with `input` runs under: `policy` narrowed as it asks, or, when a person
/// `granted` more, widened as it asks (full access on an `unconfinable` kernel).
pub(super) fn policy_for(
    policy: &Policy,
    input: &Value,
    granted: bool,
    unconfinable: bool,
) -> Policy {
    let mut out = policy.clone();
    let w = wanted(input);
    if let Some(mode) = w.mode.filter(|m| granted || rank(*m) < rank(policy.mode)) {
        out.mode = mode;
    }
    if let Some(network) = w.network.filter(|n| granted || !n) {
        out.network = network;
    }
    if granted && unconfinable {
        out.mode = Mode::FullAccess;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (case, options, unconfinable kernel, input, mode asked, network asked, note)
    type Case<'a> = (
        &'a str,
        &'a SandboxOptions,
        bool,
        Value,
        Option<&'a str>,
        Option<bool>,
        bool,
    );

    #[test]
    fn what_a_call_asks_for() {
        let dir = tempfile::tempdir().unwrap();
        let policy = Policy::new(Mode::WorkspaceWrite, dir.path()).unwrap();
        let ask = SandboxOptions::default();
        let never = SandboxOptions {
            escalation: Escalation::Never,
            ..SandboxOptions::default()
        };
        let unconf_ask = SandboxOptions {
            unconfinable: Unconfinable::Ask,
            ..SandboxOptions::default()
        };
        let why = "write the rc file";
        let cases: Vec<Case<'_>> = vec![
            (
                "plain",
                &ask,
                false,
                json!({"argv": ["ls"]}),
                None,
                None,
                false,
            ),
            (
                "full access",
                &ask,
                false,
                json!({"sandbox": "full-access", "justification": why}),
                Some("full-access"),
                None,
                false,
            ),
            (
                "network",
                &ask,
                false,
                json!({"network": true}),
                None,
                Some(true),
                false,
            ),
            (
                "full access with network",
                &ask,
                false,
                json!({"sandbox": "full-access", "network": true}),
                Some("full-access"),
                None,
                false,
            ),
            (
                "narrower",
                &ask,
                false,
                json!({"sandbox": "read-only"}),
                None,
                None,
                false,
            ),
            (
                "same",
                &ask,
                false,
                json!({"sandbox": "workspace-write"}),
                None,
                None,
                false,
            ),
            (
                "never",
                &never,
                false,
                json!({"sandbox": "full-access"}),
                None,
                None,
                false,
            ),
            (
                "unconfinable, refuse",
                &ask,
                true,
                json!({"argv": ["ls"]}),
                None,
                None,
                false,
            ),
            (
                "unconfinable, ask",
                &unconf_ask,
                true,
                json!({"argv": ["ls"]}),
                Some("full-access (unconfined)"),
                None,
                true,
            ),
        ];
        for (case, options, unconfinable, input, mode, network, note) in cases {
            let got = asked(Some(options), Some(&policy), unconfinable, &input);
            assert_eq!(got.as_ref().and_then(|r| r.mode.as_deref()), mode, "{case}");
            assert_eq!(got.as_ref().and_then(|r| r.network), network, "{case}");
            assert_eq!(
                got.as_ref().is_some_and(|r| r.note.is_some()),
                note,
                "{case}"
            );
        }
        let asked_why = asked(
            Some(&ask),
            Some(&policy),
            false,
            &json!({"sandbox": "full-access", "justification": why}),
        );
        assert_eq!(asked_why.unwrap().justification.as_deref(), Some(why));
    }

    #[test]
    fn only_a_granted_call_runs_wider() {
        let dir = tempfile::tempdir().unwrap();
        let policy = Policy::new(Mode::WorkspaceWrite, dir.path()).unwrap();
        let full = json!({"sandbox": "full-access", "network": true});
        assert_eq!(policy_for(&policy, &full, false, false), policy);
        let granted = policy_for(&policy, &full, true, false);
        assert_eq!((granted.mode, granted.network), (Mode::FullAccess, true));
        let narrower = policy_for(&policy, &json!({"sandbox": "read-only"}), false, false);
        assert_eq!(narrower.mode, Mode::ReadOnly);
        let unconfined = policy_for(&policy, &json!({}), true, true);
        assert_eq!(unconfined.mode, Mode::FullAccess);
        assert!(asks_more(Some(&policy), &full));
        assert!(!asks_more(Some(&policy), &json!({"sandbox": "read-only"})));
    }
}
