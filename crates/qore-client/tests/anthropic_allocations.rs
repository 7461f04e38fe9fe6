//! The Anthropic decoder's hot path allocates nothing per delta: small text and thinking
//! deltas become inline [`qore_core::DeltaText`]s, frames are read with borrowed shapes, and
//! tool arguments grow one buffer (amortized). Counted with a global allocator that counts
//! allocation calls made by the counting thread while switched on (the test harness's own
//! threads may allocate meanwhile; they are not counted).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use qore_client::protocols::anthropic::MessagesStreamDecoder;
use qore_client::transport::sse::SseFrame;
use qore_client::StreamDecoder;
use qore_core::ResponseEvent;

struct Counting;

thread_local! {
    /// Counting is on for this thread (const-initialized: reading it never allocates).
    static ON: Cell<bool> = const { Cell::new(false) };
}

fn counting() -> bool {
    ON.try_with(Cell::get).unwrap_or(false)
}

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if counting() {
            ALLOCATIONS.fetch_add(1, Relaxed);
        }
        System.alloc(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if counting() {
            ALLOCATIONS.fetch_add(1, Relaxed);
        }
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

const DELTAS: usize = 2000;

/// Allocation calls made while feeding the deltas of `frames` (the message and block starts
/// are fed first, uncounted), dropping each event as it comes.
fn allocations(frames: &[String]) -> usize {
    let mut decoder = MessagesStreamDecoder::new();
    let mut out = VecDeque::with_capacity(16);
    let mut feed = |data: &str, out: &mut VecDeque<ResponseEvent>| {
        let frame = SseFrame { event: None, data };
        decoder.frame(frame, out).expect("frame decodes");
    };
    let (starts, rest) = frames.split_at(2);
    for data in starts {
        feed(data, &mut out);
    }
    out.clear();
    let mut feed = |data: &str, out: &mut VecDeque<ResponseEvent>| {
        feed(data, out);
        assert_eq!(out.len(), 1, "one event for {data}");
        out.clear();
    };
    ALLOCATIONS.store(0, Relaxed);
    ON.with(|on| on.set(true));
    for data in rest {
        feed(data, &mut out);
    }
    ON.with(|on| on.set(false));
    ALLOCATIONS.load(Relaxed)
}

fn frames(start: &str, delta: &str) -> Vec<String> {
    let message_start = r#"{"type":"message_start","message":{"id":"msg_1","model":"m","content":[],"usage":{"input_tokens":5}}}"#;
    let mut frames = vec![message_start.to_owned(), start.to_owned()];
    frames.extend(std::iter::repeat_n(delta.to_owned(), DELTAS));
    frames
}

#[test]
fn decoding_deltas_allocates_nothing_per_delta() {
    let text = frames(
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello, world"}}"#,
    );
    let thinking = frames(
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}"#,
        r#"{"delta":{"thinking":" let me think","type":"thinking_delta"},"index":0,"type":"content_block_delta"}"#,
    );
    let tool = frames(
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_01","name":"add","input":{}}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"[1, 2, "}}"#,
    );
    // A real id (`toolu_` and 24 characters) is longer than a delta keeps inline: the
    // call's deltas share it (`CallId`), so it is not copied per delta either.
    let real_id = frames(
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_01A09q90qw90lq917835lq9","name":"add","input":{}}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"[1, 2, "}}"#,
    );
    let counted = [
        ("text", allocations(&text)),
        ("thinking", allocations(&thinking)),
        ("tool arguments", allocations(&tool)),
        ("tool arguments, real id", allocations(&real_id)),
    ];
    // The arguments buffer doubles a dozen times over 2000 deltas; anything per delta
    // would be 2000 or more.
    for (kind, count) in counted {
        assert!(
            count <= 16,
            "{kind}: {count} allocations for {DELTAS} deltas"
        );
    }
    assert_eq!(counted[0].1, 0, "text deltas");
    assert_eq!(counted[1].1, 0, "thinking deltas");
}
