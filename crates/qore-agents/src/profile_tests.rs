use super::*;

fn parse(text: &str) -> Result<ProfileFile, AgentError> {
    ProfileFile::parse(Path::new("agents/test.toml"), text)
}

#[test]
fn a_toml_error_names_the_file_line_and_column() {
    let err = parse("name = \"a\"\nmodel = \n").unwrap_err();
    match &err {
        AgentError::Toml { file, line, .. } => {
            assert_eq!(file, Path::new("agents/test.toml"));
            assert_eq!(*line, 2);
        }
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().starts_with("agents/test.toml:2:"), "{err}");
}

#[test]
fn a_field_of_the_wrong_type_names_its_line() {
    let err = parse("name = \"a\"\n\nenable_tools = \"yes\"\n").unwrap_err();
    let AgentError::Toml { line, message, .. } = &err else {
        panic!("{err:?}");
    };
    assert_eq!(*line, 3, "{err}");
    assert!(message.contains("bool"), "{message}");
    let err = parse("tool_protocol = \"smoke\"\n").unwrap_err();
    assert!(err.to_string().contains("native"), "{err}");
}

#[test]
fn unknown_keys_are_warnings_with_their_line_and_a_suggestion() {
    let file = parse(
        "name = \"a\"\nenable_tool = true\ncolour = 3\n[match]\nfile_pattern = [\"*.rs\"]\n[body]\nanything = 1\n",
    )
    .unwrap();
    let warnings: Vec<String> = file.warnings.iter().map(|w| w.to_string()).collect();
    assert_eq!(warnings.len(), 3, "{warnings:#?}");
    assert!(warnings[0].starts_with("agents/test.toml:2: unknown key `enable_tool`"));
    assert!(
        warnings[0].contains("did you mean `enable_tools`"),
        "{}",
        warnings[0]
    );
    assert!(warnings[1].starts_with("agents/test.toml:3: unknown key `colour`"));
    assert!(!warnings[1].contains("did you mean"), "{}", warnings[1]);
    assert!(warnings[2].starts_with("agents/test.toml:5: unknown key `match.file_pattern`"));
    assert!(warnings[2].contains("`file_patterns`"));
    assert_eq!(file.line_of("body"), Some(6));
    assert_eq!(file.line_of("name"), Some(1));
}

#[test]
fn every_field_reads() {
    let file = parse(
        r#"
schema_version = 1
name = "n"
description = "d"
provider = "openai"
model = "gpt"
endpoint = "/models/${MODEL}:x"
system_prompt = "s"
tags = ["a"]
enable_tools = true
tool_protocol = "text"
enable_thinking = true
cache_prompt = true
cache_ttl = "1h"
cache_breakpoints = ["system", "tools", "last_user_message"]
extends = "base"
abstract = true
hidden = true
[match]
file_patterns = ["*.rs"]
project_names = ["qore"]
[body]
stream = true
"#,
    )
    .unwrap();
    assert!(file.warnings.is_empty(), "{:?}", file.warnings);
    let f = &file.fields;
    assert_eq!(f.tool_protocol, Some(ToolProtocolSetting::Text));
    assert_eq!(f.cache_ttl, Some(CacheTtl::OneHour));
    assert_eq!(f.cache_breakpoints.as_ref().map(Vec::len), Some(3));
    assert_eq!(f.is_abstract, Some(true));
    assert_eq!(
        f.matcher.as_ref().map(|m| m.file_patterns.clone()),
        Some(vec!["*.rs".to_owned()])
    );
    assert_eq!(f.body.as_ref().map(|b| b.len()), Some(1));
}

#[test]
fn the_seed_s_provider_instance_is_provider_and_both_is_an_error_at_its_line() {
    let file = parse("provider_instance = \"Claude\"\ncache_ttl = \"1h\"\n").unwrap();
    assert_eq!(file.fields.provider.as_deref(), Some("Claude"));
    assert_eq!(
        file.table["provider"].as_str(),
        Some("Claude"),
        "merges as provider"
    );
    assert!(file.warnings.is_empty(), "{:?}", file.warnings);
    let err = parse("provider = \"anthropic\"\n\nprovider_instance = \"Claude\"\n").unwrap_err();
    assert_eq!(
        err.to_string(),
        "agents/test.toml:3: give one of provider and provider_instance"
    );
    let typo = parse("provider_instanse = \"Claude\"\n").unwrap();
    let warning = typo.warnings[0].to_string();
    assert!(
        warning.contains("did you mean `provider_instance`"),
        "{warning}"
    );
}
