//! The status line after each answer of a chat on a terminal (and of `qore run` when
//! stderr is one): the model, tokens in and out,
//! time to the first token and in all, the session's share of the context window, and the
//! cost when the agent's profile gives prices (`[pricing]`).
//!
//! Promises: the line goes to stderr (stdout stays the answer), dimmed when stderr takes
//! colours (the console's `styled_stderr`), broken between its parts into lines that fit
//! the terminal's width; only on a terminal (stdin and stderr), never with `--json` or
//! `--quiet`; nothing is asked of the server (the context window is shown when the
//! profile sets it or `/tokens` has listed it, else the tokens used); tokens are the
//! provider's counts for the turn (`?` when not reported), the input the whole prompt on
//! every wire with the cache reads in it said (`1,000 in (800 cached)`); the first token is
//! the first text, reasoning or tool call of the turn's stream; the cost is qore-agents'
//! [`Pricing::cost`], shown only when the profile has `[pricing]` and both counts were
//! reported.

use std::io::IsTerminal as _;
use std::time::Duration;

use qore_agents::config::Config;
use qore_agents::pricing::Pricing;
use qore_core::Usage;
use qore_session::tokens::{grouped, whole_prompt, TokenUse};
use qore_session::Target;

use super::conversation::Conversation;
use super::timing::Timing;
use crate::console;
use crate::render::style::dim;

/// What the status line says about one answer.
pub struct Status<'a> {
    pub model: &'a str,
    /// In the one sense: `input_tokens` the whole prompt (qore-session's `whole_prompt`).
    pub usage: &'a Usage,
    pub timing: Timing,
    pub context: &'a TokenUse,
    pub pricing: Option<Pricing>,
}

/// The prices of `target`'s agent (`[pricing]` in its profile), when it has them.
pub fn pricing(config: &Config, target: &Target) -> Option<Pricing> {
    let agent = target.agent.as_ref()?;
    config.catalog.get(&agent.name)?.pricing
}

/// Whether `qore run` shows the status line: stderr is a terminal, without `--json` or
/// `--quiet`.
pub fn shown_in_run(json: bool) -> bool {
    !json && !console::quiet() && std::io::stderr().is_terminal()
}

/// Whether a chat shows the status line: on a terminal, without `--json` or `--quiet`.
pub fn shown(json: bool) -> bool {
    !json && !console::quiet() && std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// After an answer: the status line of the conversation's last turn, which used `usage`,
/// when the chat shows one ([`shown`]).
pub async fn after_answer(conversation: &Conversation, json: bool, usage: &Usage) {
    if !shown(json) {
        return;
    }
    let context = conversation.token_use_known().await;
    print(&Status {
        model: conversation.model(),
        usage: &whole_prompt(usage, conversation.protocol()),
        timing: conversation.last_timing,
        context: &context,
        pricing: conversation.pricing(),
    });
}

/// Print `status` on stderr, dimmed where colours are taken.
pub fn print(status: &Status<'_>) {
    let styled = console::styled_stderr();
    for line in line(status, console::width()).lines() {
        match styled {
            true => eprintln!("{}", dim(line)),
            false => eprintln!("{line}"),
        }
    }
}

/// `m · 1,000 in · 500 out · first token 0.4 s · 1.3 s · context 12.5% of 8,192 · $0.0105`,
/// broken into lines of at most `width` characters between its parts (a part longer than
/// that stands on a line of its own).
pub fn line(status: &Status<'_>, width: usize) -> String {
    let count = |n: Option<u64>| n.map_or_else(|| "?".to_owned(), grouped);
    let mut parts = vec![
        status.model.to_owned(),
        match status.usage.cached_input_tokens.filter(|n| *n > 0) {
            Some(cached) => format!(
                "{} in ({} cached)",
                count(status.usage.input_tokens),
                grouped(cached)
            ),
            None => format!("{} in", count(status.usage.input_tokens)),
        },
        format!("{} out", count(status.usage.output_tokens)),
    ];
    if let Some(first) = status.timing.first_token {
        parts.push(format!("first token {}", seconds(first)));
    }
    parts.push(seconds(status.timing.total));
    parts.push(match (status.context.window, status.context.percent) {
        (Some(window), Some(percent)) => format!("context {percent}% of {}", grouped(window)),
        _ => format!("context {} tokens", grouped(status.context.used)),
    });
    let cost = status
        .pricing
        .and_then(|pricing| pricing.cost(status.usage));
    parts.extend(cost.map(|cost| format!("${cost:.4}")));
    let mut text = String::new();
    let mut column = 0;
    for part in parts {
        let chars = part.chars().count();
        if column > 0 && column + 3 + chars > width {
            text.push('\n');
            column = 0;
        }
        if column > 0 {
            text.push_str(" · ");
            column += 3;
        }
        text.push_str(&part);
        column += chars;
    }
    text
}

/// `0.4 s`, `12.0 s`.
fn seconds(time: Duration) -> String {
    format!("{:.1} s", time.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_says_each_part_and_a_cost_only_with_prices() {
        let usage = Usage {
            input_tokens: Some(1000),
            output_tokens: Some(500),
            ..Usage::default()
        };
        let unreported = Usage::default();
        let timing = Timing {
            first_token: Some(Duration::from_millis(420)),
            total: Duration::from_millis(1260),
        };
        let late = Timing {
            first_token: None,
            total: Duration::from_secs(12),
        };
        let window = TokenUse::new(1024, Some(8192));
        let unknown = TokenUse::new(1234, None);
        let prices = Some(Pricing {
            input: 3.0,
            output: 15.0,
            cache_read: Some(0.3),
            cache_write: None,
        });
        // A whole prompt of 10,000 with 8,000 read from the cache:
        // 2000 × $3/M + 8000 × $0.30/M + 500 × $15/M = $0.006 + $0.0024 + $0.0075.
        let cached = Usage {
            input_tokens: Some(10_000),
            cached_input_tokens: Some(8_000),
            output_tokens: Some(500),
            ..Usage::default()
        };
        let cases = [
            (
                &usage,
                timing,
                &window,
                prices,
                "m · 1,000 in · 500 out · first token 0.4 s · 1.3 s · context 12.5% of 8,192 · $0.0105",
            ),
            (
                &usage,
                timing,
                &window,
                None,
                "m · 1,000 in · 500 out · first token 0.4 s · 1.3 s · context 12.5% of 8,192",
            ),
            (
                &cached,
                timing,
                &window,
                prices,
                "m · 10,000 in (8,000 cached) · 500 out · first token 0.4 s · 1.3 s · context 12.5% of 8,192 · $0.0159",
            ),
            (
                &unreported,
                late,
                &unknown,
                prices,
                "m · ? in · ? out · 12.0 s · context 1,234 tokens",
            ),
        ];
        for (usage, timing, context, pricing, want) in cases {
            let status = Status {
                model: "m",
                usage,
                timing,
                context,
                pricing,
            };
            assert_eq!(line(&status, 200), want);
        }
        // At 40 columns: broken between parts, no line longer than 40.
        let status = Status {
            model: "m",
            usage: &usage,
            timing,
            context: &window,
            pricing: prices,
        };
        assert_eq!(
            line(&status, 40),
            "m · 1,000 in · 500 out\nfirst token 0.4 s · 1.3 s\ncontext 12.5% of 8,192 · $0.0105"
        );
    }
}
