//! A test certificate authority (rcgen): leaf certificates for `localhost` and `127.0.0.1`
//! written as PEM files, and a rustls client that trusts only this CA.

use std::path::Path;
use std::sync::Arc;

use qore_serve::listen::TlsFiles;
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};
use rustls_pki_types::CertificateDer;

pub struct TestCa {
    issuer: CertifiedIssuer<'static, KeyPair>,
}

/// A leaf certificate written to files.
pub struct Leaf {
    pub files: TlsFiles,
    pub der: CertificateDer<'static>,
}

impl TestCa {
    pub fn new() -> TestCa {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        (params.distinguished_name).push(DnType::CommonName, "qore test CA");
        let issuer = CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap();
        TestCa { issuer }
    }

    /// The CA's certificate, PEM.
    pub fn pem(&self) -> String {
        self.issuer.pem()
    }

    /// Write the CA's certificate to `path`.
    pub fn write(&self, path: &Path) {
        std::fs::write(path, self.pem()).unwrap();
    }

    /// A new leaf for `localhost` and `127.0.0.1` named `name` (its common name), written to
    /// `dir/NAME.crt` and `dir/NAME.key`.
    pub fn leaf(&self, dir: &Path, name: &str) -> Leaf {
        let sans = vec!["localhost".to_owned(), "127.0.0.1".to_owned()];
        let mut params = CertificateParams::new(sans).unwrap();
        params.distinguished_name.push(DnType::CommonName, name);
        let key = KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        let files = TlsFiles {
            cert: dir.join(format!("{name}.crt")),
            key: dir.join(format!("{name}.key")),
        };
        std::fs::write(&files.cert, cert.pem()).unwrap();
        std::fs::write(&files.key, key.serialize_pem()).unwrap();
        Leaf {
            files,
            der: cert.der().clone(),
        }
    }

    /// A TLS client trusting only this CA, offering `alpn`.
    pub fn connector(&self, alpn: &[&[u8]]) -> tokio_rustls::TlsConnector {
        let mut roots = rustls::RootCertStore::empty();
        roots.add(self.issuer.der().clone()).unwrap();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
        config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
        tokio_rustls::TlsConnector::from(Arc::new(config))
    }

    /// The certificate `addr` serves now (a new connection and handshake).
    pub async fn served(&self, addr: &str) -> CertificateDer<'static> {
        let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
        let name = rustls_pki_types::ServerName::try_from("localhost").unwrap();
        let tls = self.connector(&[]).connect(name, tcp).await.unwrap();
        let certs = tls.get_ref().1.peer_certificates().unwrap();
        certs[0].clone().into_owned()
    }

    /// A reqwest client trusting only this CA.
    pub fn http(&self) -> reqwest::ClientBuilder {
        let ca = reqwest::Certificate::from_pem(self.pem().as_bytes()).unwrap();
        reqwest::Client::builder()
            .tls_built_in_root_certs(false)
            .add_root_certificate(ca)
    }
}
