use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;

use qore_core::{CancellationToken, ToolFuture, ToolOutput};
use serde_json::json;

use super::*;

struct Named(ToolSpec);

impl Tool for Named {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    fn call(&self, _input: serde_json::Value, _cancel: CancellationToken) -> ToolFuture {
        Box::pin(async { ToolOutput::text("ok") })
    }
}

fn tool(name: &str) -> Arc<dyn Tool> {
    Arc::new(Named(ToolSpec {
        name: name.into(),
        description: String::new(),
        input_schema: json!({"type": "object"}),
    }))
}

/// A source holding a list that the test changes: `pending` is what the next fetch finds.
#[derive(Default)]
struct Listed {
    version: Mutex<u64>,
    fetched: Mutex<(u64, Vec<&'static str>)>,
    pending: Mutex<Vec<&'static str>>,
}

impl Listed {
    fn change(&self, names: &[&'static str]) {
        *self.pending.lock().unwrap() = names.to_vec();
        *self.version.lock().unwrap() += 1;
    }
}

impl ToolSource for Listed {
    fn snapshot(&self) -> (u64, Vec<Arc<dyn Tool>>) {
        let (version, names) = self.fetched.lock().unwrap().clone();
        (version, names.into_iter().map(tool).collect())
    }
    fn version(&self) -> u64 {
        *self.version.lock().unwrap()
    }
    fn refetch(&self) -> Pin<Box<dyn Future<Output = ()> + Send + '_>> {
        Box::pin(async {
            let names = self.pending.lock().unwrap().clone();
            *self.fetched.lock().unwrap() = (self.version(), names);
        })
    }
}

fn names(registry: &ToolRegistry) -> Vec<&str> {
    registry.specs().iter().map(|s| s.name.as_str()).collect()
}

#[tokio::test]
async fn a_source_that_changed_swaps_its_tools_on_refresh() {
    let source = Arc::new(Listed::default());
    source.change(&["mcp__a", "mcp__b"]);
    source.refetch().await;
    let mut registry = ToolRegistry::new();
    registry.add(tool("read_file")).unwrap();
    assert!(registry.add_source(source.clone()).is_empty());
    registry.add(tool("skill")).unwrap();
    // (the source's new list or None: unchanged, what the registry offers after refresh,
    // how many tools it refused)
    type Case<'a> = (Option<&'a [&'static str]>, &'a [&'a str], usize);
    let cases: &[Case] = &[
        (None, &["read_file", "mcp__a", "mcp__b", "skill"], 0),
        (
            Some(&["mcp__b", "mcp__c"]),
            &["read_file", "skill", "mcp__b", "mcp__c"],
            0,
        ),
        (None, &["read_file", "skill", "mcp__b", "mcp__c"], 0),
        (
            Some(&["skill", "mcp__d"]),
            &["read_file", "skill", "mcp__d"],
            1,
        ),
        (Some(&[]), &["read_file", "skill"], 0),
    ];
    for (change, expected, refused) in cases {
        if let Some(list) = change {
            source.change(list);
        }
        let errors = registry.refresh().await;
        assert_eq!(names(&registry), *expected, "after {change:?}");
        assert_eq!(errors.len(), *refused, "{errors:?}");
        for name in *expected {
            assert_eq!(registry.get(name).unwrap().tool.spec().name, *name);
        }
    }
    assert!(registry.get("mcp__a").is_none());
}
