//! Load-time validation refuses broken profiles with their file and the body key, and
//! lets good ones through.

use std::path::Path;

use qore_agents::profile::ProfileFile;
use qore_agents::providers::Providers;
use qore_agents::validate::validate_agent;
use qore_agents::{AgentError, Catalog, Partials};

/// Validate the profile `text` (which may extend bundled ones).
fn validate(text: &str) -> Result<(), AgentError> {
    let catalog = Catalog::with_user_files(vec![ProfileFile::parse(
        Path::new("/cfg/agents/mine.toml"),
        text,
    )
    .unwrap()]);
    assert!(catalog.errors.is_empty(), "{:?}", catalog.errors);
    let agent = catalog.get("mine").expect("the profile loads");
    validate_agent(agent, &Providers::load(None), &Partials::default())
}

fn body_error(text: &str) -> (String, String) {
    match validate(text) {
        Err(AgentError::Body { file, key, message }) => {
            assert_eq!(file, Path::new("/cfg/agents/mine.toml"));
            (key, message)
        }
        other => panic!("expected a body error, got {other:?}"),
    }
}

#[test]
fn a_good_variant_is_two_lines() {
    validate("name = \"mine\"\nextends = \"claude-chat\"\n[body]\ntemperature = 0.2\n").unwrap();
}

#[test]
fn a_missing_comma_in_a_template_is_refused_with_its_key() {
    let (key, message) = body_error(
        r#"name = "mine"
extends = "openai-chat"
[body]
messages = "[ {% for m in ctx.history %}{\"role\": {{ tojson(m.role) }} \"content\": {{ tojson(m.content) }}},{% endfor %} ]"
"#,
    );
    assert_eq!(key, "messages");
    assert!(message.contains("not valid JSON"), "{message}");
}

#[test]
fn unescaped_text_breaks_on_the_hostile_conversation() {
    // `{{ m.content }}` without tojson: fine for "hello", broken by quotes and newlines.
    let (key, message) = body_error(
        r#"name = "mine"
extends = "openai-chat"
[body]
messages = "[ {% for m in ctx.history %}{\"role\": \"user\", \"content\": \"{{ m.content }}\"},{% endfor %} ]"
"#,
    );
    assert_eq!(key, "messages");
    assert!(message.contains("not valid JSON"), "{message}");
}

#[test]
fn json_the_provider_would_refuse_names_the_path() {
    // Tool results dropped: the calls are left unanswered.
    let (key, message) = body_error(
        r#"name = "mine"
extends = "openai-chat"
[body]
messages = "[ {% for m in ctx.history %}{\"role\": {{ tojson(m.role) }}, \"content\": {{ tojson(m.content) }}{% if m.role == 'assistant' %}, \"tool_calls\": [{% for b in filter_by_type(m.content_blocks, 'tool_use') %}{\"id\": {{ tojson(b.id) }}, \"type\": \"function\", \"function\": {\"name\": {{ tojson(b.name) }}, \"arguments\": {{ tojson(b.arguments) }}}},{% endfor %}]{% endif %}},{% endfor %} ]"
"#,
    );
    assert_eq!(key, "messages");
    assert!(message.contains("has no result"), "{message}");
    // Anthropic: a system role inside messages.
    let (key, message) = body_error(
        r#"name = "mine"
extends = "claude-chat"
[body]
messages = "[{\"role\": \"system\", \"content\": \"x\"}, {% include 'anthropic_messages.jinja' %}]"
"#,
    );
    assert_eq!(key, "messages[0].role");
    assert!(message.contains("anthropic API would refuse"), "{message}");
}

#[test]
fn a_typo_a_bad_include_and_a_bad_provider_are_refused() {
    let (key, message) = body_error(
        "name = \"mine\"\nextends = \"openai-chat\"\n[body]\nmessages = \"[{% include 'partials/openai_mesages.jinja' %}]\"\n",
    );
    assert_eq!(key, "messages");
    assert!(message.contains("not found"), "{message}");
    let (_, message) = body_error(
        "name = \"mine\"\nextends = \"openai-chat\"\n[body]\nmessages = \"[{% include '../../etc/passwd' %}]\"\n",
    );
    assert!(message.contains("refused"), "{message}");
    let (key, message) = body_error(
        "name = \"mine\"\nextends = \"openai-chat\"\n[body]\nmessages = \"[{% for m in ctx.histroy %}{% endfor %}]\"\n",
    );
    assert_eq!(key, "messages");
    assert!(message.contains("undefined"), "{message}");
    let err =
        validate("name = \"mine\"\nextends = \"openai-chat\"\nprovider = \"nope\"\n").unwrap_err();
    assert!(
        err.to_string().contains("unknown provider \"nope\""),
        "{err}"
    );
}

#[test]
fn validate_renders_the_system_prompt_and_an_unknown_role_names_the_file_and_line() {
    let dir = std::env::temp_dir().join(format!("qore-validate-role-{}", std::process::id()));
    let agents = dir.join("agents");
    std::fs::create_dir_all(&agents).unwrap();
    let base = "abstract = true\nname = \"base\"\nextends = \"claude-chat\"\n\nsystem_prompt = \"{{ agent_role('developr') }}\"\n";
    std::fs::write(agents.join("base.toml"), base).unwrap();
    std::fs::write(
        agents.join("child.toml"),
        "name = \"child\"\nextends = \"base\"\n",
    )
    .unwrap();
    let config = qore_agents::config::Config::load(Some(&dir));
    let child = config.catalog.get("child").unwrap();
    let err = config.validate(child).unwrap_err().to_string();
    let want = format!("{}:5: system_prompt:", agents.join("base.toml").display());
    assert!(err.starts_with(&want), "{err}");
    assert!(err.contains("unknown role \"developr\""), "{err}");
    assert!(config
        .validate(config.catalog.get("claude-chat").unwrap())
        .is_ok());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The open files a completion carries (`ctx.extra`) are hostile too: a template that
/// writes them unescaped breaks, one that writes their text where a name goes is refused
/// with the path, and the bundled shape (`tojson(ctx.extra)`) passes.
#[test]
fn open_files_are_rendered_and_checked() {
    let cases = [
        (
            r#"[{% for f in ctx.extra %}{\"filename\": \"{{ f.filename }}\", \"text\": \"x\"},{% endfor %}]"#,
            Some(("input_extra", "not valid JSON")),
        ),
        (
            r#"[{% for f in ctx.extra %}{\"filename\": 1, \"text\": {{ tojson(f.text) }}},{% endfor %}]"#,
            Some(("input_extra[0].filename", "must be a string")),
        ),
        (r#"{{ tojson(ctx.extra) }}"#, None),
    ];
    for (template, want) in cases {
        let text = format!(
            "name = \"mine\"\nextends = \"llamacpp-completion\"\n[body]\ninput_extra = \"{template}\"\n"
        );
        match want {
            None => validate(&text).unwrap(),
            Some((want_key, words)) => {
                let (key, message) = body_error(&text);
                assert_eq!(key, want_key, "{template}: {message}");
                assert!(message.contains(words), "{template}: {message}");
            }
        }
    }
}
