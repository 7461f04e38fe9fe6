//! Locking the server's state: a mutex a panicking thread poisoned still gives its value, so
//! one failed handler never takes the server down with it. The lowest module: it knows no
//! other module of the crate.

use std::sync::{Mutex, MutexGuard};

/// Lock `mutex`, taking the value even if a panicking thread poisoned it.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::lock;

    #[test]
    fn a_poisoned_mutex_still_gives_its_value() {
        let mutex = Mutex::new(7);
        let poisoner = std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    let _guard = lock(&mutex);
                    panic!("poison the mutex");
                })
                .join()
        });
        assert!(poisoner.is_err());
        assert!(mutex.is_poisoned());
        assert_eq!(*lock(&mutex), 7);
    }

    /// The modules below the backend name nothing of it (no file imports another in a
    /// circle).
    #[test]
    fn lower_modules_name_nothing_of_the_backend() {
        let needle = concat!("crate::", "backend");
        for (name, source) in [
            ("lock.rs", include_str!("lock.rs")),
            ("inflight.rs", include_str!("inflight.rs")),
        ] {
            assert!(!source.contains(needle), "{name} names {needle}");
        }
    }
}
