//! TLS trusts the roots the operating system is told about: a loopback HTTPS server whose
//! certificate comes from a private CA (made here with rcgen) is refused, and trusted once
//! `SSL_CERT_FILE` names that CA. The environment is process-wide, so this file is its own
//! test binary with a single test that changes it.

use std::sync::Arc;

use qore_client::{Client, ClientConfig};
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::TlsAcceptor;

/// A private CA (PEM) and a server configuration whose certificate, for 127.0.0.1, it signed.
fn private_ca() -> (String, ServerConfig) {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(DnType::CommonName, "qore test CA");
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca, ca_key);
    let leaf_key = KeyPair::generate().unwrap();
    let leaf = CertificateParams::new(vec!["127.0.0.1".to_owned()])
        .unwrap()
        .signed_by(&leaf_key, &issuer)
        .unwrap();
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der()));
    let chain = vec![CertificateDer::from(leaf.der().to_vec())];
    let config = ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .unwrap();
    (ca_cert.pem(), config)
}

/// Serves `HTTP/1.1 200 ok` over TLS to every connection; returns the base URL.
async fn https_server(config: ServerConfig) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let acceptor = TlsAcceptor::from(Arc::new(config));
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                // A refused handshake ends here, as it should.
                let Ok(mut tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match tls.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let answer = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok";
                let _ = tls.write_all(answer).await;
                let _ = tls.shutdown().await;
            });
        }
    });
    format!("https://{addr}/v1")
}

/// A fresh client (the roots are read when a client is built) asking `/health`.
async fn probe(url: &str) -> Result<(u16, bytes::Bytes), qore_core::ErrorInfo> {
    let protocol = qore_client::protocols::by_name("openai-chat").unwrap();
    let client = Client::new(protocol, ClientConfig::new(url))?;
    client.get("/health").await
}

#[tokio::test]
async fn a_private_ca_is_trusted_through_ssl_cert_file_and_refused_without_it() {
    let (ca_pem, config) = private_ca();
    let url = https_server(config).await;
    let dir = tempfile::tempdir().unwrap();
    let ca_file = dir.path().join("ca.pem");
    std::fs::write(&ca_file, ca_pem).unwrap();

    std::env::remove_var("SSL_CERT_FILE");
    std::env::remove_var("SSL_CERT_DIR");
    let refused = probe(&url).await.expect_err("an unknown CA is refused");
    assert_eq!(refused.category, qore_core::ErrorCategory::Network);
    assert!(
        refused.message.to_lowercase().contains("certificate"),
        "{}",
        refused.message
    );

    std::env::set_var("SSL_CERT_FILE", &ca_file);
    let (status, body) = probe(&url)
        .await
        .expect("the CA named by SSL_CERT_FILE is trusted");
    assert_eq!((status, &body[..]), (200, &b"ok"[..]));

    // Bundled roots stay trusted alongside: a client still builds with SSL_CERT_FILE naming
    // a file with no certificate in it.
    let empty = dir.path().join("empty.pem");
    std::fs::write(&empty, "").unwrap();
    std::env::set_var("SSL_CERT_FILE", &empty);
    let refused = probe(&url)
        .await
        .expect_err("the private CA is no longer named");
    assert!(
        refused.message.contains("certificate"),
        "{}",
        refused.message
    );
    std::env::remove_var("SSL_CERT_FILE");
}
