//! TLS to Postgres: sslmode and sslrootcert against a throwaway cluster with ssl=on and a
//! CA and server certificate made with openssl in the test.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use pgcost::postgres::conninfo;
use support::TestDb;

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("openssl");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A CA, and a server certificate for the name localhost (not for 127.0.0.1) signed by it.
fn make_certificates(dir: &Path) {
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=pgcost test CA",
            "-keyout",
            "ca.key",
            "-out",
            "ca.crt",
        ],
    );
    openssl(
        dir,
        &[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            "/CN=localhost",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
        ],
    );
    std::fs::write(dir.join("san.ext"), "subjectAltName=DNS:localhost\n").unwrap();
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            "san.ext",
            "-out",
            "server.crt",
        ],
    );
}

/// Hands a file to the server's OS user, as Postgres requires for its key.
fn give_to_server(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
    if nix::unistd::geteuid().is_root() {
        let user = nix::unistd::User::from_name("postgres").unwrap().unwrap();
        std::os::unix::fs::chown(path, Some(user.uid.as_raw()), Some(user.gid.as_raw())).unwrap();
    }
}

async fn attempt(url: &str) -> Result<(), String> {
    let target = conninfo::resolve(Some(url), &|_: &str| None).map_err(|e| e.message)?;
    match pgcost::postgres::views::connect(&target).await {
        Ok(client) => {
            let row = client
                .query_one(
                    "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
                    &[],
                )
                .await;
            match row {
                Ok(row) if row.get::<_, bool>(0) => Ok(()),
                Ok(_) => Err("connected without TLS".into()),
                Err(e) => Err(e.to_string()),
            }
        }
        Err(e) => Err(format!(
            "{}\nhint: {}",
            e.message,
            e.hint.unwrap_or_default()
        )),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sslmode_is_honoured() {
    let db = TestDb::start().await;
    let dir = db.cluster.dir().to_path_buf();
    let certs = tempfile::tempdir().unwrap();
    make_certificates(certs.path());
    for file in ["server.crt", "server.key"] {
        let target = dir.join(file);
        std::fs::copy(certs.path().join(file), &target).unwrap();
        give_to_server(&target);
    }
    let admin = db.connect("postgres").await;
    for setting in [
        format!(
            "ALTER SYSTEM SET ssl_cert_file = '{}'",
            dir.join("server.crt").display()
        ),
        format!(
            "ALTER SYSTEM SET ssl_key_file = '{}'",
            dir.join("server.key").display()
        ),
        "ALTER SYSTEM SET ssl = on".to_string(),
    ] {
        admin.batch_execute(&setting).await.unwrap();
    }
    admin
        .batch_execute("SELECT pg_reload_conf()")
        .await
        .unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;

    let ca: PathBuf = certs.path().join("ca.crt");
    let port = db.cluster.port;
    let url = |host: &str, query: &str| format!("postgres://postgres@{host}:{port}/app?{query}");

    attempt(&url("127.0.0.1", "sslmode=require"))
        .await
        .expect("require");
    attempt(&url(
        "localhost",
        &format!("sslmode=verify-full&sslrootcert={}", ca.display()),
    ))
    .await
    .expect("verify-full with the right CA");
    attempt(&format!(
        "host=127.0.0.1 port={port} user=postgres dbname=app sslmode=verify-ca sslrootcert='{}'",
        ca.display()
    ))
    .await
    .expect("verify-ca in key=value form");

    // The certificate names localhost, not the address 127.0.0.1.
    let err = attempt(&url(
        "127.0.0.1",
        &format!("sslmode=verify-full&sslrootcert={}", ca.display()),
    ))
    .await
    .expect_err("hostname mismatch");
    assert!(err.contains("cannot connect"), "{err}");
    assert!(err.contains("does not name this host"), "{err}");

    // A server that demands TLS (hostssl-only pg_hba.conf) refuses sslmode=disable clearly.
    let hba = db.cluster.data_dir().join("pg_hba.conf");
    std::fs::write(
        &hba,
        "local all all trust\nhostssl all all 127.0.0.1/32 trust\n",
    )
    .unwrap();
    admin
        .batch_execute("SELECT pg_reload_conf()")
        .await
        .unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let err = attempt(&url("127.0.0.1", "sslmode=disable"))
        .await
        .expect_err("plain connection refused");
    assert!(err.contains("no encryption"), "{err}");
    assert!(err.contains("sslmode=require"), "{err}");
    attempt(&url("127.0.0.1", "sslmode=require"))
        .await
        .expect("TLS still accepted");
}

/// Serves 204 over HTTPS on a free loopback port with the given certificate and key.
async fn https_server(cert: &Path, key: &Path) -> u16 {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .unwrap()
        .map(|c| c.unwrap())
        .collect();
    let key = PrivateKeyDer::from_pem_file(key).unwrap();
    let config = rustls::ServerConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::aws_lc_rs::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(certs, key)
    .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(std::sync::Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let router = axum::Router::new().route(
        "/static",
        axum::routing::get(|| async { axum::http::StatusCode::NO_CONTENT }),
    );
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                return;
            };
            let (acceptor, router) = (acceptor.clone(), router.clone());
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let service = hyper_util::service::TowerToHyperService::new(router);
                let _ = hyper_util::server::conn::auto::Builder::new(
                    hyper_util::rt::TokioExecutor::new(),
                )
                .serve_connection(hyper_util::rt::TokioIo::new(tls), service)
                .await;
            });
        }
    });
    port
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_targets_with_cacert_or_insecure() {
    let db = TestDb::start().await;
    let certs = tempfile::tempdir().unwrap();
    make_certificates(certs.path());
    let port = https_server(
        &certs.path().join("server.crt"),
        &certs.path().join("server.key"),
    )
    .await;
    let url = format!("https://localhost:{port}/static");
    let ca = certs.path().join("ca.crt");
    let run = |extra: Vec<String>| {
        let mut cmd = support::pgcost();
        cmd.args([
            "audit", "-n", "20", "-c", "2", "--warmup", "2", "--format", "json", "--url", &url,
        ])
        .args(["--db", &db.url()])
        .args(extra);
        support::run_blocking(cmd)
    };

    // An unknown CA is refused before anything is measured.
    run(vec![])
        .code(2)
        .stderr(predicates::str::contains("certificate"));

    let assert = run(vec!["--cacert".into(), ca.display().to_string()]).code(0);
    let report: serde_json::Value = serde_json::from_slice(&assert.get_output().stdout).unwrap();
    assert_eq!(report["load"]["status"]["204"], 20);

    let assert = run(vec!["--insecure".into()]).code(0);
    let report: serde_json::Value = serde_json::from_slice(&assert.get_output().stdout).unwrap();
    assert!(
        report["warnings"].to_string().contains("--insecure"),
        "{}",
        report["warnings"]
    );
    let insecure = support::note(&report, "tls_insecure");
    assert_eq!(
        insecure["message"],
        "--insecure: the target's TLS certificate was not verified"
    );
}
