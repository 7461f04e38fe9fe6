use serde_json::{json, Value};

use super::*;

fn compile(toml_text: &str) -> Result<BodyTemplate, RenderError> {
    let table: toml::Table = toml::from_str(toml_text).expect("test TOML");
    BodyTemplate::compile(&table, Partials::default())
}

fn render(toml_text: &str, ctx: Value) -> Result<String, RenderError> {
    let body = compile(toml_text)?;
    let bytes = body.render(&ctx)?;
    Ok(String::from_utf8(bytes).expect("UTF-8"))
}

#[test]
fn literals_pass_through_in_the_profiles_order() {
    let out = render(
        "stream = true\nmodel = \"m\"\nmax_tokens = 10\ntemperature = 0.5\n[thinking]\ntype = \"enabled\"\nbudget = 5\n[extra]\nlist = [1, \"two\"]\n",
        json!({}),
    )
    .unwrap();
    assert_eq!(
        out,
        r#"{"stream":true,"model":"m","max_tokens":10,"temperature":0.5,"thinking":{"type":"enabled","budget":5},"extra":{"list":[1,"two"]}}"#
    );
}

#[test]
fn a_template_is_spliced_as_json_and_partial_style_commas_are_fine() {
    let out = render(
        r#"messages = """[ {% for m in ctx.history %}{"role": {{ tojson(m.role) }}, "content": {{ tojson(m.content) }}},
{% endfor %} ]""""#,
        json!({"history": [{"role": "user", "content": "a \"quoted\" <b>\n"}, {"role": "assistant", "content": "ok"}]}),
    )
    .unwrap();
    let body: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        body,
        json!({"messages": [{"role": "user", "content": "a \"quoted\" <b>\n"}, {"role": "assistant", "content": "ok"}]})
    );
    assert!(out.contains("<b>"), "tojson does not HTML-escape: {out}");
}

#[test]
fn an_empty_render_drops_the_key_or_the_element() {
    let toml_text = r#"
first = "{% if existsIn(ctx, 'system_prompt') %}{{ tojson(ctx.system_prompt) }}{% endif %}"
stream = true
list = ["{{ '' }}", 1, "{% if false %}2{% endif %}", 3]
"#;
    assert_eq!(
        render(toml_text, json!({})).unwrap(),
        r#"{"stream":true,"list":[1,3]}"#
    );
    assert_eq!(
        render(toml_text, json!({"system_prompt": "S"})).unwrap(),
        r#"{"first":"S","stream":true,"list":[1,3]}"#
    );
}

#[test]
fn invalid_json_names_the_key_and_shows_where() {
    let err = render(
        "[outer]\nmessages = \"[ {{ tojson(ctx.a) }} {{ tojson(ctx.b) }} ]\"",
        json!({"a": 1, "b": 2}),
    )
    .unwrap_err();
    assert_eq!(err.key, "outer.messages");
    assert!(err.message.contains("not valid JSON"), "{}", err.message);
    assert!(err.message.contains("1 2"), "{}", err.message);
}

#[test]
fn a_template_that_does_not_compile_is_refused_with_its_key() {
    let err = compile("[a]\nb = \"{% for x in %}\"").unwrap_err();
    assert_eq!(err.key, "a.b");
    assert!(err.message.contains("syntax"), "{}", err.message);
}

#[test]
fn includes_are_sandboxed_and_a_missing_partial_is_an_error() {
    for (name, expected) in [
        ("../../etc/passwd", "refused"),
        ("/etc/passwd", "refused"),
        ("partials/nope.jinja", "not found"),
    ] {
        let err = render(&format!("x = '{{% include \"{name}\" %}}'"), json!({})).unwrap_err();
        assert_eq!(err.key, "x");
        assert!(err.message.contains(expected), "{name}: {}", err.message);
    }
}

#[test]
fn helper_functions_behave_like_the_seeds() {
    let ctx = json!({"blocks": [{"type": "text", "text": "a"}, {"type": "tool_use", "id": "1"}],
                     "msgs": [{"role": "system"}, {"role": "user"}]});
    let out = render(
        r#"
uses = "{{ tojson(filter_by_type(ctx.blocks, 'tool_use')) }}"
n = "{{ length(filter_by_type(ctx.blocks, 'text')) }}"
kept = "{{ tojson(filter_skip_role(ctx.msgs, 'system')) }}"
has = "{{ tojson(existsIn(ctx, 'blocks')) }}"
hasnt = "{{ tojson(existsIn(ctx, 'nope')) }}"
none = "{{ length(ctx.nope) }}"
"#,
        ctx,
    )
    .unwrap();
    let body: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        body,
        json!({"uses": [{"type": "tool_use", "id": "1"}], "n": 1, "kept": [{"role": "user"}],
               "has": true, "hasnt": false, "none": 0})
    );
}

#[test]
fn a_typo_in_a_template_is_an_error_not_an_empty_field() {
    let err = render(
        r#"messages = "[{% for m in ctx.histroy %}{{ tojson(m) }},{% endfor %}]""#,
        json!({"history": []}),
    )
    .unwrap_err();
    assert_eq!(err.key, "messages");
    assert!(err.message.contains("undefined"), "{}", err.message);
}

#[test]
fn inja_spellings_from_the_seed_carry_over() {
    let out = render(
        r#"items = """[{% for b in ctx.blocks %}{% if b.type == "text" %}{"t": {{ tojson(b.text) }}}{% else if b.type == "image" %}{"i": 1}{%- else if b.type == "x" %}{"x": 1}{% else %}{"o": 1}{% endif %}{% if not loop.is_last %},{% endif %}{% endfor %}]""""#,
        json!({"blocks": [{"type": "text", "text": "a"}, {"type": "image"}, {"type": "x"}, {"type": "y"}]}),
    )
    .unwrap();
    assert_eq!(out, r#"{"items":[{"t": "a"},{"i": 1},{"x": 1},{"o": 1}]}"#);
}
