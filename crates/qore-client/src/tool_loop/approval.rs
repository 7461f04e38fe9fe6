//! The approval policy: whether a tool call may run, decided in one place.
//!
//! Promises:
//! - rules from configuration are checked first, in order; the first rule whose tool name
//!   and argument pattern match decides (allow or deny);
//! - then decisions remembered for this session ("allow this tool for the rest of the
//!   session"); their scope is explicit in [`ApprovalDecision`], nothing is remembered
//!   silently; they live in [`SessionApprovals`], which every policy of one session shares
//!   (a front end that rebuilds the tools keeps them), and can be listed and revoked;
//! - then the mode: `auto` runs everything; `read-only` refuses destructive tools with a
//!   result that says why; `confirm` runs read-only tools and asks an [`Approver`] for the
//!   destructive ones;
//! - a denial becomes an error result telling the model the user declined, so it moves on
//!   instead of asking again;
//! - a call asking for more rights ([`qore_core::Tool::rights_asked`]) is decided apart
//!   ([`ApprovalPolicy::verdict_for`]): a deny rule or a read-only session refuses it, one
//!   without a justification is refused, and every other is asked about, whatever the mode,
//!   the allow rules and the remembered answers; its approval is never remembered, and its
//!   denial (also by qore-session's `NobodyAsked`, when no person can be asked) says the
//!   rights were not granted.

use std::collections::BTreeSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use qore_core::RightsRequest;
use regex::Regex;
use serde_json::Value;

/// How tool calls are approved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ApprovalMode {
    /// Run everything.
    Auto,
    /// Refuse destructive tools.
    ReadOnly,
    /// Ask before destructive tools.
    #[default]
    Confirm,
}

impl std::str::FromStr for ApprovalMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(ApprovalMode::Auto),
            "read-only" | "readonly" => Ok(ApprovalMode::ReadOnly),
            "confirm" => Ok(ApprovalMode::Confirm),
            other => Err(format!(
                "unknown approval mode {other:?} (auto, read-only, confirm)"
            )),
        }
    }
}

/// A rule that pre-decides calls of one tool, optionally only when an argument matches.
#[derive(Debug, Clone)]
pub struct ApprovalRule {
    /// The tool the rule is about.
    pub tool: String,
    /// Only calls whose argument matches (`None`: every call of the tool).
    pub when: Option<ArgumentMatch>,
    /// Run the call without asking (`true`) or refuse it (`false`).
    pub allow: bool,
}

/// An argument (a JSON pointer into the arguments object) whose text must match a regex
/// entirely. Arrays of strings are matched as their items joined with single spaces.
#[derive(Debug, Clone)]
pub struct ArgumentMatch {
    /// A JSON pointer into the arguments object (`/command`).
    pub pointer: String,
    /// The regex, anchored so that it must match the whole argument text.
    pub pattern: Regex,
}

impl ArgumentMatch {
    /// `pattern` must match the whole argument text.
    pub fn new(pointer: impl Into<String>, pattern: &str) -> Result<Self, regex::Error> {
        Ok(ArgumentMatch {
            pointer: pointer.into(),
            pattern: Regex::new(&format!("^(?:{pattern})$"))?,
        })
    }

    fn matches(&self, arguments: &Value) -> bool {
        let text = match arguments.pointer(&self.pointer) {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Array(items)) => {
                let words: Option<Vec<&str>> = items.iter().map(Value::as_str).collect();
                match words {
                    Some(words) => words.join(" "),
                    None => return false,
                }
            }
            Some(other) => other.to_string(),
            None => return false,
        };
        self.pattern.is_match(&text)
    }
}

/// What the user is asked.
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalRequest {
    /// The id of the call awaiting approval.
    pub call_id: String,
    /// The tool the model called.
    pub tool: String,
    /// The arguments the model gave.
    pub arguments: Value,
    /// The rights the call asks for beyond the tool's default (the question must say them
    /// and the justification; only "once" answers count).
    pub rights: Option<RightsRequest>,
}

/// The user's answer, with its scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalDecision {
    /// Run this call only.
    AllowOnce,
    /// Run this call and every later call of this tool in this session.
    AllowSession,
    /// Do not run it; the reason goes back to the model.
    Deny {
        /// Why, in the user's words (the model reads it); `None`: a plain refusal.
        reason: Option<String>,
    },
}

/// Whoever answers approval requests (a terminal prompt, a JSON-lines peer, a test).
pub trait Approver: Send + Sync {
    /// Decide on `request`; the loop waits for the answer (or for cancellation).
    fn decide<'a>(
        &'a self,
        request: &'a ApprovalRequest,
    ) -> Pin<Box<dyn Future<Output = ApprovalDecision> + Send + 'a>>;
}

/// The policy's verdict on one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Run the call without asking.
    Run,
    /// Not run; the text is the error result the model gets.
    Refuse(String),
    /// Ask the [`Approver`] first.
    Ask,
}

/// The tools the user allowed for the rest of a session ("always"); clones share them.
#[derive(Debug, Clone, Default)]
pub struct SessionApprovals(Arc<Mutex<BTreeSet<String>>>);

impl SessionApprovals {
    fn tools(&self) -> std::sync::MutexGuard<'_, BTreeSet<String>> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The allowed tools, by name.
    pub fn list(&self) -> Vec<String> {
        self.tools().iter().cloned().collect()
    }

    /// Forget the approval of `tool`; whether there was one.
    pub fn revoke(&self, tool: &str) -> bool {
        self.tools().remove(tool)
    }

    fn allows(&self, tool: &str) -> bool {
        self.tools().contains(tool)
    }

    fn allow(&self, tool: &str) {
        self.tools().insert(tool.to_owned());
    }
}

/// Mode, rules and what this session remembered.
#[derive(Debug, Clone, Default)]
pub struct ApprovalPolicy {
    /// How calls are approved when no rule decides.
    pub mode: ApprovalMode,
    /// Rules checked first, in order; the first that matches decides.
    pub rules: Vec<ApprovalRule>,
    allowed_for_session: SessionApprovals,
}

impl ApprovalPolicy {
    /// A policy of `mode` with no rules.
    pub fn new(mode: ApprovalMode) -> Self {
        ApprovalPolicy {
            mode,
            ..Self::default()
        }
    }

    /// The policy with `rule` added after the others.
    pub fn with_rule(mut self, rule: ApprovalRule) -> Self {
        self.rules.push(rule);
        self
    }

    /// The same policy remembering its "always" answers in `approvals` (shared with the
    /// session's other policies) instead of its own.
    pub fn remembering(mut self, approvals: SessionApprovals) -> Self {
        self.allowed_for_session = approvals;
        self
    }

    /// Where this policy remembers its "always" answers.
    pub fn session_approvals(&self) -> &SessionApprovals {
        &self.allowed_for_session
    }

    /// Decide a call of `tool` (whose `destructive` flag is given) with `arguments`.
    pub fn verdict(&self, tool: &str, destructive: bool, arguments: &Value) -> Verdict {
        self.verdict_for(tool, destructive, None, arguments)
    }

    fn rule_for(&self, tool: &str, arguments: &Value) -> Option<&ApprovalRule> {
        self.rules
            .iter()
            .find(|r| r.tool == tool && r.when.as_ref().is_none_or(|m| m.matches(arguments)))
    }

    /// [`ApprovalPolicy::verdict`] for a call that may ask for more `rights`: such a call is
    /// refused by a deny rule, a read-only session or a missing justification, and asked
    /// about otherwise (never run on the mode, an allow rule or a remembered answer).
    pub fn verdict_for(
        &self,
        tool: &str,
        destructive: bool,
        rights: Option<&RightsRequest>,
        arguments: &Value,
    ) -> Verdict {
        let rule = self.rule_for(tool, arguments);
        if let Some(rights) = rights {
            let asked = rights.describe();
            return if rule.is_some_and(|r| !r.allow) {
                Verdict::Refuse(format!(
                    "Not run: the configured approval rules deny {tool} with these arguments \
                     (it asked for {asked}). Do not retry it; continue without it."
                ))
            } else if self.mode == ApprovalMode::ReadOnly {
                Verdict::Refuse(format!(
                    "Not run: {tool} asked for {asked}, and tools are read-only in this \
                     session. Tell the user what you would run and why."
                ))
            } else if !rights.explained() {
                Verdict::Refuse(format!(
                    "Not run: {tool} asked for {asked} without a justification. Call it again \
                     with a `justification` that tells the user why it needs them."
                ))
            } else {
                Verdict::Ask
            };
        }
        if let Some(rule) = rule {
            return if rule.allow {
                Verdict::Run
            } else {
                Verdict::Refuse(format!(
                    "Not run: the configured approval rules deny {tool} with these arguments. \
                     Do not retry it; continue without it."
                ))
            };
        }
        if !destructive || self.allowed_for_session.allows(tool) {
            return Verdict::Run;
        }
        match self.mode {
            ApprovalMode::Auto => Verdict::Run,
            ApprovalMode::ReadOnly => Verdict::Refuse(format!(
                "Not run: {tool} can change files or run programs, and tools are read-only in \
                 this session. Use read-only tools, or tell the user what you would change."
            )),
            ApprovalMode::Confirm => Verdict::Ask,
        }
    }

    /// [`ApprovalPolicy::apply`] for a call that may ask for more `rights`: an approval of
    /// such a call is for this call only, and its denial says the rights were not granted.
    pub fn apply_for(
        &mut self,
        tool: &str,
        rights: Option<&RightsRequest>,
        decision: &ApprovalDecision,
    ) -> Result<(), String> {
        let Some(rights) = rights else {
            return self.apply(tool, decision);
        };
        match decision {
            ApprovalDecision::AllowOnce | ApprovalDecision::AllowSession => Ok(()),
            ApprovalDecision::Deny { reason } => {
                let why = match reason.as_deref().map(str::trim) {
                    Some(reason) if !reason.is_empty() => format!(": {reason}"),
                    _ => String::new(),
                };
                Err(format!(
                    "Not run: {tool} asked for {}, which only a person can grant, and it was \
                     not granted{why}. Do not ask for it again; continue within the sandbox, \
                     or tell the user what needs more rights and why.",
                    rights.describe()
                ))
            }
        }
    }

    /// Apply the user's answer: `Ok(())` to run, `Err(result text)` when denied.
    pub fn apply(&mut self, tool: &str, decision: &ApprovalDecision) -> Result<(), String> {
        match decision {
            ApprovalDecision::AllowOnce => Ok(()),
            ApprovalDecision::AllowSession => {
                self.allowed_for_session.allow(tool);
                Ok(())
            }
            ApprovalDecision::Deny { reason } => Err(match reason.as_deref().map(str::trim) {
                Some(reason) if !reason.is_empty() => format!(
                    "The user declined to run {tool}: {reason}. Do not ask for it again; \
                     continue without it."
                ),
                _ => format!(
                    "The user declined to run {tool}. Do not ask for it again; continue \
                     without it."
                ),
            }),
        }
    }
}

#[cfg(test)]
#[path = "approval_tests.rs"]
mod tests;
