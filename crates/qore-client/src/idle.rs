//! [`IdleWatch`]: a response's idle timeout, kept by one watchdog thread shared by the process.
//!
//! Why not a `tokio::time::Sleep` in the stream: while any timer is armed, every park of
//! the runtime reads the clock once more and walks the timer wheel, and keeping the deadline
//! current costs the stream a clock read per received chunk. With one event per HTTP chunk
//! (a fast local server) the runtime parks about once per event, so those reads were a few
//! percent of the client's whole per-event CPU (measured in `benches/chat_stream.rs`). Here
//! the stream's hot path is one plain store per chunk and one load when it goes idle; the
//! clock is read by the watchdog, a few times per idle period.
//!
//! Promises:
//! - [`IdleWatch::progress`] is a relaxed atomic store; [`IdleWatch::expired`] a load;
//! - a watch expires only after at least `idle` without progress (never early), and at
//!   most about `idle / 4` later (plus the thread's scheduling delay);
//! - on expiry, the waker last given to [`IdleWatch::register`] is woken, once;
//! - while [`IdleWatch::suspend`]ed (a backoff between attempts) a watch does not expire;
//!   [`IdleWatch::resume`] counts as progress;
//! - the watchdog holds no strong reference: a dropped watch is forgotten at its next tick,
//!   and the thread blocks (no ticks) while no watch is alive;
//! - if the thread cannot be started, watches never expire and a warning is logged once.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock, Weak};
use std::task::Context;
use std::time::{Duration, Instant};

use futures_util::task::AtomicWaker;

use crate::cancel::LastWaker;

/// Shortest and longest pause between two checks of the watchdog.
const MIN_TICK: Duration = Duration::from_millis(1);
const MAX_TICK: Duration = Duration::from_secs(1);

struct Shared {
    idle: Duration,
    progress: AtomicU64,
    suspended: AtomicBool,
    expired: AtomicBool,
    waker: AtomicWaker,
}

/// The idle timeout of one response.
pub struct IdleWatch {
    shared: Arc<Shared>,
    /// Progress counter (only this side writes it).
    count: u64,
    registered: LastWaker,
}

impl IdleWatch {
    /// Start watching: the silence counts from now.
    pub fn new(idle: Duration) -> Self {
        let watch = Self::unwatched(idle);
        Watchdog::get().add(&watch.shared);
        watch
    }

    /// A watch that never expires (for a response that never reads anything).
    pub fn unwatched(idle: Duration) -> Self {
        IdleWatch {
            shared: Arc::new(Shared {
                idle,
                progress: AtomicU64::new(0),
                suspended: AtomicBool::new(false),
                expired: AtomicBool::new(false),
                waker: AtomicWaker::new(),
            }),
            count: 0,
            registered: LastWaker::default(),
        }
    }

    /// The timeout this watch enforces.
    pub fn idle(&self) -> Duration {
        self.shared.idle
    }

    /// Something arrived: the silence starts again.
    #[inline]
    pub fn progress(&mut self) {
        self.count = self.count.wrapping_add(1);
        self.shared.progress.store(self.count, Ordering::Relaxed);
    }

    /// Stop the clock (e.g. while waiting before a retry).
    pub fn suspend(&mut self) {
        self.shared.suspended.store(true, Ordering::Relaxed);
    }

    /// Start the clock again, from now.
    pub fn resume(&mut self) {
        self.progress();
        self.shared.suspended.store(false, Ordering::Relaxed);
    }

    /// Wake the task polling with `cx` when the watch expires. Returns [`Self::expired`] as
    /// seen after registering, so an expiry that raced the registration is not missed.
    pub fn register(&mut self, cx: &Context<'_>) -> bool {
        self.registered.register(&self.shared.waker, cx);
        self.expired()
    }

    /// True once `idle` has passed without progress.
    pub fn expired(&self) -> bool {
        self.shared.expired.load(Ordering::Acquire)
    }
}

struct Entry {
    watch: Weak<Shared>,
    seen: u64,
    /// When `seen` was first seen: the silence is measured from here (never before the
    /// real last progress, so a watch never expires early).
    since: Instant,
}

/// The watches, and how long the thread sleeps between its rounds.
#[derive(Default)]
struct Entries {
    list: Vec<Entry>,
    /// The thread's sleep between rounds; `None` while it waits for a first watch.
    tick: Option<Duration>,
}

#[derive(Default)]
struct Watchdog {
    entries: Mutex<Entries>,
    added: Condvar,
    /// The thread is running (false: it could not be started).
    running: OnceLock<bool>,
}

impl Watchdog {
    fn get() -> &'static Watchdog {
        static WATCHDOG: OnceLock<Watchdog> = OnceLock::new();
        WATCHDOG.get_or_init(Watchdog::default)
    }

    fn add(&'static self, shared: &Arc<Shared>) {
        let running = *self.running.get_or_init(|| {
            let started = std::thread::Builder::new()
                .name("qore-idle-watch".into())
                .spawn(move || self.run());
            if let Err(err) = &started {
                tracing::warn!("cannot start the idle-timeout thread ({err}); no idle timeout");
            }
            started.is_ok()
        });
        if !running {
            return;
        }
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries.list.push(Entry {
            watch: Arc::downgrade(shared),
            seen: 0,
            since: Instant::now(),
        });
        // The thread is woken only when its next round would come too late for this watch:
        // it waits for a first one, or sleeps longer than a quarter of this one's idle time.
        // Else the next round finds it (a busy server adds thousands a second: waking the
        // thread and scanning every watch for each was a few percent of a core).
        let wake = entries.tick.is_none_or(|tick| shared.idle / 4 < tick);
        drop(entries);
        if wake {
            self.added.notify_one();
        }
    }

    fn run(&self) {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            let now = Instant::now();
            let mut tick = MAX_TICK;
            entries.list.retain_mut(|entry| {
                let Some(watch) = entry.watch.upgrade() else {
                    return false;
                };
                let progress = watch.progress.load(Ordering::Relaxed);
                if progress != entry.seen || watch.suspended.load(Ordering::Relaxed) {
                    entry.seen = progress;
                    entry.since = now;
                } else if now.duration_since(entry.since) >= watch.idle
                    && !watch.expired.swap(true, Ordering::AcqRel)
                {
                    watch.waker.wake();
                }
                tick = tick.min(watch.idle / 4);
                !watch.expired.load(Ordering::Relaxed)
            });
            entries = if entries.list.is_empty() {
                entries.tick = None;
                self.added.wait(entries).unwrap_or_else(|e| e.into_inner())
            } else {
                let tick = tick.max(MIN_TICK);
                entries.tick = Some(tick);
                let waited = self.added.wait_timeout(entries, tick);
                waited.unwrap_or_else(|e| e.into_inner()).0
            };
        }
    }

    /// The watchdog still has an entry for the watch at `ptr`.
    #[cfg(test)]
    fn holds(&self, ptr: *const Shared) -> bool {
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries
            .list
            .iter()
            .any(|e| std::ptr::eq(e.watch.as_ptr(), ptr))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::future::poll_fn;
    use std::task::Poll;

    /// Wait (at most `limit`) for the watch to wake this task as expired.
    async fn woken_expired(watch: &mut IdleWatch, limit: Duration) -> Option<Duration> {
        let start = Instant::now();
        let waited = tokio::time::timeout(
            limit,
            poll_fn(|cx| {
                if watch.register(cx) {
                    Poll::Ready(())
                } else {
                    Poll::Pending
                }
            }),
        )
        .await;
        waited.ok().map(|()| start.elapsed())
    }

    #[tokio::test]
    async fn silence_expires_no_earlier_than_idle_and_wakes_the_task() {
        let idle = Duration::from_millis(80);
        let mut watch = IdleWatch::new(idle);
        let after = woken_expired(&mut watch, Duration::from_secs(10))
            .await
            .expect("the watch never expired");
        assert!(after >= idle, "expired after {after:?}, idle is {idle:?}");
        assert!(watch.expired());
    }

    #[tokio::test]
    async fn a_short_watch_added_while_the_thread_sleeps_long_is_not_late() {
        // Only a long watch: the thread sleeps its longest tick (1 s) between rounds.
        let _long = IdleWatch::new(Duration::from_secs(100));
        tokio::time::sleep(Duration::from_millis(50)).await;
        let idle = Duration::from_millis(80);
        let mut short = IdleWatch::new(idle);
        let after = woken_expired(&mut short, Duration::from_millis(600)).await;
        let after = after.expect("the short watch waited for the long tick");
        assert!(after >= idle, "expired after {after:?}, idle is {idle:?}");
    }

    #[tokio::test]
    async fn steady_progress_keeps_it_alive() {
        let idle = Duration::from_millis(100);
        let mut watch = IdleWatch::new(idle);
        // Ten silences of a third of the idle time each: three times the idle time in all.
        for _ in 0..10 {
            tokio::time::sleep(idle / 3).await;
            assert!(!watch.expired());
            watch.progress();
        }
        assert!(!watch.expired());
    }

    #[tokio::test]
    async fn a_suspended_watch_does_not_expire_and_resume_restarts_it() {
        let idle = Duration::from_millis(50);
        let mut watch = IdleWatch::new(idle);
        watch.suspend();
        tokio::time::sleep(idle * 4).await;
        assert!(!watch.expired());
        watch.resume();
        assert!(woken_expired(&mut watch, Duration::from_secs(10))
            .await
            .is_some());
    }

    #[test]
    fn a_dropped_watch_is_forgotten_at_the_next_tick() {
        let watchdog = Watchdog::get();
        let watch = IdleWatch::new(Duration::from_secs(3600));
        let ptr = Arc::as_ptr(&watch.shared);
        assert!(watchdog.holds(ptr));
        drop(watch);
        let start = Instant::now();
        while watchdog.holds(ptr) {
            assert!(
                start.elapsed() < MAX_TICK * 5,
                "still watched after its drop"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}
