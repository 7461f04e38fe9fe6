//! TLS to PostgreSQL: a cluster started with `QORE_PG_TLS=1` (scripts/pg.sh makes a
//! self-signed CA and a server certificate for 127.0.0.1) is reached over TLS with
//! `sslmode=require&sslrootcert=<the CA>`, its certificate verified; without that CA the
//! handshake is refused (a configuration error, not an outage); `sslmode=disable` speaks
//! plain. This binary's server has TLS on, so it has one of its own.

use qore_store::{NewSession, PgStore, Store, StoreError};
use qore_testkit::postgres::TestPostgres;

/// What connecting with a query string must give.
enum Expect {
    /// Connected; whether the server sees TLS on the store's connections.
    Connects { tls: bool },
    /// Refused, not as `Unavailable`, with these words in the message.
    Refused(&'static str),
}

#[tokio::test]
async fn tls_is_verified_against_the_given_ca() {
    // The only test of this binary: no other thread reads the environment meanwhile.
    std::env::set_var("QORE_PG_TLS", "1");
    let server = TestPostgres::start().expect("a PostgreSQL server with TLS");
    let ca = server.dir().join("tls").join("ca.pem");
    let ca = ca.display();
    // (query string, expected)
    let cases = [
        (
            format!("sslmode=require&sslrootcert={ca}"),
            Expect::Connects { tls: true },
        ),
        (
            format!("sslmode=prefer&sslrootcert={ca}"),
            Expect::Connects { tls: true },
        ),
        (
            "sslmode=disable".to_owned(),
            Expect::Connects { tls: false },
        ),
        ("sslmode=require".to_owned(), Expect::Refused("certificate")),
        (
            "sslmode=require&sslrootcert=/nonexistent/ca.pem".to_owned(),
            Expect::Refused("sslrootcert"),
        ),
    ];
    // One database (a new one costs the server's shutdown a checkpoint of its files); each
    // case's connections are told apart by their application_name.
    let url = server.url();
    for (i, (query, expect)) in cases.into_iter().enumerate() {
        let app = format!("case{i}");
        let connected = PgStore::connect(&format!("{url}?application_name={app}&{query}")).await;
        match (expect, connected) {
            (Expect::Connects { tls }, Ok(store)) => {
                let id = store.create_session(&NewSession::default()).await.unwrap();
                assert_eq!(store.session(&id).await.unwrap().id, id, "{query}");
                let on_tls = server
                    .psql(&format!(
                        "SELECT count(*) FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid)
                         WHERE a.application_name = '{app}' AND s.ssl"
                    ))
                    .unwrap();
                let all = server
                    .psql(&format!(
                        "SELECT count(*) FROM pg_stat_activity WHERE application_name = '{app}'"
                    ))
                    .unwrap();
                assert_ne!(all, "0", "{query}: the store's connections are seen");
                assert_eq!(on_tls != "0", tls, "{query}: {on_tls} connections on TLS");
            }
            (Expect::Refused(words), Err(error)) => {
                assert!(
                    !matches!(error, StoreError::Unavailable(_)),
                    "{query}: {error}"
                );
                assert!(error.to_string().contains(words), "{query}: {error}");
            }
            (_, Ok(_)) => panic!("{query}: connected, but should have been refused"),
            (_, Err(error)) => panic!("{query}: {error}"),
        }
    }
}
