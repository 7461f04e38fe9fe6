//! A counting global allocator: current and peak live bytes, switched on only while a peak
//! is being measured (so timed runs pay one relaxed load per allocation, nothing more).
//!
//! Counts every thread of the process, the replay server's included; the bench warms each
//! connection up first, so in steady state the server allocates next to nothing per request.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicIsize, Ordering::Relaxed};

pub struct Counting;

static ON: AtomicBool = AtomicBool::new(false);
static CURRENT: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);

#[inline]
fn track(delta: isize) {
    if ON.load(Relaxed) {
        let now = CURRENT.fetch_add(delta, Relaxed) + delta;
        if delta > 0 {
            PEAK.fetch_max(now, Relaxed);
        }
    }
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            track(layout.size() as isize);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        if !p.is_null() {
            track(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        track(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        if !p.is_null() {
            track(new_size as isize - layout.size() as isize);
        }
        p
    }
}

/// Start counting from zero: the peak is relative to what is live now.
pub fn start() {
    CURRENT.store(0, Relaxed);
    PEAK.store(0, Relaxed);
    ON.store(true, Relaxed);
}

/// Stop counting; the highest number of bytes live at once since [`start`], above the start.
pub fn stop() -> usize {
    ON.store(false, Relaxed);
    PEAK.load(Relaxed).max(0) as usize
}
