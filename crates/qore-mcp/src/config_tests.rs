use std::path::Path;

use super::*;

const CLAUDE_DESKTOP: &str = r#"{
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "${HOME}/Desktop"]
    },
    "github": {
      "command": "docker",
      "args": ["run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"],
      "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "${GH_TOKEN}"}
    }
  },
  "globalShortcut": "Ctrl+Space"
}"#;

const CLAUDE_CODE: &str = r#"{"mcpServers": {
  "api": {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${API_KEY:-none}"}},
  "local": {"type": "stdio", "command": "python3", "args": ["server.py"], "cwd": "/srv", "trusted": true,
            "enabled_tools": ["a", "b"], "disabled_tools": ["b"], "tool_timeout_sec": 5}
}}"#;

const CODEX: &str = r#"
model = "o4"

[mcp_servers.docs]
command = "docs-server"
args = ["--port", "0"]
env = { "API_KEY" = "${GH_TOKEN}" }
env_vars = ["PATH"]
startup_timeout_sec = 20
tool_timeout_sec = 1.5
enabled = false
required = true

[mcp_servers.figma]
url = "https://mcp.figma.com/mcp"
bearer_token_env_var = "FIGMA_OAUTH_TOKEN"
http_headers = { "X-Figma-Region" = "us-east-1" }
env_http_headers = { "X-Token" = "GH_TOKEN" }
"#;

fn lookup(name: &str) -> Option<String> {
    match name {
        "HOME" => Some("/home/me".into()),
        "GH_TOKEN" => Some("ghp_1".into()),
        _ => None,
    }
}

fn load(files: &[(&str, &str)]) -> (tempfile::TempDir, McpConfig) {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config");
    let project = dir.path().join("project");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let loaded = McpConfig::load_with(Some(&config), Some(&project), &lookup);
    (dir, loaded)
}

/// Command, args, env and cwd of a stdio server.
type Stdio<'a> = (
    &'a str,
    Vec<&'a str>,
    Vec<(&'a str, &'a str)>,
    Option<&'a Path>,
);

fn stdio(s: &ServerConfig) -> Stdio<'_> {
    match &s.transport {
        Transport::Stdio {
            command,
            args,
            env,
            cwd,
        } => (
            command,
            args.iter().map(String::as_str).collect(),
            env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect(),
            cwd.as_deref(),
        ),
        other => panic!("{}: not stdio: {other:?}", s.name),
    }
}

#[test]
fn peers_configs_load_unchanged() {
    let (_dir, c) = load(&[
        ("config/mcp.json", CLAUDE_DESKTOP),
        ("project/.mcp.json", CLAUDE_CODE),
        ("config/config.toml", CODEX),
    ]);
    assert!(c.errors.is_empty(), "{:?}", c.errors);
    let names: Vec<&str> = c.servers.iter().map(|s| s.name.as_str()).collect();
    // config.toml first, then mcp.json, then the project's .mcp.json.
    assert_eq!(
        names,
        ["docs", "figma", "filesystem", "github", "api", "local"]
    );

    let fs = c.get("filesystem").unwrap();
    let (cmd, args, _, _) = stdio(fs);
    assert_eq!((cmd, args[2]), ("npx", "/home/me/Desktop"));
    assert!(fs.enabled && !fs.trusted && !fs.project);
    assert_eq!(fs.startup_timeout, DEFAULT_STARTUP_TIMEOUT);
    let (_, _, env, _) = stdio(c.get("github").unwrap());
    assert_eq!(env, [("GITHUB_PERSONAL_ACCESS_TOKEN", "ghp_1")]);

    let docs = c.get("docs").unwrap();
    let (cmd, args, env, _) = stdio(docs);
    assert_eq!(
        (cmd, args, env),
        (
            "docs-server",
            vec!["--port", "0"],
            vec![("API_KEY", "ghp_1")]
        )
    );
    assert!(!docs.enabled && docs.required);
    assert_eq!(docs.startup_timeout, Duration::from_secs(20));
    assert_eq!(docs.tool_timeout, Duration::from_millis(1500));

    let figma = c.get("figma").unwrap();
    let Transport::Http {
        url,
        headers,
        bearer_token_env_var,
    } = &figma.transport
    else {
        panic!("figma is HTTP")
    };
    assert_eq!(url, "https://mcp.figma.com/mcp");
    assert_eq!(bearer_token_env_var.as_deref(), Some("FIGMA_OAUTH_TOKEN"));
    assert_eq!(
        headers.get("X-Figma-Region").map(String::as_str),
        Some("us-east-1")
    );
    assert_eq!(headers.get("X-Token").map(String::as_str), Some("ghp_1"));

    let api = c.get("api").unwrap();
    let Transport::Http { headers, .. } = &api.transport else {
        panic!("api is HTTP")
    };
    assert_eq!(headers["Authorization"], "Bearer none");
    assert!(api.project);

    let local = c.get("local").unwrap();
    let (_, _, _, cwd) = stdio(local);
    assert_eq!(cwd, Some(Path::new("/srv")));
    assert!(local.trusted && local.project);
    assert_eq!(local.tool_timeout, Duration::from_secs(5));
    assert!(local.offers("a") && !local.offers("b") && !local.offers("c"));
    assert!(fs.offers("anything"));
}

#[test]
fn bad_files_and_entries_are_errors_naming_them() {
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "config/config.toml",
            "[mcp_servers.x]\ncommand = \n",
            &["config.toml", "line 2"],
        ),
        (
            "config/config.toml",
            "[mcp_servers.x]\ncommand = 3\n",
            &["config.toml", "line 2"],
        ),
        (
            "config/config.toml",
            "model = \"o4\"\nmcp_servers = 3\n",
            &["config.toml", "line 2", "[mcp_servers]"],
        ),
        (
            "config/mcp.json",
            "{\"mcpServers\": {\"x\": {\"command\": \"a\",}}}",
            &["mcp.json", "line 1"],
        ),
        (
            "config/mcp.json",
            r#"{"mcpServers": {"x": {}}}"#,
            &["mcp.json", "'x'", "needs `command`"],
        ),
        (
            "config/mcp.json",
            r#"{"mcpServers": {"x": {"command": "a", "url": "b"}}}"#,
            &["not both"],
        ),
        (
            "config/mcp.json",
            r#"{"mcpServers": {"x": {"type": "sse", "url": "b"}}}"#,
            &["SSE"],
        ),
        (
            "config/mcp.json",
            r#"{"mcpServers": {"x": {"type": "ws", "url": "b"}}}"#,
            &["unknown type 'ws'"],
        ),
        (
            "config/mcp.json",
            r#"{"mcpServers": {"x": {"command": "${NOPE}"}}}"#,
            &["'x'", "NOPE is not set"],
        ),
        (
            "config/mcp.json",
            r#"{"mcpServers": {"x": {"command": "a", "tool_timeout_sec": 0}}}"#,
            &["tool_timeout_sec must be a positive"],
        ),
        (
            "project/.mcp.json",
            r#"{"mcpServers": []}"#,
            &[".mcp.json", "invalid type"],
        ),
    ];
    for (file, text, wants) in cases {
        let (_dir, c) = load(&[(file, text)]);
        assert_eq!(c.errors.len(), 1, "{file}: {text}: {:?}", c.errors);
        let message = c.errors[0].to_string();
        for want in *wants {
            assert!(message.contains(want), "{text}: {message:?} lacks {want:?}");
        }
    }
}

#[test]
fn later_files_replace_servers_and_unknown_keys_warn() {
    let (_dir, c) = load(&[
        (
            "config/mcp.json",
            r#"{"mcpServers": {"x": {"command": "user", "colour": 1}, "ok": {"command": "y"}}}"#,
        ),
        (
            "project/.mcp.json",
            r#"{"mcpServers": {"x": {"command": "project"}, "bad": {}}}"#,
        ),
    ]);
    assert_eq!(c.servers.len(), 2);
    assert_eq!(stdio(c.get("x").unwrap()).0, "project");
    assert_eq!(c.errors.len(), 1, "the bad entry only");
    let warnings = c.warnings.join("\n");
    assert!(warnings.contains("unknown key 'colour'"), "{warnings}");
    assert!(warnings.contains("replaces the one in"), "{warnings}");
}

/// Each per-server key, spelled the same in a `mcpServers` JSON entry and a
/// `[mcp_servers.NAME]` TOML table, means the same; each one changes the server it is in.
#[test]
fn every_key_is_spelled_the_same_in_json_and_toml() {
    // (key, its value in JSON, in TOML)
    let cases: &[(&str, &str, &str)] = &[
        ("enabled", "false", "false"),
        ("startup_timeout_sec", "7", "7"),
        ("tool_timeout_sec", "2.5", "2.5"),
        ("enabled_tools", r#"["a"]"#, r#"["a"]"#),
        ("disabled_tools", r#"["b"]"#, r#"["b"]"#),
        ("trusted", "true", "true"),
        ("env", r#"{"K": "${GH_TOKEN}"}"#, r#"{ K = "${GH_TOKEN}" }"#),
        ("cwd", r#""/srv""#, r#""/srv""#),
    ];
    let server = |json: Option<&str>, toml: Option<&str>| {
        let mut files = Vec::new();
        let (json_text, toml_text);
        if let Some(extra) = json {
            json_text = format!(r#"{{"mcpServers": {{"s": {{"command": "c"{extra}}}}}}}"#);
            files.push(("config/mcp.json", json_text.as_str()));
        }
        if let Some(extra) = toml {
            toml_text = format!("[mcp_servers.s]\ncommand = \"c\"\n{extra}");
            files.push(("config/config.toml", toml_text.as_str()));
        }
        let (_dir, mut c) = load(&files);
        assert!(c.errors.is_empty() && c.warnings.is_empty(), "{c:?}");
        let mut s = c.servers.remove(0);
        s.source = PathBuf::new();
        s
    };
    let plain = server(Some(""), None);
    for (key, json, toml) in cases {
        let from_json = server(Some(&format!(r#", "{key}": {json}"#)), None);
        let from_toml = server(None, Some(&format!("{key} = {toml}\n")));
        assert_eq!(from_json, from_toml, "{key}");
        assert_ne!(from_json, plain, "{key} had no effect");
    }
}
