//! Reading an API key from the operating system's keyring.
//!
//! Promises:
//! - on Linux the key is read from the Secret Service (GNOME Keyring, KWallet, KeePassXC:
//!   stored on disk, it persists across reboots) over D-Bus. When that cannot be reached (no
//!   D-Bus session, as on a headless machine or in CI; no Secret Service running), the
//!   kernel keyring (keyutils; it lasts until logout or reboot) is read instead, and a miss
//!   there says that the Secret Service was unreachable, why, and what to use instead;
//! - elsewhere the platform's store is read (macOS Keychain, Windows Credential Manager);
//! - a miss is an `Err` naming the entry (`service/user`) and the store, never a key, and
//!   never a panic; a found key is trimmed of surrounding whitespace.

/// What to do instead when no keyring holds the key.
const INSTEAD: &str = "store the key with your keyring tool, or give api_key_env or \
                       api_key_file in the provider file instead";

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
        let kernel = keyring::keyutils::KeyutilsCredential::new_with_target(None, service, user)
            .map(|c| keyring::Entry::new_with_credential(Box::new(c)))
            .and_then(|e| e.get_password());
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

    /// Without D-Bus, a key put in the kernel keyring (where `keyctl` or the keyring crate
    /// stores it) is found there. Skipped where the kernel keyring is not available either.
    #[cfg(target_os = "linux")]
    #[test]
    fn without_d_bus_the_kernel_keyring_answers() {
        if std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_some() {
            return;
        }
        let service = format!("qore-test-kernel-{}", std::process::id());
        let stored = keyring::keyutils::KeyutilsCredential::new_with_target(None, &service, "u")
            .map(|c| keyring::Entry::new_with_credential(Box::new(c)))
            .and_then(|entry| entry.set_password(" sk-kernel\n").map(|()| entry));
        let entry = match stored {
            Ok(entry) => entry,
            Err(err) => return eprintln!("skipped: no kernel keyring here ({err})"),
        };
        let read = super::read(&service, "u");
        let _ = entry.delete_credential();
        assert_eq!(read.as_deref(), Ok("sk-kernel"));
    }
}
