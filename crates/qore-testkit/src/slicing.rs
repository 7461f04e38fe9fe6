//! How a response body is cut into the pieces the replay server writes.
//!
//! Contract: [`Slicing::slice_ends`] turns a body into exclusive end offsets of consecutive,
//! non-empty slices; the offsets are strictly increasing and the last one is `body.len()`
//! (an empty body has no slices). Everything is deterministic: the same body and the same
//! `Slicing` always give the same cut, so a failing test replays exactly.
//!
//! - `Whole`: one slice (the server sends it with `content-length`, not chunked).
//! - `Irregular { seed, max }`: pseudo-random lengths in `1..=max` from a xorshift64* generator
//!   seeded by `seed` (`max == 0` is treated as 1).
//! - `Fixed(n)`: slices of `n` bytes, the last one shorter (`n == 0` is treated as one slice).
//! - `PerSseFrame`: one slice per SSE frame: a cut after every blank line, i.e. after a `\n`
//!   followed by `\n` or `\r\n` (covers `\n\n`, `\r\n\r\n`, `\r\n\n`, `\n\r\n`). Bytes after the
//!   last blank line form a final slice.
//! - `Boundaries(v)`: cut at the given offsets (sorted, deduplicated; offsets `0` and
//!   `>= body.len()` are ignored).

/// How the replay server slices a response body into writes (each one HTTP chunk + flush).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Slicing {
    /// The whole body at once, framed with `content-length`.
    Whole,
    /// Pseudo-random slice lengths in `1..=max`, deterministic from `seed`.
    Irregular { seed: u64, max: usize },
    /// Slices of this many bytes.
    Fixed(usize),
    /// One slice per SSE frame (split after each blank line).
    PerSseFrame,
    /// Cut at exactly these byte offsets.
    Boundaries(Vec<usize>),
}

impl Slicing {
    /// Exclusive end offsets of the slices of `body` (see the module doc).
    pub fn slice_ends(&self, body: &[u8]) -> Vec<usize> {
        let len = body.len();
        if len == 0 {
            return Vec::new();
        }
        let mut ends = match self {
            Slicing::Whole => Vec::new(),
            Slicing::Fixed(n) => fixed_ends(len, *n),
            Slicing::Irregular { seed, max } => irregular_ends(len, *seed, *max),
            Slicing::PerSseFrame => sse_frame_ends(body),
            Slicing::Boundaries(cuts) => {
                let mut v: Vec<usize> =
                    cuts.iter().copied().filter(|&c| c > 0 && c < len).collect();
                v.sort_unstable();
                v.dedup();
                v
            }
        };
        if ends.last() != Some(&len) {
            ends.push(len);
        }
        ends
    }
}

fn fixed_ends(len: usize, n: usize) -> Vec<usize> {
    if n == 0 {
        return vec![len];
    }
    let mut ends = Vec::with_capacity(len / n + 1);
    let mut at = 0;
    while at < len {
        at = (at + n).min(len);
        ends.push(at);
    }
    ends
}

fn irregular_ends(len: usize, seed: u64, max: usize) -> Vec<usize> {
    let max = max.max(1) as u64;
    let mut rng = XorShift64::new(seed);
    let mut ends = Vec::new();
    let mut at = 0usize;
    while at < len {
        let step = (rng.next_u64() % max) as usize + 1;
        at = at.saturating_add(step).min(len);
        ends.push(at);
    }
    ends
}

/// End offsets of SSE frames: just after each blank line (see the module doc). The result does
/// not include a trailing partial frame; [`Slicing::slice_ends`] adds `body.len()` itself.
pub fn sse_frame_ends(body: &[u8]) -> Vec<usize> {
    let mut ends = Vec::new();
    let mut from = 0;
    while let Some(rel) = memchr::memchr(b'\n', &body[from..]) {
        let i = from + rel;
        let rest = &body[i + 1..];
        let end = if rest.first() == Some(&b'\n') {
            Some(i + 2)
        } else if rest.starts_with(b"\r\n") {
            Some(i + 3)
        } else {
            None
        };
        match end {
            Some(e) => {
                ends.push(e);
                from = e;
            }
            None => from = i + 1,
        }
        if from >= body.len() {
            break;
        }
    }
    ends
}

/// Tiny xorshift64* generator: enough for reproducible slice lengths, no `rand` dependency.
#[derive(Debug, Clone)]
pub struct XorShift64(u64);

impl XorShift64 {
    /// A zero seed is replaced by a fixed non-zero constant (xorshift must not start at 0).
    pub fn new(seed: u64) -> Self {
        XorShift64(if seed == 0 {
            0x9E37_79B9_7F4A_7C15
        } else {
            seed
        })
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces<'a>(body: &'a [u8], ends: &[usize]) -> Vec<&'a [u8]> {
        let mut start = 0;
        ends.iter()
            .map(|&e| {
                let s = &body[start..e];
                start = e;
                s
            })
            .collect()
    }

    #[test]
    fn sse_frames_split_after_blank_lines() {
        let body = b"data: a\n\ndata: b\r\n\r\n: c\n\ntail";
        let ends = Slicing::PerSseFrame.slice_ends(body);
        let p = pieces(body, &ends);
        assert_eq!(
            p,
            vec![&b"data: a\n\n"[..], b"data: b\r\n\r\n", b": c\n\n", b"tail"]
        );
    }

    #[test]
    fn all_modes_cover_the_body_with_nonempty_slices() {
        let body: Vec<u8> = (0..1000u32).map(|i| (i % 251) as u8).collect();
        let modes = [
            Slicing::Whole,
            Slicing::Fixed(7),
            Slicing::Fixed(0),
            Slicing::Irregular { seed: 3, max: 13 },
            Slicing::Irregular { seed: 0, max: 0 },
            Slicing::PerSseFrame,
            Slicing::Boundaries(vec![5000, 0, 10, 3, 10]),
        ];
        for m in modes {
            let ends = m.slice_ends(&body);
            assert_eq!(ends.last(), Some(&body.len()), "{m:?}");
            assert!(ends.windows(2).all(|w| w[0] < w[1]), "{m:?}");
            assert!(ends[0] > 0, "{m:?}");
        }
        assert_eq!(
            Slicing::Boundaries(vec![10, 3]).slice_ends(&body),
            vec![3, 10, 1000]
        );
        assert!(Slicing::Fixed(3).slice_ends(b"").is_empty());
    }

    #[test]
    fn irregular_is_deterministic_and_bounded() {
        let body = vec![0u8; 10_000];
        let a = Slicing::Irregular { seed: 42, max: 9 }.slice_ends(&body);
        let b = Slicing::Irregular { seed: 42, max: 9 }.slice_ends(&body);
        let c = Slicing::Irregular { seed: 43, max: 9 }.slice_ends(&body);
        assert_eq!(a, b);
        assert_ne!(a, c);
        let mut prev = 0;
        for e in a {
            assert!((1..=9).contains(&(e - prev)));
            prev = e;
        }
    }
}
