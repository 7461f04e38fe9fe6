use super::*;

#[test]
fn the_first_before_and_the_last_after_are_kept_per_path() {
    let recorder = ChangeRecorder::new();
    let shared = recorder.clone();
    recorder.record("a.txt", Some(b"one"), b"two");
    shared.record("a.txt", Some(b"two"), b"three");
    recorder.record("new/b.txt", None, b"fresh");
    recorder.record("same.txt", Some(b"same"), b"same");
    let changes = shared.take();
    let expected = [
        ("a.txt", Before::Content(b"one".to_vec()), "three"),
        ("new/b.txt", Before::Absent, "fresh"),
    ];
    assert_eq!(changes.len(), expected.len(), "{changes:?}");
    for (change, (path, before, after)) in changes.iter().zip(expected) {
        assert_eq!(change.path, path);
        assert_eq!(change.before, before);
        assert_eq!(change.after_hash, content_hash(after.as_bytes()));
    }
    assert!(recorder.take().is_empty(), "take starts an empty record");
}

#[test]
fn files_over_the_file_or_turn_limit_are_recorded_as_not_restorable() {
    let recorder = ChangeRecorder::with_limits(4, 7);
    recorder.record("a-big", Some(b"12345"), b"x");
    recorder.record("b-small", Some(b"1234"), b"x");
    recorder.record("c-fills", Some(b"123"), b"x");
    recorder.record("d-past", Some(b"1234"), b"x");
    recorder.record("e-new", None, b"x");
    let befores: Vec<Before> = recorder.take().into_iter().map(|c| c.before).collect();
    let expected = [
        Before::NotRecorded { bytes: 5 },
        Before::Content(b"1234".to_vec()),
        Before::Content(b"123".to_vec()),
        Before::NotRecorded { bytes: 4 },
        Before::Absent,
    ];
    assert_eq!(befores, expected);
    recorder.record("next-turn", Some(b"1234"), b"x");
    assert_eq!(recorder.take()[0].before, Before::Content(b"1234".to_vec()));
}

#[test]
fn a_change_back_to_the_start_is_still_a_change_once_recorded() {
    let recorder = ChangeRecorder::new();
    recorder.record("a", Some(b"start"), b"middle");
    recorder.record("a", Some(b"middle"), b"start");
    let changes = recorder.take();
    assert_eq!(changes[0].after_hash, content_hash(b"start"));
}

#[test]
fn parallel_writers_share_one_record() {
    let recorder = ChangeRecorder::new();
    let threads: Vec<_> = (0..8)
        .map(|n| {
            let recorder = recorder.clone();
            std::thread::spawn(move || recorder.record(&format!("f{n}"), None, b"x"))
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    assert_eq!(recorder.take().len(), 8);
}

#[test]
fn the_hash_is_lowercase_hex_sha256() {
    assert_eq!(
        content_hash(b""),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
    assert!(records_every_change("edit_file"));
    assert!(!records_every_change("run_command"));
}
