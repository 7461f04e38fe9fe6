use super::*;

#[test]
fn the_title_is_the_first_non_blank_line_trimmed_to_80_characters() {
    let long = "é".repeat(100);
    let cases: [(&str, Option<String>); 5] = [
        (
            "  \n\t  fix the parser  \nthen the tests",
            Some("fix the parser".into()),
        ),
        ("one line", Some("one line".into())),
        ("", None),
        (" \n \n", None),
        (&long, Some("é".repeat(80))),
    ];
    for (text, title) in cases {
        assert_eq!(title_of(&Message::user(text)), title, "{text:?}");
    }
    let cut_at_a_space = format!("{} tail", "a".repeat(79));
    assert_eq!(
        title_of(&Message::user(cut_at_a_space)),
        Some("a".repeat(79))
    );
}

#[test]
fn a_cancelled_turn_loses_only_its_trailing_assistant_message() {
    let turn = |status| TurnRecord {
        user: Message::user("q"),
        replies: vec![Message::assistant("partial")],
        usage: Usage::default(),
        model: None,
        agent: None,
        started_at: SystemTime::UNIX_EPOCH,
        finished_at: SystemTime::UNIX_EPOCH,
        status,
        file_changes: Vec::new(),
    };
    let kept = |status| turn(status).checked_messages().map(|m| m.len()).ok();
    assert_eq!(kept(TurnStatus::Finished), Some(2));
    assert_eq!(kept(TurnStatus::Cancelled), Some(1));
    assert_eq!(kept(TurnStatus::Failed), Some(1));
}
