use super::*;

fn file(name: &str, text: &str) -> ProfileFile {
    ProfileFile::parse(Path::new(&format!("agents/{name}.toml")), text).expect(name)
}

fn catalog(files: &[(&str, &str)]) -> Catalog {
    Catalog::from_files(files.iter().map(|(n, t)| (file(n, t), false)).collect())
}

#[test]
fn extends_deep_merges_tables_and_replaces_scalars_and_arrays() {
    let c = catalog(&[
        (
            "base",
            r#"
name = "base"
abstract = true
hidden = true
tags = ["a", "b"]
enable_tools = true
model = "m1"
[body]
max_tokens = 10
temperature = 0.5
[body.thinking]
type = "enabled"
budget_tokens = 100
"#,
        ),
        (
            "child",
            r#"
name = "child"
extends = "base"
tags = ["c"]
model = "m2"
[body]
temperature = 1
[body.thinking]
budget_tokens = 200
"#,
        ),
    ]);
    assert!(c.errors.is_empty(), "{:?}", c.errors);
    let child = c.get("child").unwrap();
    assert_eq!(child.tags, ["c"]);
    assert_eq!(child.model.as_deref(), Some("m2"));
    assert!(child.enable_tools, "inherited");
    assert!(
        !child.is_abstract && !child.hidden,
        "abstract and hidden are not inherited"
    );
    let body = toml::Value::Table(child.body.clone().unwrap());
    assert_eq!(body["max_tokens"].as_integer(), Some(10));
    assert_eq!(body["temperature"].as_integer(), Some(1));
    assert_eq!(body["thinking"]["type"].as_str(), Some("enabled"));
    assert_eq!(body["thinking"]["budget_tokens"].as_integer(), Some(200));
    assert_eq!(
        child.sources,
        [
            PathBuf::from("agents/child.toml"),
            PathBuf::from("agents/base.toml")
        ]
    );
    assert!(c.get("base").unwrap().is_abstract);
}

#[test]
fn unknown_parents_cycles_and_deep_chains_are_errors_at_the_extends_line() {
    let c = catalog(&[
        ("orphan", "name = \"orphan\"\n\nextends = \"nobody\"\n"),
        ("a", "name = \"a\"\nextends = \"b\"\n"),
        ("b", "name = \"b\"\nextends = \"a\"\n"),
        ("fine", "name = \"fine\"\n"),
    ]);
    let errors: Vec<String> = c.errors.iter().map(|e| e.to_string()).collect();
    assert_eq!(errors.len(), 3, "{errors:#?}");
    assert!(
        errors
            .iter()
            .any(|e| e.starts_with("agents/b.toml:2: extends cycle: b -> a -> b")),
        "{errors:#?}"
    );
    assert!(
        errors
            .iter()
            .any(|e| e.starts_with("agents/orphan.toml:3: extends unknown profile \"nobody\"")),
        "{errors:#?}"
    );
    assert!(
        errors
            .iter()
            .any(|e| e.starts_with("agents/a.toml:2: extends cycle: a -> b -> a")),
        "{errors:#?}"
    );
    assert!(c.get("fine").is_some(), "the others still load");
    assert!(c.get("a").is_none() && c.get("orphan").is_none());

    let mut files: Vec<(String, String)> = vec![("p0".into(), "name = \"p0\"\n".into())];
    for n in 1..=MAX_DEPTH + 1 {
        files.push((
            format!("p{n}"),
            format!("name = \"p{n}\"\nextends = \"p{}\"\n", n - 1),
        ));
    }
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let c = catalog(&refs);
    assert!(c.get(&format!("p{MAX_DEPTH}")).is_some(), "{:?}", c.errors);
    let deepest = format!("p{}", MAX_DEPTH + 1);
    assert!(c.get(&deepest).is_none());
    assert!(
        c.errors[0].to_string().contains("deeper than 32"),
        "{:?}",
        c.errors
    );
}

#[test]
fn a_user_profile_replaces_a_bundled_one_and_same_root_duplicates_are_errors() {
    let bundled = file("chat", "name = \"chat\"\nmodel = \"bundled\"\n");
    let user = ProfileFile::parse(
        Path::new("/home/u/agents/my_chat.toml"),
        "name = \"chat\"\nmodel = \"mine\"\n",
    )
    .unwrap();
    let c = Catalog::from_files(vec![(bundled, true), (user, false)]);
    let chat = c.get("chat").unwrap();
    assert_eq!(chat.model.as_deref(), Some("mine"));
    assert_eq!(
        chat.replaces.as_deref(),
        Some(Path::new("agents/chat.toml"))
    );

    let c = catalog(&[("one", "name = \"x\"\n"), ("two", "name = \"x\"\n")]);
    assert_eq!(c.errors.len(), 1);
    let err = c.errors[0].to_string();
    assert!(err.contains("already used by agents/one.toml"), "{err}");
}

#[test]
fn a_profile_without_a_name_is_named_after_its_file() {
    let c = catalog(&[("nameless", "model = \"m\"\n")]);
    assert_eq!(c.get("nameless").unwrap().model.as_deref(), Some("m"));
}

#[test]
fn extends_and_get_take_a_loosely_written_name_only_when_one_profile_has_it() {
    let c = catalog(&[
        ("openai_base_chat", "abstract = true\nmodel = \"m\"\n"),
        (
            "child",
            "name = \"Child Chat\"\nextends = \"OpenAI Base Chat\"\n",
        ),
        ("a_b", "model = \"1\"\n"),
        ("a-b", "model = \"2\"\n"),
        ("ambiguous", "extends = \"A B\"\n"),
    ]);
    assert_eq!(c.get("Child Chat").unwrap().model.as_deref(), Some("m"));
    assert_eq!(c.get("child_chat").unwrap().name, "Child Chat");
    assert!(c.get("A B").is_none(), "two profiles are loosely `A B`");
    let errors: Vec<String> = c.errors.iter().map(ToString::to_string).collect();
    assert_eq!(
        errors,
        ["agents/ambiguous.toml:1: extends unknown profile \"A B\""]
    );
}

#[test]
fn cache_prompt_alone_marks_the_whole_stable_prefix() {
    let c = catalog(&[
        ("all", "cache_prompt = true\n"),
        (
            "some",
            "cache_prompt = true\ncache_breakpoints = [\"tools\"]\n",
        ),
        ("none", "cache_ttl = \"5m\"\n"),
    ]);
    let marks = |n: &str| c.get(n).unwrap().cache_breakpoints.clone();
    assert!(c.get("all").unwrap().badges().is_empty());
    assert_eq!(marks("all"), CacheBreakpoint::ALL);
    assert_eq!(marks("some"), [CacheBreakpoint::Tools]);
    assert!(marks("none").is_empty());
}

#[test]
fn badges_show_thinking_and_tags() {
    let c = catalog(&[
        ("t", "enable_thinking = true\ntags = [\"chat\", \"fast\"]\n"),
        ("plain", "tags = [\"completion\"]\n"),
    ]);
    assert_eq!(
        c.get("t").unwrap().badges(),
        ["thinking", "tags: chat fast"]
    );
    assert_eq!(c.get("plain").unwrap().badges(), ["tags: completion"]);
}

#[test]
fn context_window_is_read_and_inherited() {
    let c = catalog(&[
        ("base", "abstract = true\ncontext_window = 32768\n"),
        ("child", "extends = \"base\"\n"),
        ("own", "extends = \"base\"\ncontext_window = 8192\n"),
        ("plain", "model = \"m\"\n"),
    ]);
    let window = |n: &str| c.get(n).unwrap().context_window;
    assert_eq!(window("child"), Some(32768));
    assert_eq!(window("own"), Some(8192));
    assert_eq!(window("plain"), None);
    let wrong = ProfileFile::parse(Path::new("agents/w.toml"), "context_window = \"big\"\n");
    assert!(wrong.is_err(), "a window that is not a number is refused");
}
