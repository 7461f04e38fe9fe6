use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use qore_core::{Tool, ToolFuture, ToolSpec};
use serde_json::json;

use super::*;
use crate::tool_loop::{ApprovalDecision, ApprovalMode};

struct Panics {
    spec: ToolSpec,
    in_future: bool,
}

impl Tool for Panics {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    fn call(&self, _: Value, _: CancellationToken) -> ToolFuture {
        if !self.in_future {
            panic!("before the future");
        }
        Box::pin(async { panic!("inside the future") })
    }
}

struct Never;

impl Approver for Never {
    fn decide<'a>(
        &'a self,
        _: &'a ApprovalRequest,
    ) -> Pin<Box<dyn Future<Output = ApprovalDecision> + Send + 'a>> {
        Box::pin(async { ApprovalDecision::Deny { reason: None } })
    }
}

#[tokio::test]
async fn a_panicking_tool_is_an_error_result() {
    let mut registry = ToolRegistry::new();
    for (name, in_future) in [("early", false), ("late", true)] {
        let spec = ToolSpec {
            name: name.into(),
            description: String::new(),
            input_schema: json!({"type": "object"}),
        };
        registry.add(Arc::new(Panics { spec, in_future })).unwrap();
    }
    let calls: Vec<ToolCall> = ["early", "late"]
        .iter()
        .enumerate()
        .map(|(i, name)| ToolCall {
            id: format!("c{i}"),
            name: (*name).into(),
            input: json!({}),
            raw_input: None,
        })
        .collect();
    let mut policy = ApprovalPolicy::new(ApprovalMode::Auto);
    let results = run_calls(
        &calls,
        &registry,
        &mut policy,
        &Never,
        &CancellationToken::new(),
    )
    .await;
    assert_eq!(results.reports.len(), 2);
    for (report, what) in results
        .reports
        .iter()
        .zip(["before the future", "inside the future"])
    {
        assert!(report.output.is_error);
        let text = report.output.text_content();
        assert!(text.contains("panicked") && text.contains(what), "{text}");
    }
}
