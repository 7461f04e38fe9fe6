//! Where the prompt of `qore run` comes from: the arguments, `--file`, and stdin.
//!
//! Promises: the prompt is, in order and separated by a blank line, the text piped into
//! stdin (the context), the `--file`'s text, and the arguments joined by spaces; `-` as the
//! only argument reads the prompt from stdin. A terminal stdin is never read, and neither
//! is a stdin that carries approval answers (`--tools confirm --json`): `-` is then a usage
//! error. A prompt that is empty or only whitespace is a usage error, never sent. A file or
//! stdin that cannot be read, or is not UTF-8, is an error naming it.

use std::io::Read as _;
use std::path::Path;

/// What the prompt may be made of.
pub struct Sources<'a> {
    pub words: &'a [String],
    pub file: Option<&'a Path>,
    /// Stdin is not a terminal.
    pub piped: bool,
    /// Stdin carries approval answers.
    pub for_answers: bool,
}

/// The prompt, or a usage error to show. `read_stdin` is called at most once.
pub fn assemble(
    sources: &Sources<'_>,
    read_stdin: impl FnOnce() -> Result<String, String>,
) -> Result<String, String> {
    let dash = sources.words == ["-"];
    if dash && !sources.piped {
        return Err(
            "`-` reads the prompt from stdin, but stdin is a terminal: pipe the \
                    prompt in or write it as an argument"
                .into(),
        );
    }
    if dash && sources.for_answers {
        return Err(
            "with --tools confirm --json, stdin carries the approval answers: pass \
                    the prompt as an argument or with --file"
                .into(),
        );
    }
    let mut parts = Vec::new();
    if sources.piped && !sources.for_answers {
        parts.push(read_stdin()?);
    }
    if let Some(path) = sources.file {
        let bytes = std::fs::read(path)
            .map_err(|err| format!("--file {}: cannot read it: {err}", path.display()))?;
        let text = String::from_utf8(bytes)
            .map_err(|_| format!("--file {}: not UTF-8 text", path.display()))?;
        parts.push(text);
    }
    if !dash {
        parts.push(sources.words.join(" "));
    }
    let prompt = (parts.iter())
        .map(|part| part.trim_end())
        .filter(|part| !part.trim().is_empty())
        .collect::<Vec<_>>()
        .join("\n\n");
    if prompt.is_empty() {
        return Err(
            "the prompt is empty: write it as an argument, pipe it into stdin, or \
                    pass --file"
                .into(),
        );
    }
    Ok(prompt)
}

/// All of stdin as text.
pub fn read_stdin() -> Result<String, String> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .read_to_end(&mut bytes)
        .map_err(|err| format!("cannot read the prompt from stdin: {err}"))?;
    String::from_utf8(bytes).map_err(|_| "stdin is not UTF-8 text".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prompt_is_context_then_file_then_words() {
        let dir = std::env::temp_dir().join(format!("qore-prompt-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("p.md");
        std::fs::write(&file, "From the file.\n").unwrap();
        let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let piped = || Ok::<_, String>("piped text\n".to_owned());
        let never = || -> Result<String, String> { panic!("stdin must not be read") };
        let ask = |w: &[&str], file: Option<&Path>, piped_in: bool, answers: bool| {
            let words = words(w);
            let sources = Sources {
                words: &words,
                file,
                piped: piped_in,
                for_answers: answers,
            };
            if piped_in && !answers {
                assemble(&sources, piped)
            } else {
                assemble(&sources, never)
            }
        };
        // (words, --file, piped stdin, stdin for answers, the prompt or part of the error)
        type Case<'a> = (&'a [&'a str], bool, bool, bool, Result<&'a str, &'a str>);
        let cases: &[Case] = &[
            (&["Say", "hi"], false, false, false, Ok("Say hi")),
            (
                &["Explain"],
                false,
                true,
                false,
                Ok("piped text\n\nExplain"),
            ),
            (&["-"], false, true, false, Ok("piped text")),
            (&[], false, true, false, Ok("piped text")),
            (
                &["Q"],
                true,
                true,
                false,
                Ok("piped text\n\nFrom the file.\n\nQ"),
            ),
            (&[], true, false, false, Ok("From the file.")),
            (&["Q"], false, true, true, Ok("Q")),
            (&[], false, false, false, Err("empty")),
            (&["  "], false, false, false, Err("empty")),
            (&["-"], false, false, false, Err("terminal")),
            (&["-"], false, true, true, Err("approval answers")),
            (&[], false, true, true, Err("empty")),
        ];
        for (w, with_file, piped_in, answers, expected) in cases {
            let file = with_file.then_some(file.as_path());
            let got = ask(w, file, *piped_in, *answers);
            match (expected, &got) {
                (Ok(text), Ok(prompt)) => assert_eq!(prompt, text, "{w:?}"),
                (Err(part), Err(message)) => assert!(message.contains(part), "{message}"),
                _ => panic!("{w:?} file={with_file} piped={piped_in}: {got:?}"),
            }
        }
        let missing = dir.join("missing.md");
        let sources = Sources {
            words: &[],
            file: Some(&missing),
            piped: false,
            for_answers: false,
        };
        let err = assemble(&sources, never).unwrap_err();
        assert!(err.contains("missing.md"), "{err}");
        std::fs::remove_dir_all(dir).unwrap();
    }
}
