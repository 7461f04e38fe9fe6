//! Unified diffs of a file's old and new text, for results of tools that change files.
//!
//! Promises: `--- a/<path>` / `+++ b/<path>` headers, hunks with 3 lines of context (the
//! `similar` crate's unified format), at most `max_lines` lines and then a note of how many
//! more; a file whose last line has no newline is marked as `diff` does.

/// The unified diff from `old` to `new` for the file `rel`, cut after `max_lines` lines.
pub fn unified_diff(rel: &str, old: &str, new: &str, max_lines: usize) -> String {
    let diff = similar::TextDiff::from_lines(old, new);
    let full = diff
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{rel}"), &format!("b/{rel}"))
        .to_string();
    let lines: Vec<&str> = full.lines().collect();
    if lines.len() <= max_lines {
        return full;
    }
    let mut cut = lines[..max_lines].join("\n");
    cut.push_str(&format!(
        "\n[diff cut: {} more lines; read the file to see the rest]\n",
        lines.len() - max_lines
    ));
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_one_line_change_has_headers_context_and_both_sides() {
        let d = unified_diff("f.txt", "a\nb\nc\n", "a\nB\nc\n", 100);
        assert_eq!(
            d,
            "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
        );
    }

    #[test]
    fn long_diffs_are_cut_with_a_count() {
        let old: String = (0..50).map(|i| format!("{i}\n")).collect();
        let d = unified_diff("f", &old, "", 5);
        assert_eq!(d.lines().count(), 6);
        // 2 headers + 1 hunk header + 50 removals = 53 lines, 5 shown.
        assert!(
            d.ends_with("[diff cut: 48 more lines; read the file to see the rest]\n"),
            "{d}"
        );
    }
}
