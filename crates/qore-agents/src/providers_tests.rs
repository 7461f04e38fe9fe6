use super::*;

#[test]
fn ollama_host_forms() {
    assert_eq!(ollama_url(None), "http://127.0.0.1:11434");
    assert_eq!(ollama_url(Some("")), "http://127.0.0.1:11434");
    assert_eq!(ollama_url(Some("box")), "http://box:11434");
    assert_eq!(ollama_url(Some("0.0.0.0:9999")), "http://0.0.0.0:9999");
    assert_eq!(ollama_url(Some("https://o.example/")), "https://o.example");
}

#[test]
fn the_well_known_vendors_are_built_in() {
    let all = built_in();
    for (name, protocol, var) in [
        ("anthropic", "anthropic", Some("ANTHROPIC_API_KEY")),
        ("openai", "openai-chat", Some("OPENAI_API_KEY")),
        ("gemini", "gemini", Some("GEMINI_API_KEY")),
        ("mistral", "mistral", Some("MISTRAL_API_KEY")),
        ("openrouter", "openai-chat", Some("OPENROUTER_API_KEY")),
        ("deepseek", "openai-chat", Some("DEEPSEEK_API_KEY")),
        ("ollama", "ollama", None),
        ("llamacpp", "llamacpp", None),
        ("lmstudio", "openai-chat", None),
        ("lmstudio-responses", "openai-responses", None),
        ("local", "llamacpp", None),
    ] {
        let i = all.iter().find(|i| i.name == name).expect(name);
        assert_eq!(i.protocol, protocol, "{name}");
        assert!(
            qore_client::protocols::by_name(&i.protocol).is_some(),
            "{name}"
        );
        let expected = var.map_or(KeySource::None, |v| KeySource::Env(v.to_owned()));
        assert_eq!(i.key, expected, "{name}");
    }
}

#[test]
fn a_file_reads_and_the_key_never_shows() {
    let dir = std::env::temp_dir().join(format!("qore-providers-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let key_file = dir.join("key");
    std::fs::write(&key_file, "sk-very-secret\n").unwrap();
    let text = format!(
        "name = \"corp\"\nprotocol = \"openai-chat\"\nurl = \"https://llm.corp/v1\"\napi_key_file = {:?}\nidle_timeout_secs = 30\n[headers]\nX-Team = \"qore\"\n[retry]\nmax_attempts = 5\n",
        key_file.to_str().unwrap()
    );
    std::fs::write(dir.join("corp.toml"), &text).unwrap();
    let providers = Providers::load(Some(&dir));
    assert!(providers.errors.is_empty(), "{:?}", providers.errors);
    let corp = providers.get("corp").unwrap();
    let config = corp.client_config(Some("/x".into())).unwrap();
    assert_eq!(config.api_key.as_deref(), Some("sk-very-secret"));
    assert_eq!(config.timeouts.idle, Duration::from_secs(30));
    assert_eq!(config.retry.max_attempts, 5);
    assert_eq!(config.headers, [("X-Team".to_owned(), "qore".to_owned())]);
    assert!(
        !format!("{corp:?}").contains("sk-very"),
        "Debug never shows the key"
    );

    std::fs::write(&key_file, "").unwrap();
    let err = corp.client_config(None).unwrap_err();
    assert_eq!(err.category, qore_core::ErrorCategory::Auth);
    assert!(err.message.contains("is empty"), "{}", err.message);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_missing_variable_names_it_and_bad_files_are_refused() {
    let i = ProviderInstance::parse(
        Path::new("p.toml"),
        "name = \"x\"\nprotocol = \"anthropic\"\nurl = \"u\"\napi_key_env = \"QORE_TEST_SURELY_UNSET_KEY\"\n",
    )
    .unwrap();
    let err = i.api_key().unwrap_err();
    assert!(
        err.message.contains("QORE_TEST_SURELY_UNSET_KEY"),
        "{}",
        err.message
    );

    let err = ProviderInstance::parse(
        Path::new("p.toml"),
        "name = \"x\"\nprotocol = \"smoke\"\nurl = \"u\"\n",
    )
    .unwrap_err();
    assert!(err.to_string().contains("unknown protocol"), "{err}");
    let err = ProviderInstance::parse(
        Path::new("p.toml"),
        "name = \"x\"\nprotocol = \"gemini\"\nurl = \"u\"\napi_key = \"sk\"\n",
    )
    .unwrap_err();
    assert!(err.to_string().starts_with("p.toml:4:"), "{err}");
    let err = ProviderInstance::parse(
        Path::new("p.toml"),
        "name = \"x\"\nprotocol = \"gemini\"\nurl = \"u\"\napi_key_env = \"A\"\napi_key_file = \"f\"\n",
    )
    .unwrap_err();
    assert!(err.to_string().contains("one of"), "{err}");
}

#[test]
fn seed_provider_files_load_and_are_found_by_display_name_or_file_name() {
    let dir = std::env::temp_dir().join(format!("qore-seed-providers-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let write = |file: &str, text: &str| std::fs::write(dir.join(file), text).unwrap();
    write("claude.toml", "name = \"Claude\"\nclient_api = \"Claude\"\nurl = \"https://api.anthropic.com\"\napi_key_ref = \"env:ANTHROPIC_API_KEY\"\n");
    write("mistral.toml", "name = \"Mistral AI\"\nclient_api = \"Mistral AI\"\nurl = \"https://api.mistral.ai\"\napi_key_ref = \"mistral key\"\n");
    write(
        "both.toml",
        "name = \"x\"\nprotocol = \"openai-chat\"\nclient_api = \"Claude\"\nurl = \"http://h\"\n",
    );
    write(
        "typo.toml",
        "name = \"y\"\nurl = \"http://h\"\nclient_api = \"Claude Code\"\n",
    );
    write("twokeys.toml", "name = \"z\"\nprotocol = \"anthropic\"\nurl = \"http://h\"\napi_key_ref = \"env:A\"\napi_key_env = \"B\"\n");
    let providers = Providers::load(Some(&dir));
    let claude = providers.get("Claude").unwrap();
    assert_eq!(
        (
            claude.protocol.as_str(),
            claude.source.ends_with("claude.toml")
        ),
        ("anthropic", true)
    );
    assert_eq!(claude.key, KeySource::Env("ANTHROPIC_API_KEY".into()));
    let mistral = providers.get("mistral").unwrap();
    assert_eq!(
        (mistral.name.as_str(), mistral.url.as_str()),
        ("Mistral AI", "https://api.mistral.ai"),
        "the file's own, found by its file name"
    );
    let keyring = KeySource::Keyring {
        service: "qore".into(),
        user: "mistral key".into(),
    };
    assert_eq!(mistral.key, keyring);
    // Built-ins by display name, exactly or loosely; a user file first.
    assert_eq!(providers.get("Google AI").unwrap().name, "gemini");
    assert_eq!(providers.get("google_ai").unwrap().name, "gemini");
    assert_eq!(
        providers.get("OpenAI (Chat Completions)").unwrap().name,
        "openai"
    );
    assert_eq!(providers.get("anthropic").unwrap().name, "anthropic");
    assert!(providers.get("Nope").is_none());
    let mut errors: Vec<String> = providers.errors.iter().map(ToString::to_string).collect();
    errors.sort();
    let expected = [
        "both.toml:3: give one of protocol and client_api",
        "twokeys.toml:1: give one of api_key_ref",
        "typo.toml:3: unknown client_api \"Claude Code\"",
    ];
    assert_eq!(errors.len(), expected.len(), "{errors:?}");
    for (error, want) in errors.iter().zip(expected) {
        assert!(error.contains(want), "{error} should contain {want}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_loose_name_finds_a_provider_only_when_one_has_it_as_for_agents() {
    let dir = std::env::temp_dir().join(format!("qore-loose-providers-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let write = |file: &str, name: &str| {
        let text = format!("name = \"{name}\"\nprotocol = \"openai-chat\"\nurl = \"http://h\"\n");
        std::fs::write(dir.join(file), text).unwrap();
    };
    write("a_b.toml", "a_b");
    write("a-b.toml", "a-b");
    write("solo.toml", "Solo Box");
    let providers = Providers::load(Some(&dir));
    // (asked, found): exact names first; a loose one only when a single instance has it.
    let cases = [
        ("a_b", Some("a_b")),
        ("a-b", Some("a-b")),
        ("A B", None),
        ("solo-box", Some("Solo Box")),
    ];
    for (asked, found) in cases {
        let got = providers.get(asked).map(|p| p.name.as_str());
        assert_eq!(got, found, "{asked}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
