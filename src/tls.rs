//! TLS over rustls: to Postgres with libpq's `sslmode` semantics (disable, prefer, require,
//! verify-ca, verify-full) and `sslrootcert`, and to HTTPS targets (`--cacert`, `--insecure`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use percent_encoding::percent_decode_str;
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};

use crate::error::{Error, Result};

/// libpq's `sslmode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslMode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslMode {
    pub fn parse(text: &str) -> Result<SslMode> {
        Ok(match text.trim() {
            "disable" => SslMode::Disable,
            "allow" | "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            other => {
                return Err(Error::usage(format!("sslmode {other:?} is not supported"))
                    .with_hint("use disable, prefer, require, verify-ca or verify-full"));
            }
        })
    }

    /// What tokio-postgres itself must do: only whether TLS is attempted or required.
    pub fn transport(self) -> tokio_postgres::config::SslMode {
        match self {
            SslMode::Disable => tokio_postgres::config::SslMode::Disable,
            SslMode::Prefer => tokio_postgres::config::SslMode::Prefer,
            _ => tokio_postgres::config::SslMode::Require,
        }
    }
}

/// The TLS part of a connection string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsSettings {
    pub mode: SslMode,
    pub root_cert: Option<PathBuf>,
}

/// Takes `sslmode` and `sslrootcert` out of a URL or key=value string, which tokio-postgres
/// would reject, and returns the rest with them.
pub fn split_tls_options(text: &str) -> (String, Option<String>, Option<String>) {
    let mut mode = None;
    let mut root = None;
    let mut take = |key: &str, value: &str| match key {
        "sslmode" => {
            mode = Some(value.to_string());
            true
        }
        "sslrootcert" => {
            root = Some(value.to_string());
            true
        }
        _ => false,
    };
    let trimmed = text.trim();
    let rest = if trimmed.starts_with("postgres://") || trimmed.starts_with("postgresql://") {
        match trimmed.split_once('?') {
            Some((base, query)) => {
                let kept: Vec<&str> = query
                    .split('&')
                    .filter(|pair| {
                        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
                        !take(k, &percent_decode_str(v).decode_utf8_lossy())
                    })
                    .collect();
                if kept.is_empty() {
                    base.to_string()
                } else {
                    format!("{base}?{}", kept.join("&"))
                }
            }
            None => trimmed.to_string(),
        }
    } else {
        let mut kept = Vec::new();
        for token in kv_tokens(trimmed) {
            let (k, v) = token.split_once('=').unwrap_or((token.as_str(), ""));
            if !take(k.trim(), v.trim().trim_matches('\'')) {
                kept.push(token.clone());
            }
        }
        kept.join(" ")
    };
    (rest, mode, root)
}

/// Splits `key=value key='quoted value'` on whitespace outside single quotes.
fn kv_tokens(text: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    let mut escaped = false;
    for c in text.chars() {
        if escaped {
            current.push(c);
            escaped = false;
        } else if c == '\\' {
            current.push(c);
            escaped = true;
        } else if c == '\'' {
            current.push(c);
            quoted = !quoted;
        } else if c.is_whitespace() && !quoted {
            if !current.is_empty() {
                tokens.push(std::mem::take(&mut current));
            }
        } else {
            current.push(c);
        }
    }
    if !current.is_empty() {
        tokens.push(current);
    }
    tokens
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::aws_lc_rs::default_provider())
}

fn load_roots(path: &Path) -> Result<RootCertStore> {
    let mut roots = RootCertStore::empty();
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| Error::usage(format!("cannot read sslrootcert {}: {e}", path.display())))?;
    for cert in certs {
        let cert =
            cert.map_err(|e| Error::usage(format!("sslrootcert {}: {e}", path.display())))?;
        roots
            .add(cert)
            .map_err(|e| Error::usage(format!("sslrootcert {}: {e}", path.display())))?;
    }
    if roots.is_empty() {
        return Err(Error::usage(format!(
            "sslrootcert {} holds no certificate",
            path.display()
        )));
    }
    Ok(roots)
}

/// How much of the server's certificate a [`LenientVerifier`] checks.
#[derive(Debug)]
enum CertificateCheck {
    /// None of it: encrypts without checking who answers (sslmode=prefer/require without a
    /// root certificate, as in libpq; `--insecure`).
    Nothing,
    /// The chain against the root certificates, but not the host name (verify-ca).
    ChainOnly(Arc<WebPkiServerVerifier>),
}

/// A verifier that checks less of the certificate than WebPKI does, but still verifies the
/// handshake signatures, with the provider's algorithms as `WebPkiServerVerifier` does.
#[derive(Debug)]
struct LenientVerifier {
    check: CertificateCheck,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for LenientVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        let CertificateCheck::ChainOnly(chain) = &self.check else {
            return Ok(ServerCertVerified::assertion());
        };
        match chain.verify_server_cert(end_entity, intermediates, server_name, ocsp, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }
    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }
    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// The rustls client configuration for these settings; `None` means no TLS at all.
pub fn client_config(settings: &TlsSettings) -> Result<Option<ClientConfig>> {
    let provider = provider();
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::usage(format!("TLS setup: {e}")))?;
    let verifying = |roots: RootCertStore| {
        WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
            .build()
            .map_err(|e| Error::usage(format!("TLS setup: {e}")))
    };
    let verifier: Arc<dyn ServerCertVerifier> = match (settings.mode, &settings.root_cert) {
        (SslMode::Disable, _) => return Ok(None),
        (SslMode::Prefer, _) | (SslMode::Require, None) => Arc::new(LenientVerifier {
            check: CertificateCheck::Nothing,
            provider: provider.clone(),
        }),
        // As in libpq: require with a root certificate behaves like verify-ca.
        (SslMode::Require | SslMode::VerifyCa, Some(path)) => Arc::new(LenientVerifier {
            check: CertificateCheck::ChainOnly(verifying(load_roots(path)?)?),
            provider: provider.clone(),
        }),
        (SslMode::VerifyFull, Some(path)) => verifying(load_roots(path)?)?,
        (SslMode::VerifyCa | SslMode::VerifyFull, None) => {
            return Err(Error::usage("this sslmode verifies the server, but no root certificate was given")
                .with_hint("set sslrootcert=PATH in --db, or PGSSLROOTCERT, or put it in ~/.postgresql/root.crt"));
        }
    };
    Ok(Some(
        builder
            .dangerous()
            .with_custom_certificate_verifier(verifier)
            .with_no_client_auth(),
    ))
}

/// The rustls configuration of a burst to an HTTPS target: the platform's roots plus
/// `--cacert`, or no verification at all with `--insecure`. HTTP/1.1 only.
pub fn https_config(insecure: bool, ca_pem: Option<&[u8]>) -> Result<ClientConfig> {
    let provider = provider();
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::usage(format!("TLS setup: {e}")))?;
    let verifier: Arc<dyn ServerCertVerifier> = if insecure {
        Arc::new(LenientVerifier {
            check: CertificateCheck::Nothing,
            provider,
        })
    } else {
        let extra = match ca_pem {
            Some(pem) => CertificateDer::pem_slice_iter(pem)
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(|e| Error::usage(format!("--cacert is not a PEM certificate: {e}")))?,
            None => Vec::new(),
        };
        Arc::new(
            rustls_platform_verifier::Verifier::new_with_extra_roots(extra, provider)
                .map_err(|e| Error::usage(format!("TLS setup: {e}")))?,
        )
    };
    let mut config = builder
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tls_options_are_split_from_urls() {
        let (rest, mode, root) = split_tls_options(
            "postgres://u:pw@h:5432/d?sslmode=verify-full&application_name=x&sslrootcert=%2Ftmp%2Fca.pem",
        );
        assert_eq!(rest, "postgres://u:pw@h:5432/d?application_name=x");
        assert_eq!(mode.as_deref(), Some("verify-full"));
        assert_eq!(root.as_deref(), Some("/tmp/ca.pem"));
        let (rest, mode, _) = split_tls_options("postgres://h/d?sslmode=require");
        assert_eq!(
            (rest.as_str(), mode.as_deref()),
            ("postgres://h/d", Some("require"))
        );
    }

    #[test]
    fn tls_options_are_split_from_key_value_strings() {
        let (rest, mode, root) = split_tls_options(
            "host=h password='a b' sslmode=verify-ca sslrootcert='/x/ca.pem' dbname=d",
        );
        assert_eq!(rest, "host=h password='a b' dbname=d");
        assert_eq!(mode.as_deref(), Some("verify-ca"));
        assert_eq!(root.as_deref(), Some("/x/ca.pem"));
    }

    #[test]
    fn modes() {
        assert_eq!(SslMode::parse("verify-full").unwrap(), SslMode::VerifyFull);
        assert!(SslMode::parse("sometimes").is_err());
        let none = TlsSettings {
            mode: SslMode::VerifyFull,
            root_cert: None,
        };
        assert!(
            client_config(&none)
                .unwrap_err()
                .message
                .contains("no root certificate")
        );
        let disabled = TlsSettings {
            mode: SslMode::Disable,
            root_cert: None,
        };
        assert!(client_config(&disabled).unwrap().is_none());
        let require = TlsSettings {
            mode: SslMode::Require,
            root_cert: None,
        };
        assert!(client_config(&require).unwrap().is_some());
    }
}
