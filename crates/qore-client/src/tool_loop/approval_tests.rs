//! The approval policy's cases: modes, rules, remembered answers, and calls asking for more
//! rights.

use super::*;
use serde_json::json;

#[test]
fn modes_decide_by_the_destructive_flag() {
    let args = json!({});
    assert_eq!(
        ApprovalPolicy::new(ApprovalMode::Auto).verdict("w", true, &args),
        Verdict::Run
    );
    assert!(matches!(
        ApprovalPolicy::new(ApprovalMode::ReadOnly).verdict("w", true, &args),
        Verdict::Refuse(msg) if msg.contains("read-only")
    ));
    assert_eq!(
        ApprovalPolicy::new(ApprovalMode::ReadOnly).verdict("r", false, &args),
        Verdict::Run
    );
    assert_eq!(
        ApprovalPolicy::new(ApprovalMode::Confirm).verdict("w", true, &args),
        Verdict::Ask
    );
    assert_eq!(
        ApprovalPolicy::new(ApprovalMode::Confirm).verdict("r", false, &args),
        Verdict::Run
    );
}

#[test]
fn rules_match_tool_and_argument_and_win_over_the_mode() {
    let policy = ApprovalPolicy::new(ApprovalMode::ReadOnly)
        .with_rule(ApprovalRule {
            tool: "run_command".into(),
            when: Some(ArgumentMatch::new("/argv", "git status( .*)?").unwrap()),
            allow: true,
        })
        .with_rule(ApprovalRule {
            tool: "write_file".into(),
            when: None,
            allow: false,
        });
    let git = json!({"argv": ["git", "status", "--short"]});
    let rm = json!({"argv": ["rm", "-rf", "x"]});
    assert_eq!(policy.verdict("run_command", true, &git), Verdict::Run);
    assert!(matches!(
        policy.verdict("run_command", true, &rm),
        Verdict::Refuse(_)
    ));
    assert!(matches!(
        ApprovalPolicy::new(ApprovalMode::Auto)
            .with_rule(policy.rules[1].clone())
            .verdict("write_file", true, &json!({})),
        Verdict::Refuse(msg) if msg.contains("rules deny")
    ));
}

#[test]
fn decisions_have_their_scope() {
    let mut policy = ApprovalPolicy::new(ApprovalMode::Confirm);
    let args = json!({});
    assert_eq!(policy.apply("w", &ApprovalDecision::AllowOnce), Ok(()));
    assert_eq!(policy.verdict("w", true, &args), Verdict::Ask);
    assert_eq!(policy.apply("w", &ApprovalDecision::AllowSession), Ok(()));
    assert_eq!(policy.verdict("w", true, &args), Verdict::Run);
    assert_eq!(policy.verdict("other", true, &args), Verdict::Ask);
    // Another policy of the same session shares the answer, and a revocation.
    let rebuilt =
        ApprovalPolicy::new(ApprovalMode::Confirm).remembering(policy.session_approvals().clone());
    assert_eq!(rebuilt.verdict("w", true, &args), Verdict::Run);
    assert_eq!(rebuilt.session_approvals().list(), ["w"]);
    assert!(rebuilt.session_approvals().revoke("w"));
    assert!(!rebuilt.session_approvals().revoke("w"));
    assert_eq!(policy.verdict("w", true, &args), Verdict::Ask);
    let denied = policy
        .apply(
            "x",
            &ApprovalDecision::Deny {
                reason: Some("too risky".into()),
            },
        )
        .unwrap_err();
    assert!(
        denied.contains("declined") && denied.contains("too risky"),
        "{denied}"
    );
}

#[test]
fn calls_asking_for_more_rights_are_always_asked_about_or_refused() {
    let asked = RightsRequest {
        mode: Some("full-access".into()),
        network: None,
        justification: Some("write the user's ~/.bashrc as asked".into()),
        note: None,
    };
    let unexplained = RightsRequest {
        justification: None,
        ..asked.clone()
    };
    let args = json!({"argv": ["python3"], "sandbox": "full-access"});
    let allow_all = ApprovalRule {
        tool: "run_command".into(),
        when: None,
        allow: true,
    };
    let deny_all = ApprovalRule {
        allow: false,
        ..allow_all.clone()
    };
    let remembered = ApprovalPolicy::new(ApprovalMode::Confirm);
    remembered.session_approvals().allow("run_command");
    // (case, policy, request, verdict: Some(true) ask, Some(false) refuse naming `why`)
    let cases: Vec<(&str, ApprovalPolicy, &RightsRequest, Option<&str>)> = vec![
        (
            "auto",
            ApprovalPolicy::new(ApprovalMode::Auto),
            &asked,
            None,
        ),
        (
            "confirm",
            ApprovalPolicy::new(ApprovalMode::Confirm),
            &asked,
            None,
        ),
        (
            "an allow rule",
            ApprovalPolicy::new(ApprovalMode::Auto).with_rule(allow_all.clone()),
            &asked,
            None,
        ),
        ("an always answer", remembered, &asked, None),
        (
            "a deny rule",
            ApprovalPolicy::new(ApprovalMode::Auto).with_rule(deny_all),
            &asked,
            Some("rules deny"),
        ),
        (
            "read-only",
            ApprovalPolicy::new(ApprovalMode::ReadOnly),
            &asked,
            Some("read-only"),
        ),
        (
            "no justification",
            ApprovalPolicy::new(ApprovalMode::Auto),
            &unexplained,
            Some("without a justification"),
        ),
    ];
    for (case, policy, rights, refused) in cases {
        let verdict = policy.verdict_for("run_command", true, Some(rights), &args);
        match refused {
            None => assert_eq!(verdict, Verdict::Ask, "{case}"),
            Some(why) => assert!(
                matches!(&verdict, Verdict::Refuse(text) if text.contains(why)),
                "{case}: {verdict:?}"
            ),
        }
        // The same call without the request is decided as before.
        assert_eq!(
            policy.verdict_for("run_command", true, None, &args),
            policy.verdict("run_command", true, &args),
            "{case}"
        );
    }
}

#[test]
fn an_approval_of_more_rights_is_for_one_call_and_a_denial_says_so() {
    let asked = RightsRequest {
        mode: None,
        network: Some(true),
        justification: Some("fetch the crates".into()),
        note: None,
    };
    let mut policy = ApprovalPolicy::new(ApprovalMode::Confirm);
    let always = ApprovalDecision::AllowSession;
    assert_eq!(
        policy.apply_for("run_command", Some(&asked), &always),
        Ok(())
    );
    assert!(policy.session_approvals().list().is_empty());
    let nobody = ApprovalDecision::Deny {
        reason: Some("nobody can approve tool calls in this run".into()),
    };
    let denied = policy
        .apply_for("run_command", Some(&asked), &nobody)
        .unwrap_err();
    for part in [
        "network on",
        "only a person can grant",
        "nobody can approve",
    ] {
        assert!(denied.contains(part), "{part}: {denied}");
    }
    // Without a request, "always" is remembered as before.
    assert_eq!(policy.apply_for("run_command", None, &always), Ok(()));
    assert_eq!(policy.session_approvals().list(), ["run_command"]);
}
