//! Real wire: `qore lsp` completing with the bundled `local-completion` agent against
//! llama.cpp's own `/infill` (scripts/fim-model.sh's SmolLM2 with FIM token ids, started here
//! when needed) behind a recording proxy. The model was not trained for FIM: the reply's
//! shape is checked, never its words; the request must carry the edited document and the
//! other open document as `input_extra`.

#[path = "cli_lsp_support/mod.rs"]
mod support;

use serde_json::json;
use support::Editor;

#[tokio::test]
async fn inline_completion_on_the_local_fim_server_sends_open_documents() {
    let (proxy, proxy_port) = qore_testkit::fim_model::proxied().await;
    let options = json!({"completion": {"debounceMs": 0, "agent": "local-completion"}});
    let env = [("QORE_LOCAL_PORT", proxy_port.as_str())];
    let mut editor = Editor::start_in_env(vec![], options, &[], &env).await;
    editor
        .open("util.py", "def sub(a, b):\n    return a - b\n")
        .await;
    let uri = editor.open("add.py", "def add(a, b):\n    return \n").await;
    let reply = editor.inline(&uri, 1, 11).await;
    let items = reply["result"]["items"]
        .as_array()
        .expect("a list of items");
    assert!(items.len() <= 1, "{reply}");
    if let Some(item) = items.first() {
        assert!(
            item["insertText"].as_str().is_some_and(|t| !t.is_empty()),
            "{reply}"
        );
        assert_eq!(
            item["range"]["start"],
            json!({"line": 1, "character": 11}),
            "{reply}"
        );
    }
    // What reached /infill: the prefix and the other open document's name, per request.
    let infills: Vec<(String, String)> = (proxy.requests().iter())
        .filter(|r| r.path == "/infill")
        .filter_map(|r| r.json())
        .map(|body| {
            let text = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_owned();
            (
                text(&body["input_prefix"]),
                text(&body["input_extra"][0]["filename"]),
            )
        })
        .collect();
    assert_eq!(infills.len(), 1, "{infills:?}");
    assert_eq!(infills[0].0, "def add(a, b):\n    return ", "{infills:?}");
    assert!(infills[0].1.ends_with("util.py"), "{infills:?}");
    assert_eq!(editor.client.shutdown().await, Some(0));
}
