//! Reading, storing and removing an API key in the operating system's keyring.
//!
//! Promises:
//! - on Linux the key is read from the Secret Service (GNOME Keyring, KWallet, KeePassXC:
//!   stored on disk, it persists across reboots) over D-Bus. When that cannot be reached (no
//!   D-Bus session, as on a headless machine or in CI; no Secret Service running), the
//!   kernel keyring (keyutils; it lasts until logout or reboot) is read instead, and a miss
//!   there says that the Secret Service was unreachable, why, and what to use instead;
//! - elsewhere the platform's store is read (macOS Keychain, Windows Credential Manager);
//! - a miss is an `Err` naming the entry (`service/user`) and the store, never a key, and
//!   never a panic; a found key is trimmed of surrounding whitespace;
//! - [`write()`] stores a key (trimmed; an empty one is refused) and [`remove`] deletes one in
//!   the same store [`read`] reads first: the Secret Service, else (Linux, unreachable) the
//!   kernel keyring; each says which store it used ([`Keyring`]).

/// What to do instead when no keyring holds the key.
const INSTEAD: &str = "store the key with your keyring tool, or give api_key_env or \
                       api_key_file in the provider file instead";

/// The store a key was written to or removed from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keyring {
    /// The Secret Service (Linux), Keychain (macOS), Credential Manager (Windows).
    Platform,
    /// Linux's kernel keyring: the Secret Service was unreachable.
    Kernel,
}

impl Keyring {
    /// Where the key is, for a human.
    pub fn describe(self) -> &'static str {
        match (self, cfg!(target_os = "linux")) {
            (Keyring::Platform, true) => "the Secret Service",
            (Keyring::Platform, false) => "the system keyring",
            (Keyring::Kernel, _) => {
                "the kernel keyring (the Secret Service is unreachable; it lasts until logout \
                 or reboot)"
            }
        }
    }
}

/// Store `key` (trimmed) under `service`/`user`, replacing any key there.
pub fn write(service: &str, user: &str, key: &str) -> Result<Keyring, String> {
    let key = key.trim();
    if key.is_empty() {
        return Err("the key is empty: nothing was stored".to_owned());
    }
    on_entry(service, user, |entry| entry.set_password(key))
}

/// Delete the key stored under `service`/`user`.
pub fn remove(service: &str, user: &str) -> Result<Keyring, String> {
    on_entry(service, user, keyring::Entry::delete_credential)
}

/// Run `op` on the platform's entry, else (Linux, Secret Service unreachable) the kernel
/// keyring's.
fn on_entry(
    service: &str,
    user: &str,
    op: impl Fn(&keyring::Entry) -> keyring::Result<()>,
) -> Result<Keyring, String> {
    let entry = format!("keyring entry {service}/{user}");
    let failed = |err: &keyring::Error| match err {
        keyring::Error::NoEntry => format!("{entry} does not exist"),
        err => format!("{entry}: {}", one_line(err)),
    };
    match keyring::Entry::new(service, user).and_then(|e| op(&e)) {
        Ok(()) => Ok(Keyring::Platform),
        #[cfg(target_os = "linux")]
        Err(
            unreachable @ (keyring::Error::PlatformFailure(_) | keyring::Error::NoStorageAccess(_)),
        ) => match kernel_entry(service, user).and_then(|e| op(&e)) {
            Ok(()) => Ok(Keyring::Kernel),
            Err(err) => Err(format!(
                "{}; the Secret Service is unreachable ({})",
                failed(&err),
                one_line(&unreachable)
            )),
        },
        Err(err) => Err(failed(&err)),
    }
}

/// The kernel keyring's entry for `service`/`user`.
#[cfg(target_os = "linux")]
fn kernel_entry(service: &str, user: &str) -> keyring::Result<keyring::Entry> {
    keyring::keyutils::KeyutilsCredential::new_with_target(None, service, user)
        .map(|c| keyring::Entry::new_with_credential(Box::new(c)))
}

/// The key stored under `service`/`user`, or why it could not be read.
pub fn read(service: &str, user: &str) -> Result<String, String> {
    let entry = format!("keyring entry {service}/{user}");
    let primary = keyring::Entry::new(service, user).and_then(|e| e.get_password());
    match primary {
        Ok(key) => found(key, &entry),
        Err(keyring::Error::NoEntry) => Err(format!("{entry} does not exist; {INSTEAD}")),
        Err(
            unreachable @ (keyring::Error::PlatformFailure(_) | keyring::Error::NoStorageAccess(_)),
        ) => fallback(service, user, &entry, &unreachable),
        Err(err) => Err(format!("{entry}: {}; {INSTEAD}", one_line(&err))),
    }
}

fn found(key: String, entry: &str) -> Result<String, String> {
    let key = key.trim();
    if key.is_empty() {
        return Err(format!("{entry} is empty; {INSTEAD}"));
    }
    Ok(key.to_owned())
}

/// The key from the kernel keyring (Linux), after the Secret Service was `unreachable`.
fn fallback(
    service: &str,
    user: &str,
    entry: &str,
    unreachable: &keyring::Error,
) -> Result<String, String> {
    #[cfg(target_os = "linux")]
    {
        let kernel = kernel_entry(service, user).and_then(|e| e.get_password());
        match kernel {
            Ok(key) => found(key, entry),
            Err(err) => Err(format!(
                "{entry}: the Secret Service (the persistent keyring, over D-Bus) is \
                 unreachable ({}), and the kernel keyring has no such entry ({}); {INSTEAD}",
                one_line(unreachable),
                one_line(&err)
            )),
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (service, user);
        Err(format!(
            "{entry}: the keyring cannot be read ({}); {INSTEAD}",
            one_line(unreachable)
        ))
    }
}

/// An error's text on one line (D-Bus errors span several).
fn one_line(err: &keyring::Error) -> String {
    err.to_string()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    /// Needs no keyring: on a machine without D-Bus (CI) the fallback answers, on a desktop
    /// the Secret Service does; either way the miss names the entry and what to do.
    #[test]
    fn a_missing_entry_names_the_entry_and_what_to_use_instead() {
        let service = format!("qore-test-missing-{}", std::process::id());
        let err = super::read(&service, "nobody").unwrap_err();
        assert!(err.contains(&format!("{service}/nobody")), "{err}");
        assert!(err.contains("api_key_env or api_key_file"), "{err}");
        assert!(!err.contains('\n'), "{err}");
        if cfg!(target_os = "linux") && std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_none() {
            assert!(err.contains("Secret Service"), "{err}");
            assert!(err.contains("kernel keyring"), "{err}");
        }
    }

    /// Without D-Bus, `write` and `remove` use the kernel keyring (where `keyctl` or the
    /// keyring crate stores a key), where `read` finds the key. Skipped where the kernel keyring is not available either.
    #[cfg(target_os = "linux")]
    #[test]
    fn without_d_bus_a_key_is_written_and_removed_in_the_kernel_keyring() {
        if std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_some() {
            return;
        }
        let service = format!("qore-test-write-{}", std::process::id());
        let written = match super::write(&service, "u", " sk-written\n") {
            Ok(written) => written,
            Err(err) => return eprintln!("skipped: no kernel keyring here ({err})"),
        };
        assert_eq!(written, super::Keyring::Kernel);
        assert_eq!(super::read(&service, "u").as_deref(), Ok("sk-written"));
        assert_eq!(super::remove(&service, "u"), Ok(super::Keyring::Kernel));
        assert!(super::read(&service, "u").is_err());
        let again = super::remove(&service, "u").unwrap_err();
        assert!(again.contains("does not exist"), "{again}");
        let empty = super::write(&service, "u", " \n").unwrap_err();
        assert!(empty.contains("empty"), "{empty}");
    }
}
