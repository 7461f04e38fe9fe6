//! FIM or chat by the body, not the tag: what each profile's `[body]` reads decides how a
//! completion is asked of it, through `extends` and includes; a profile a completion would use
//! whose body reads neither the prefix/suffix nor the history is refused at load, naming its
//! file. The expected styles are written by hand from reading each bundled profile.

use std::path::Path;

use qore_agents::body_reads::CompletionStyle::{self, Chat, Fill};
use qore_agents::config::Config;
use qore_agents::profile::ProfileFile;
use qore_agents::{AgentError, Catalog};

/// Every bundled profile (abstract ones too) and how a completion is asked of it.
const BUNDLED: &[(&str, CompletionStyle)] = &[
    ("claude-chat", Chat),
    ("claude-compression", Chat),
    ("claude-refactor", Chat),
    ("base-anthropic", Chat),
    ("base-gemini", Chat),
    ("base-ollama", Chat),
    ("base-openai-chat", Chat),
    ("base-openai-responses", Chat),
    ("codestral-completion", Fill),
    ("deepseek-chat", Chat),
    ("deepseek-completion", Fill),
    ("deepseek-compression", Chat),
    ("deepseek-refactor", Chat),
    ("gemini-chat", Chat),
    ("gemini-compression", Chat),
    ("gemini-refactor", Chat),
    ("llamacpp-chat", Chat),
    ("llamacpp-completion", Fill),
    ("llamacpp-compression", Chat),
    ("llamacpp-refactor", Chat),
    ("lmstudio-chat", Chat),
    ("lmstudio-compression", Chat),
    ("lmstudio-refactor", Chat),
    ("lmstudio-responses-chat", Chat),
    ("lmstudio-responses-compression", Chat),
    ("lmstudio-responses-refactor", Chat),
    ("local-chat", Chat),
    ("local-completion", Fill),
    ("local-compression", Chat),
    ("local-refactor", Chat),
    ("mistral-chat", Chat),
    ("mistral-completion", Fill),
    ("mistral-compression", Chat),
    ("mistral-refactor", Chat),
    ("ollama-chat", Chat),
    ("ollama-completion", Fill),
    ("ollama-compression", Chat),
    ("ollama-refactor", Chat),
    ("openai-chat", Chat),
    ("openai-compression", Chat),
    ("openai-refactor", Chat),
    ("openai-responses-chat", Chat),
    ("openai-responses-compression", Chat),
    ("openai-responses-refactor", Chat),
    ("openrouter-chat", Chat),
    ("openrouter-compression", Chat),
    ("openrouter-refactor", Chat),
];

#[test]
fn every_bundled_profile_is_asked_as_its_body_reads() {
    let catalog = Catalog::load(None);
    assert!(catalog.errors.is_empty(), "{:#?}", catalog.errors);
    let mut loaded: Vec<&str> = catalog.all().map(|a| a.name.as_str()).collect();
    let mut listed: Vec<&str> = BUNDLED.iter().map(|(name, _)| *name).collect();
    loaded.sort();
    listed.sort();
    assert_eq!(loaded, listed, "the table lists every bundled profile");
    for (name, style) in BUNDLED {
        let agent = catalog.get(name).expect("bundled");
        assert_eq!(agent.reads.completion_style(), Some(*style), "{name}");
        // A fill-in-the-middle body reads no history: it cannot chat; every other one can.
        assert_eq!(agent.reads.chats(), *style == Chat, "{name}");
    }
}

const FILE: &str = "/cfg/agents/mine.toml";

/// `mine` (the profile `text` at [`FILE`]) on top of the bundled profiles.
fn load(text: &str) -> Catalog {
    Catalog::with_user_files(vec![ProfileFile::parse(Path::new(FILE), text).unwrap()])
}

/// (what, profile text, style; `None`: refused at load).
const MINE: &[(&str, &str, Option<CompletionStyle>)] = &[
    (
        "a chat body tagged completion chats",
        "name = \"mine\"\nextends = \"openai-chat\"\ntags = [\"completion\"]\n",
        Some(Chat),
    ),
    (
        "a FIM body with no tag fills in the middle",
        "name = \"mine\"\nprovider = \"llamacpp\"\nmodel = \"m\"\nendpoint = \"../infill\"\n\
         [body]\ninput_prefix = \"{{ tojson(ctx.prefix) }}\"\n\
         input_suffix = \"{{ tojson(ctx.suffix) }}\"\n",
        Some(Fill),
    ),
    (
        "a FIM body inherited through extends, the tag replaced",
        "name = \"mine\"\nextends = \"ollama-completion\"\ntags = [\"fast\"]\n",
        Some(Fill),
    ),
    (
        "a completion-tagged body of literals and the model only is refused",
        "name = \"mine\"\nprovider = \"llamacpp\"\ntags = [\"completion\"]\n\
         [body]\nmodel = \"{{ tojson(ctx.model) }}\"\nprompt = \"def \"\n",
        None,
    ),
    (
        "a completion-tagged profile without [body] sends its protocol's chat request",
        "name = \"mine\"\nprovider = \"openai\"\nmodel = \"m\"\ntags = [\"completion\"]\n",
        Some(Chat),
    ),
    (
        "an untagged body that reads neither loads (no completion uses it)",
        "name = \"mine\"\nprovider = \"llamacpp\"\n[body]\nprompt = \"{{ tojson(ctx.model) }}\"\n",
        None,
    ),
];

#[test]
fn the_body_decides_and_an_unaskable_completer_is_refused_naming_its_file() {
    for (what, text, style) in MINE {
        let catalog = load(text);
        let tagged = text.contains("\"completion\"");
        match (catalog.get("mine"), style, tagged) {
            (Some(agent), _, _) => {
                assert_eq!(agent.reads.completion_style(), *style, "{what}");
                assert!(catalog.errors.is_empty(), "{what}: {:?}", catalog.errors);
            }
            (None, None, true) => match catalog.errors.as_slice() {
                [AgentError::Profile {
                    file,
                    line,
                    message,
                }] => {
                    assert_eq!(file, Path::new(FILE), "{what}");
                    assert_eq!(*line, Some(4), "{what}: the [body] line");
                    assert!(
                        message.contains("tagged \"completion\""),
                        "{what}: {message}"
                    );
                    assert!(message.contains("neither ctx.prefix"), "{what}: {message}");
                }
                other => panic!("{what}: {other:?}"),
            },
            (None, _, _) => panic!("{what}: refused: {:?}", catalog.errors),
        }
    }
}

#[test]
fn an_abstract_completer_is_left_to_its_children() {
    let base = "name = \"fim-base\"\nabstract = true\nprovider = \"llamacpp\"\n\
                tags = [\"completion\"]\n[body]\nn_predict = 16\n";
    let child = "name = \"mine\"\nextends = \"fim-base\"\n\
                 [body]\ninput_prefix = \"{{ tojson(ctx.prefix) }}\"\n";
    let catalog = Catalog::with_user_files(vec![
        ProfileFile::parse(Path::new("/cfg/agents/base.toml"), base).unwrap(),
        ProfileFile::parse(Path::new(FILE), child).unwrap(),
    ]);
    assert!(catalog.errors.is_empty(), "{:?}", catalog.errors);
    assert!(catalog.get("fim-base").is_some_and(|a| a.is_abstract));
    let mine = catalog.get("mine").expect("the child loads");
    assert_eq!(mine.reads.completion_style(), Some(Fill));
}

#[test]
fn the_code_completion_roster_refuses_an_unaskable_profile_and_user_partials_are_read() {
    let neither = "name = \"plain\"\nprovider = \"llamacpp\"\n[body]\nn_predict = 16\n";
    let through_partial = "name = \"fim-mine\"\nprovider = \"llamacpp\"\n\
                           [body]\nprompt = \"{% include 'my_fim.jinja' %}\"\n";
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("agents")).unwrap();
    std::fs::create_dir(dir.path().join("partials")).unwrap();
    let pipelines = "code_completion = [\"plain\", \"fim-mine\"]\n";
    for (path, text) in [
        ("agents/unaskable.toml", neither),
        ("agents/fim_mine.toml", through_partial),
        ("partials/my_fim.jinja", "{{ tojson(ctx.prefix) }}"),
        ("pipelines.toml", pipelines),
    ] {
        std::fs::write(dir.path().join(path), text).unwrap();
    }
    let config = Config::load(Some(dir.path()));
    assert!(config.catalog.get("plain").is_none(), "refused");
    let refused: Vec<String> = config
        .catalog
        .errors
        .iter()
        .map(|e| e.to_string())
        .collect();
    let file = dir.path().join("agents/unaskable.toml");
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert!(
        refused[0].starts_with(&format!("{}:3:", file.display())),
        "{refused:?}"
    );
    assert!(
        refused[0].contains("code_completion names \"plain\""),
        "{refused:?}"
    );
    // Asked for by name, it says why (its file is not named after it).
    let why = config.resolve("plain", None).err().map(|e| e.message);
    assert!(
        why.as_deref()
            .is_some_and(|m| m.contains("was refused") && m.contains("neither")),
        "{why:?}"
    );
    let fim = config.catalog.get("fim-mine").expect("loads");
    assert_eq!(
        fim.reads.completion_style(),
        Some(Fill),
        "read through partials/"
    );
    // Not in the roster and not tagged: the same body loads.
    std::fs::write(
        dir.path().join("pipelines.toml"),
        "code_completion = [\"fim-mine\"]\n",
    )
    .unwrap();
    let config = Config::load(Some(dir.path()));
    assert!(config.catalog.get("plain").is_some());
    assert!(
        config.catalog.errors.is_empty(),
        "{:?}",
        config.catalog.errors
    );
}
