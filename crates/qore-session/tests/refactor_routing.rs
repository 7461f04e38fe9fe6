//! Which agent a file's completion or refactor reaches: `--agent` wins, else the roster's
//! first agent whose `[match]` accepts the file and the project (its folder's name), else one
//! error naming the roster and the file; a refactor refuses a code-completion agent as
//! `reach` does. From a real config dir; nothing is sent.

use std::path::Path;

use qore_agents::config::Config;
use qore_session::{SessionManager, TargetSpec};

const FILES: &[(&str, &str)] = &[
    (
        "providers/loop.toml",
        "name = \"loop\"\nprotocol = \"openai-chat\"\nurl = \"http://127.0.0.1:9/v1\"\n",
    ),
    (
        "providers/infill.toml",
        "name = \"infill\"\nprotocol = \"llamacpp\"\nurl = \"http://127.0.0.1:9/v1\"\n",
    ),
    (
        "agents/py-fix.toml",
        "name = \"py-fix\"\nextends = \"openai-chat\"\nprovider = \"loop\"\nmodel = \"m\"\n\
         [match]\nfile_patterns = [\"*.py\"]\n",
    ),
    (
        "agents/app-fix.toml",
        "name = \"app-fix\"\nextends = \"openai-chat\"\nprovider = \"loop\"\nmodel = \"m\"\n\
         [match]\nproject_names = [\"app\"]\n",
    ),
    (
        "agents/any.toml",
        "name = \"any\"\nextends = \"openai-chat\"\nprovider = \"loop\"\nmodel = \"m\"\n",
    ),
    (
        "agents/py-fim.toml",
        "name = \"py-fim\"\nextends = \"llamacpp-completion\"\nprovider = \"infill\"\n\
         model = \"m\"\n[match]\nfile_patterns = [\"*.py\"]\n",
    ),
    (
        "agents/rs-chat.toml",
        "name = \"rs-chat\"\nextends = \"openai-chat\"\nprovider = \"loop\"\nmodel = \"m\"\n\
         [match]\npath_patterns = [\"**/src/**/*.rs\"]\n",
    ),
    (
        "pipelines.toml",
        "refactor = [\"py-fix\", \"app-fix\"]\ncode_completion = [\"py-fim\", \"rs-chat\"]\n",
    ),
];

#[derive(Clone, Copy, Debug)]
enum Job {
    Complete,
    Refactor,
}

struct Case {
    job: Job,
    agent: Option<&'static str>,
    project: &'static str,
    /// `None`: `reach_completer`, which takes no file.
    file: Option<&'static str>,
    /// The agent reached; `Err(words)`: an error holding each of `words`.
    expected: Result<&'static str, &'static [&'static str]>,
}

const fn case(
    job: Job,
    agent: Option<&'static str>,
    project: &'static str,
    file: Option<&'static str>,
    expected: Result<&'static str, &'static [&'static str]>,
) -> Case {
    Case {
        job,
        agent,
        project,
        file,
        expected,
    }
}

/// What the errors say: no refactor agent, a refactor by a FIM agent, no completion agent.
const NO_REFACTORER: &[&str] = &["refactor roster", "py-fix, app-fix", "a.rs", "\"other\""];
const FIM: &[&str] = &["code-completion agent"];
const NO_COMPLETER: &[&str] = &["code_completion roster", "a.go"];

#[tokio::test]
async fn a_files_agent_is_routed_by_its_roster_and_match_rules() {
    use Job::{Complete, Refactor};
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in FILES {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    for project in ["app", "other"] {
        std::fs::create_dir_all(dir.path().join(project)).unwrap();
    }
    let manager = SessionManager::new(
        None,
        Config::load(Some(dir.path())),
        qore_session::traced_notes(),
    );
    let cases = [
        case(Refactor, None, "other", Some("lib/a.py"), Ok("py-fix")),
        case(Refactor, None, "app", Some("lib/a.PY"), Ok("py-fix")),
        case(Refactor, None, "app", Some("lib/a.rs"), Ok("app-fix")),
        case(
            Refactor,
            None,
            "other",
            Some("lib/a.rs"),
            Err(NO_REFACTORER),
        ),
        case(Refactor, Some("any"), "other", Some("lib/a.rs"), Ok("any")),
        case(
            Refactor,
            Some("py-fim"),
            "other",
            Some("lib/a.py"),
            Err(FIM),
        ),
        case(Complete, None, "other", Some("lib/a.py"), Ok("py-fim")),
        case(Complete, None, "other", Some("x/src/m/a.rs"), Ok("rs-chat")),
        case(Complete, None, "app", Some("lib/a.go"), Err(NO_COMPLETER)),
        case(Complete, Some("any"), "other", Some("lib/a.go"), Ok("any")),
        case(Complete, None, "other", None, Ok("py-fim")),
    ];
    for case in cases {
        let spec = TargetSpec {
            agent: case.agent.map(str::to_owned),
            project: Some(dir.path().join(case.project)),
            ..TargetSpec::default()
        };
        let what = format!("{:?} {:?} {:?}", case.job, case.agent, case.file);
        let got = match (case.job, case.file.map(Path::new)) {
            (Job::Refactor, Some(file)) => manager.reach_refactorer_for(&spec, file).await,
            (Job::Complete, Some(file)) => manager.reach_completer_for(&spec, file).await,
            (_, None) => manager.reach_completer(&spec).await,
        };
        let got = got.map(|t| t.agent.map(|a| a.name).unwrap_or_default());
        match (got, case.expected) {
            (Ok(name), Ok(want)) => assert_eq!(name, want, "{what}"),
            (Err(error), Err(words)) => {
                let all = words.iter().all(|w| error.message.contains(w));
                assert!(all, "{what}: {}", error.message);
                assert_eq!(error.message.lines().count(), 1, "{what}");
            }
            (Ok(name), Err(_)) => panic!("{what}: reached {name}"),
            (Err(error), Ok(_)) => panic!("{what}: {}", error.message),
        }
    }
}

#[tokio::test]
async fn without_a_roster_a_file_reaches_the_plain_model_as_a_chat_model() {
    let dir = tempfile::tempdir().unwrap();
    let manager = SessionManager::new(
        None,
        Config::load(Some(dir.path())),
        qore_session::traced_notes(),
    );
    let spec = TargetSpec {
        endpoint: qore_session::EndpointSpec {
            url: Some("http://127.0.0.1:9/v1".into()),
            ..Default::default()
        },
        model: Some("plain".into()),
        ..TargetSpec::default()
    };
    let file = Path::new("lib/a.py");
    for target in [
        manager.reach_completer_for(&spec, file).await,
        manager.reach_refactorer_for(&spec, file).await,
    ] {
        let target = target.expect("the plain model");
        assert_eq!(
            (target.agent.is_none(), target.model.as_str()),
            (true, "plain")
        );
        assert_eq!(target.client.protocol().name(), "openai-chat");
    }
}
