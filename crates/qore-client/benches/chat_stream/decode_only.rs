//! Ratio mode's decode-only breakdown: the same bodies in memory, no HTTP, cut in 64 KiB
//! pieces and in one piece per event (what a per-event server's chunks hand the framer, its
//! `event:` line included on Anthropic). Shows where qore's per-delta time goes: framing,
//! decoding to events, folding, and the floor's splitter + parse for comparison.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::hint::black_box;
use std::time::Instant;

use qore_client::protocols::anthropic::MessagesStreamDecoder;
use qore_client::protocols::openai_chat::ChatStreamDecoder;
use qore_client::transport::sse::SseFramer;
use qore_client::StreamDecoder;
use qore_core::MessageAssembler;

use crate::floor;
use crate::workload::{Wire, Workload};

#[derive(Clone, Copy)]
enum Stage {
    Framer,
    Decoder,
    Fold,
    Floor,
}

fn run(stage: Stage, wire: Wire, chunks: &[&[u8]]) -> usize {
    let mut framer = SseFramer::new();
    let mut decoder: Box<dyn StreamDecoder> = match wire {
        Wire::OpenAiChat => Box::new(ChatStreamDecoder::new()),
        Wire::Anthropic => Box::new(MessagesStreamDecoder::new()),
    };
    let mut queue = VecDeque::new();
    let mut assembler = MessageAssembler::new();
    let mut frames = 0usize;
    match stage {
        Stage::Framer => {
            for chunk in chunks {
                let _ = framer.feed(chunk, |f| {
                    frames += black_box(f.data.len()) & 1;
                    Ok::<_, Infallible>(())
                });
            }
        }
        Stage::Decoder | Stage::Fold => {
            for chunk in chunks {
                framer
                    .feed(chunk, |f| decoder.frame(f, &mut queue))
                    .expect("decodes");
                for event in queue.drain(..) {
                    if let Stage::Fold = stage {
                        assembler.apply(&event);
                    }
                    frames += 1;
                }
            }
            decoder.finish(&mut queue).expect("complete");
            for event in queue.drain(..) {
                assembler.apply(&event);
            }
            black_box(assembler.finish());
        }
        Stage::Floor => {
            let mut buf: Vec<u8> = Vec::new();
            let mut out = floor::Outcome::new(wire);
            for chunk in chunks {
                buf.extend_from_slice(chunk);
                out.split_lines(&mut buf).expect("parses");
            }
            out.finish().expect("valid arguments");
            frames = black_box(out).deltas;
        }
    }
    frames
}

/// Print ns per delta of each stage (median of `reps` runs), in 64 KiB pieces and in one
/// piece per event.
pub fn breakdown(name: &str, w: &Workload, reps: usize) {
    let pieces: Vec<&[u8]> = w.body.chunks(65536).collect();
    let events = per_event(&w.body);
    for (cut, chunks) in [("64 KiB pieces", &pieces), ("a piece per event", &events)] {
        breakdown_of(name, w, reps, cut, chunks);
    }
}

/// `body` cut after each event's blank line.
fn per_event(body: &[u8]) -> Vec<&[u8]> {
    let mut pieces = Vec::new();
    let mut start = 0;
    while let Some(i) = memchr::memmem::find(&body[start..], b"\n\n") {
        pieces.push(&body[start..start + i + 2]);
        start += i + 2;
    }
    if start < body.len() {
        pieces.push(&body[start..]);
    }
    pieces
}

fn breakdown_of(name: &str, w: &Workload, reps: usize, cut: &str, chunks: &[&[u8]]) {
    let mut line = format!("{name:<22}");
    for (label, stage) in [
        ("framer", Stage::Framer),
        ("+decode", Stage::Decoder),
        ("+fold", Stage::Fold),
        ("floor", Stage::Floor),
    ] {
        let mut times: Vec<f64> = (0..reps)
            .map(|_| {
                let start = Instant::now();
                black_box(run(stage, w.wire, chunks));
                start.elapsed().as_secs_f64() * 1e9 / w.n as f64
            })
            .collect();
        times.sort_by(f64::total_cmp);
        line.push_str(&format!(" {label}={:.0}", times[times.len() / 2]));
    }
    println!("{line}  (ns/delta, in memory, {cut})");
}

/// One pass of one stage (see `QORE_BENCH_STAGE` in the bench's `main`).
pub fn one_stage(spec: &str) {
    let (stage, kind) = spec.split_once(':').unwrap_or((spec, "text"));
    let stage = match stage {
        "framer" => Stage::Framer,
        "decode" => Stage::Decoder,
        "fold" => Stage::Fold,
        _ => Stage::Floor,
    };
    let kind = if kind == "tool" {
        crate::workload::Kind::Tool
    } else {
        crate::workload::Kind::Text
    };
    let w = crate::workload::build(Wire::OpenAiChat, kind, 200_000);
    let chunks: Vec<&[u8]> = w.body.chunks(65536).collect();
    println!("{spec}: {}", black_box(run(stage, w.wire, &chunks)));
}
