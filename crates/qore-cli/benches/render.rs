//! The cost of rendering a streamed Markdown answer for a terminal, as a ratio to the plain
//! passthrough (what `--plain`, `NO_COLOR` and a pipe get).
//!
//! The workload: a typical answer of ~4 KB (a heading, paragraphs with bold, italic, code
//! spans and links, a nested list, a block quote, a 4-row table and a 12-line Rust code
//! block) repeated to 32 KB, fed in deltas of 24 bytes as a stream delivers them.
//! - `plain`: each delta copied into the output (the passthrough's own work; writing to
//!   the terminal is the same for both and not timed);
//! - `render`: `Renderer::push` of each delta then `finish`, output kept;
//! - `prose`: the same without the code block (rendering without highlighting).
//!
//! The syntaxes and theme are loaded before timing (once per process, as in qore).
//!
//! Run: `cargo bench -p qore-cli --bench render`; it prints, after criterion's groups, each
//! variant's median per KB and the ratio to `plain`. No timing assertions.
//!
//! One run (2 cores shared with other builds): plain 0.19 µs/KB; render 1,099 µs/KB (5,712x
//! plain); prose 81 µs/KB (422x). Highlighting is most of it: 75-180 µs per code line with
//! syntect's pure-Rust regexes (onig measured about the same per line, its regexes compile
//! faster: a syntax's first line costs ~45 ms once with fancy-regex). A 10 KB answer costs
//! about 11 ms of rendering spread over its stream.

// The module's unit tests come along (clippy builds this with cfg(test), no harness runs them).
#[allow(dead_code, unused_imports)]
#[path = "../src/render/mod.rs"]
mod render;

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use render::{Depth, Renderer};

const DELTA: usize = 24;

fn answer(with_code: bool) -> String {
    let mut one = String::from(
        "# Reading a file in Rust\n\n\
         To read a file you can use **`std::fs::read_to_string`**, which returns the *whole* \
         file as a `String`. See [the docs](https://doc.rust-lang.org/std/fs/) for more, and \
         keep in mind that large files are better read in pieces with a `BufReader`.\n\n\
         ## Steps\n\n\
         1. Open the file with `File::open`.\n\
         2. Wrap it in a **BufReader**:\n\
         \x20  - read lines with `lines()`;\n\
         \x20  - or read chunks with `read` into a buffer.\n\
         3. Handle the errors with `?` — every call can fail.\n\n\
         > Note: a path relative to the current directory is resolved when the program runs, \
         not when it is built.\n\n\
         | Function | Reads | Allocates |\n\
         |---|:---:|--:|\n\
         | `read_to_string` | all | yes |\n\
         | `read` | a chunk | no |\n\
         | `lines` | a line | per line |\n\n",
    );
    if with_code {
        one.push_str(
            "```rust\n\
             use std::fs::File;\n\
             use std::io::{self, BufRead, BufReader};\n\
             \n\
             fn count_lines(path: &str) -> io::Result<usize> {\n\
             \x20   let file = File::open(path)?;\n\
             \x20   let reader = BufReader::new(file);\n\
             \x20   let mut n = 0;\n\
             \x20   for line in reader.lines() {\n\
             \x20       let _line = line?; // \"each line\"\n\
             \x20       n += 1;\n\
             \x20   }\n\
             \x20   Ok(n)\n\
             }\n\
             ```\n\n",
        );
    }
    one.push_str("That is all there is to it; the _standard library_ does the rest.\n\n");
    one.repeat(32 * 1024 / one.len() + 1)
}

fn deltas(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(DELTA).map(|c| c.iter().collect()).collect()
}

fn plain(deltas: &[String]) -> usize {
    let mut out = String::new();
    for delta in deltas {
        out.push_str(black_box(delta));
    }
    black_box(out).len()
}

fn rendered(deltas: &[String]) -> usize {
    let mut renderer = Renderer::new(100, Depth::Palette256);
    let mut out = String::new();
    for delta in deltas {
        out.push_str(&renderer.push(black_box(delta)));
    }
    out.push_str(&renderer.finish());
    black_box(out).len()
}

fn median(run: impl Fn() -> usize, times: usize) -> Duration {
    let mut samples: Vec<Duration> = (0..times)
        .map(|_| {
            let start = Instant::now();
            black_box(run());
            start.elapsed()
        })
        .collect();
    samples.sort();
    samples[times / 2]
}

fn main() {
    let with_code = deltas(&answer(true));
    let prose = deltas(&answer(false));
    let kb = |d: &[String]| d.iter().map(String::len).sum::<usize>() as f64 / 1024.0;
    // Load the syntaxes once, before timing, and check the workload renders.
    assert!(rendered(&with_code) > 0);

    let mut criterion = Criterion::default().configure_from_args();
    let mut group = criterion.benchmark_group("render");
    group.throughput(Throughput::Bytes((kb(&with_code) * 1024.0) as u64));
    group.bench_function("plain", |b| b.iter(|| plain(&with_code)));
    group.bench_function("render", |b| b.iter(|| rendered(&with_code)));
    group.bench_function("prose", |b| b.iter(|| rendered(&prose)));
    group.finish();

    let base = median(|| plain(&with_code), 51).as_secs_f64() / kb(&with_code);
    println!("\nper KB of Markdown (median of 51 runs)");
    for (name, run, size) in [
        ("plain", plain as fn(&[String]) -> usize, kb(&with_code)),
        ("render", rendered, kb(&with_code)),
        ("prose", rendered, kb(&prose)),
    ] {
        let input = if name == "prose" { &prose } else { &with_code };
        let per_kb = median(|| run(input), 51).as_secs_f64() / size;
        println!(
            "{name:>7}: {:>9.2} µs/KB  ratio to plain {:>8.1}",
            per_kb * 1e6,
            per_kb / base
        );
    }
}
