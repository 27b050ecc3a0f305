//! Minting a JWT the way the app's login does: a key, an algorithm and claims in, a signed
//! token out; and reading when a token expires. Pure: the clock and the token id are
//! arguments.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Map, Value};
use uuid::Uuid;

use crate::error::{Error, Result};

/// The algorithms pgcost mints with, for messages.
pub const ALGORITHMS: &str = "HS256, HS384, HS512, RS256 or ES256";

/// Claims pgcost always sets itself.
const FRESH_CLAIMS: [&str; 3] = ["iat", "exp", "jti"];

/// Parses `--jwt-alg`, in any case.
pub fn parse_algorithm(text: &str) -> Result<Algorithm> {
    match text.trim().to_ascii_uppercase().as_str() {
        "HS256" => Ok(Algorithm::HS256),
        "HS384" => Ok(Algorithm::HS384),
        "HS512" => Ok(Algorithm::HS512),
        "RS256" => Ok(Algorithm::RS256),
        "ES256" => Ok(Algorithm::ES256),
        _ => Err(Error::usage(format!("--jwt-alg {text:?} is not supported"))
            .with_hint(format!("use {ALGORITHMS}"))),
    }
}

fn is_hmac(algorithm: Algorithm) -> bool {
    matches!(
        algorithm,
        Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512
    )
}

/// A signing key and its algorithm. `Debug` never shows the key.
pub struct Signer {
    algorithm: Algorithm,
    key: EncodingKey,
}

impl std::fmt::Debug for Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Signer({:?}, key <redacted>)", self.algorithm)
    }
}

impl Signer {
    /// HMAC with a shared secret; HS256 unless `algorithm` says otherwise.
    pub fn secret(algorithm: Option<Algorithm>, secret: &[u8]) -> Result<Signer> {
        let algorithm = algorithm.unwrap_or(Algorithm::HS256);
        if !is_hmac(algorithm) {
            return Err(Error::usage(format!(
                "--jwt-alg {algorithm:?} signs with a private key, not a shared secret"
            ))
            .with_hint("pass the PEM private key with --jwt-key-file"));
        }
        if secret.is_empty() {
            return Err(Error::usage("the JWT secret is empty")
                .with_hint("check the variable or file it is read from"));
        }
        let key = EncodingKey::from_secret(secret)
            .map_err(|e| Error::usage(format!("cannot use the JWT secret: {e}")))?;
        Ok(Signer { algorithm, key })
    }

    /// RS256 or ES256 with a PEM private key. Without `algorithm`, the key's type decides.
    pub fn pem(algorithm: Option<Algorithm>, pem: &[u8]) -> Result<Signer> {
        let rsa = || Self::probe(Algorithm::RS256, EncodingKey::from_rsa_pem(pem));
        let ec = || Self::probe(Algorithm::ES256, EncodingKey::from_ec_pem(pem));
        let not_a_key = |expected: &str| {
            Error::usage(format!(
                "--jwt-key-file does not hold {expected} private key in PEM"
            ))
            .with_hint(
                "RS256 takes an RSA private key; ES256 a P-256 key in PKCS#8 \
                 (convert with: openssl pkcs8 -topk8 -nocrypt -in key.pem -out key-pkcs8.pem)",
            )
        };
        match algorithm {
            Some(Algorithm::RS256) => rsa().ok_or_else(|| not_a_key("an RSA")),
            Some(Algorithm::ES256) => ec().ok_or_else(|| not_a_key("a P-256")),
            Some(other) if is_hmac(other) => Err(Error::usage(format!(
                "--jwt-alg {other:?} signs with a shared secret, not a key file"
            ))
            .with_hint("use --jwt-secret-env or --jwt-secret-file, or --jwt-alg RS256 or ES256")),
            Some(other) => Err(
                Error::usage(format!("--jwt-alg {other:?} is not supported"))
                    .with_hint(format!("use {ALGORITHMS}")),
            ),
            None => rsa()
                .or_else(ec)
                .ok_or_else(|| not_a_key("an RSA or a P-256")),
        }
    }

    /// Keeps the key only if it can sign: a public key or a wrong curve fails here, not
    /// halfway through a token.
    fn probe(
        algorithm: Algorithm,
        key: jsonwebtoken::errors::Result<EncodingKey>,
    ) -> Option<Signer> {
        let key = key.ok()?;
        jsonwebtoken::crypto::sign(b"probe", &key, algorithm).ok()?;
        Some(Signer { algorithm, key })
    }

    pub fn algorithm(&self) -> Algorithm {
        self.algorithm
    }
}

/// What goes into a minted token besides `iat`, `exp` and `jti`, which are always fresh.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimSet {
    claims: Map<String, Value>,
    /// `exp` is `iat` plus this.
    pub ttl: Duration,
}

impl ClaimSet {
    /// The registered claims that have a flag of their own.
    pub fn new(
        subject: Option<&str>,
        issuer: Option<&str>,
        audience: Option<&str>,
        ttl: Duration,
    ) -> ClaimSet {
        let mut claims = Map::new();
        for (name, value) in [("sub", subject), ("iss", issuer), ("aud", audience)] {
            if let Some(value) = value {
                claims.insert(name.into(), Value::String(value.into()));
            }
        }
        ClaimSet { claims, ttl }
    }

    /// Adds one `--jwt-claim KEY=VALUE`: JSON when the value parses as JSON, a string
    /// otherwise.
    pub fn add(&mut self, text: &str) -> Result<()> {
        let (key, value) = text.split_once('=').ok_or_else(|| {
            Error::usage("--jwt-claim needs KEY=VALUE")
                .with_hint("e.g. --jwt-claim role=admin or --jwt-claim 'scopes=[\"read\"]'")
        })?;
        let key = key.trim();
        if key.is_empty() {
            return Err(Error::usage("--jwt-claim has an empty KEY"));
        }
        if FRESH_CLAIMS.contains(&key) {
            return Err(Error::usage(format!(
                "--jwt-claim {key}: pgcost sets iat, exp and jti itself"
            ))
            .with_hint("set the lifetime with --jwt-ttl"));
        }
        if self.claims.contains_key(key) {
            return Err(Error::usage(format!(
                "the JWT claim {key:?} is given twice"
            )));
        }
        let value = serde_json::from_str(value).unwrap_or_else(|_| Value::String(value.into()));
        self.claims.insert(key.to_string(), value);
        Ok(())
    }

    /// The payload as it will be signed at `now`.
    pub fn payload(&self, now: SystemTime, jti: Uuid) -> Map<String, Value> {
        let issued = unix_seconds(now);
        let mut payload = self.claims.clone();
        payload.insert("iat".into(), issued.into());
        payload.insert(
            "exp".into(),
            (issued + self.ttl.as_secs_f64().ceil() as u64).into(),
        );
        payload.insert("jti".into(), jti.to_string().into());
        payload
    }
}

fn unix_seconds(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Signs the claims, issued at `now`, with `jti` as the token id.
pub fn mint(signer: &Signer, claims: &ClaimSet, now: SystemTime, jti: Uuid) -> Result<String> {
    let header = Header::new(signer.algorithm);
    jsonwebtoken::encode(&header, &claims.payload(now, jti), &signer.key)
        .map_err(|e| Error::usage(format!("cannot sign the JWT: {e}")))
}

/// When a JWT expires, read without checking its signature. `None` when `token` is not a
/// JWT or has no numeric `exp`.
pub fn expires_at(token: &str) -> Option<SystemTime> {
    let claims: Value = jsonwebtoken::dangerous::insecure_decode_claims(token.trim()).ok()?;
    let exp = claims.get("exp")?.as_f64()?;
    (exp.is_finite() && exp >= 0.0).then(|| UNIX_EPOCH + Duration::from_secs_f64(exp))
}

#[cfg(test)]
mod tests {
    use super::*;
    use jsonwebtoken::{DecodingKey, Validation, decode};

    const RSA_PRIVATE: &str = include_str!("../../tests/keys/rsa-private.pem");
    const RSA_PUBLIC: &str = include_str!("../../tests/keys/rsa-public.pem");
    const EC_PRIVATE: &str = include_str!("../../tests/keys/ec-private.pem");
    const EC_PUBLIC: &str = include_str!("../../tests/keys/ec-public.pem");

    fn at(seconds: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(seconds)
    }

    fn id() -> Uuid {
        Uuid::from_u128(0x1234)
    }

    #[test]
    fn hs256_token_carries_every_claim() {
        let signer = Signer::secret(None, b"s3cret-s3cret").unwrap();
        let mut claims = ClaimSet::new(
            Some("42"),
            Some("https://app.test"),
            Some("api"),
            Duration::from_secs(3600),
        );
        claims.add("role=admin").unwrap();
        claims.add("scopes=[\"read\",\"write\"]").unwrap();
        claims.add("tenant=7").unwrap();
        claims.add("note=not json {").unwrap();
        let now = SystemTime::now();
        let token = mint(&signer, &claims, now, id()).unwrap();

        let mut validation = Validation::new(Algorithm::HS256);
        validation.set_issuer(&["https://app.test"]);
        validation.set_audience(&["api"]);
        let data = decode::<Value>(
            &token,
            &DecodingKey::from_secret(b"s3cret-s3cret").unwrap(),
            &validation,
        )
        .unwrap();
        let c = data.claims;
        assert_eq!(c["sub"], "42");
        assert_eq!(c["role"], "admin");
        assert_eq!(c["scopes"], serde_json::json!(["read", "write"]));
        assert_eq!(c["tenant"], 7);
        assert_eq!(c["note"], "not json {");
        assert_eq!(c["jti"], id().to_string());
        let iat = c["iat"].as_u64().unwrap();
        assert_eq!(iat, unix_seconds(now));
        assert_eq!(c["exp"].as_u64().unwrap(), iat + 3600);
        assert_eq!(expires_at(&token), Some(at(iat + 3600)));
    }

    #[test]
    fn hmac_variants_and_wrong_families() {
        for alg in [Algorithm::HS384, Algorithm::HS512] {
            let signer = Signer::secret(Some(alg), b"k3y-k3y-k3y").unwrap();
            let token = mint(
                &signer,
                &ClaimSet::new(None, None, None, Duration::from_secs(60)),
                at(1000),
                id(),
            )
            .unwrap();
            let mut validation = Validation::new(alg);
            validation.validate_exp = false;
            validation.required_spec_claims.clear();
            decode::<Value>(
                &token,
                &DecodingKey::from_secret(b"k3y-k3y-k3y").unwrap(),
                &validation,
            )
            .unwrap();
        }
        assert!(
            Signer::secret(Some(Algorithm::RS256), b"x")
                .unwrap_err()
                .message
                .contains("private key")
        );
        assert!(
            Signer::secret(None, b"")
                .unwrap_err()
                .message
                .contains("empty")
        );
        assert!(
            Signer::pem(Some(Algorithm::HS256), RSA_PRIVATE.as_bytes())
                .unwrap_err()
                .message
                .contains("shared secret")
        );
    }

    #[test]
    fn rs256_and_es256_from_pem() {
        let claims = ClaimSet::new(Some("u1"), None, None, Duration::from_secs(600));
        let cases = [
            (
                RSA_PRIVATE,
                DecodingKey::from_rsa_pem(RSA_PUBLIC.as_bytes()).unwrap(),
                Algorithm::RS256,
            ),
            (
                EC_PRIVATE,
                DecodingKey::from_ec_pem(EC_PUBLIC.as_bytes()).unwrap(),
                Algorithm::ES256,
            ),
        ];
        for (private, public, alg) in cases {
            // Inferred from the key, and given explicitly.
            for asked in [None, Some(alg)] {
                let signer = Signer::pem(asked, private.as_bytes()).unwrap();
                assert_eq!(signer.algorithm(), alg);
                let token = mint(&signer, &claims, SystemTime::now(), id()).unwrap();
                let data = decode::<Value>(&token, &public, &Validation::new(alg)).unwrap();
                assert_eq!(data.claims["sub"], "u1");
                assert_eq!(data.header.alg, alg);
            }
        }
        let err = Signer::pem(Some(Algorithm::ES256), RSA_PRIVATE.as_bytes()).unwrap_err();
        assert!(err.message.contains("P-256"), "{}", err.message);
        let err = Signer::pem(None, RSA_PUBLIC.as_bytes()).unwrap_err();
        assert!(err.message.contains("private key"), "{}", err.message);
        assert!(
            !format!("{:?}", Signer::pem(None, RSA_PRIVATE.as_bytes()).unwrap()).contains("MII")
        );
    }

    #[test]
    fn claims_that_pgcost_owns_or_that_repeat_are_refused() {
        let mut claims = ClaimSet::new(Some("1"), None, None, Duration::from_secs(1));
        assert!(claims.add("exp=1").unwrap_err().message.contains("itself"));
        assert!(claims.add("sub=2").unwrap_err().message.contains("twice"));
        assert!(claims.add("novalue").is_err());
        assert!(claims.add("=x").is_err());
        claims.add("aud=[\"a\",\"b\"]").unwrap();
        assert_eq!(
            claims.payload(at(10), id())["aud"],
            serde_json::json!(["a", "b"])
        );
    }

    #[test]
    fn algorithms_parse_in_any_case() {
        assert_eq!(parse_algorithm("hs512").unwrap(), Algorithm::HS512);
        assert_eq!(parse_algorithm("ES256").unwrap(), Algorithm::ES256);
        assert!(parse_algorithm("none").is_err());
        assert!(parse_algorithm("PS256").is_err());
    }

    #[test]
    fn expiry_of_non_jwts_is_unknown() {
        assert_eq!(expires_at("opaque-token"), None);
        assert_eq!(expires_at("a.b.c"), None);
        let signer = Signer::secret(None, b"secret").unwrap();
        let mut no_exp = ClaimSet::new(None, None, None, Duration::ZERO);
        no_exp.add("x=1").unwrap();
        let token = mint(&signer, &no_exp, at(100), id()).unwrap();
        assert_eq!(expires_at(&token), Some(at(100)));
    }
}
