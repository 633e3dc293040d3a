//! A TSA: `openssl ts -reply` with a configuration file, signing with a [`Pki`]'s TSA key.

use std::ffi::OsStr;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use tempfile::TempDir;

use super::command::{read, run, temp_dir, write, Digest, Error};
use super::hierarchy::Pki;

/// The digest of the ESS signing-certificate attribute (`ess_cert_id_alg`): SHA-1 makes a
/// SigningCertificate (ESSCertID), SHA-256 a SigningCertificateV2 (ESSCertIDv2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EssCertIdAlg {
    /// SHA-1: SigningCertificate (RFC 2634).
    Sha1,
    /// SHA-256: SigningCertificateV2 (RFC 5035).
    Sha256,
}

/// What the TSA's configuration section says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TsaOptions {
    /// `signer_digest`: the digest of the TSA's signature.
    pub signer_digest: Digest,
    /// `accuracy` (`secs:600`, `secs:1, millisecs:500`), none when `None`.
    pub accuracy: Option<String>,
    /// `clock_precision_digits`: decimal digits of genTime's fraction of a second (0 to 6).
    pub clock_precision_digits: u32,
    /// `ess_cert_id_alg`.
    pub ess_cert_id_alg: EssCertIdAlg,
    /// `ess_cert_id_chain`: whether the ESS attribute also names the chain's certificates.
    pub ess_cert_id_chain: bool,
    /// `certs`: whether the token carries the intermediates and the root (the TSA's own
    /// certificate is there when the query asks, `-cert`).
    pub include_chain: bool,
    /// `default_policy`: the policy OID of the tokens.
    pub policy: String,
    /// `tsa_name`: whether the TSTInfo names the TSA (its certificate's subject).
    pub tsa_name: bool,
    /// `ordering`.
    pub ordering: bool,
}

impl Default for TsaOptions {
    /// SHA-256, `accuracy = secs:1`, no fraction of a second, ESSCertIDv2 over SHA-256 naming
    /// the TSA only, chain included, policy 1.2.3.4.1, no TSA name, no ordering.
    fn default() -> TsaOptions {
        TsaOptions {
            signer_digest: Digest::Sha256,
            accuracy: Some("secs:1".into()),
            clock_precision_digits: 0,
            ess_cert_id_alg: EssCertIdAlg::Sha256,
            ess_cert_id_chain: false,
            include_chain: true,
            policy: "1.2.3.4.1".into(),
            tsa_name: false,
            ordering: false,
        }
    }
}

impl TsaOptions {
    /// The configuration file `openssl ts -reply -config` reads.
    fn config(&self) -> String {
        let yes_no = |b: bool| if b { "yes" } else { "no" };
        let mut c = String::from(
            "[ tsa ]\ndefault_tsa = tsa1\n[ tsa1 ]\nserial = ./tsaserial\ncrypto_device = builtin\n\
             signer_cert = ./tsa.pem\nsigner_key = ./tsa.key\n\
             digests = sha1, sha256, sha384, sha512\n",
        );
        if self.include_chain {
            c += "certs = ./certs.pem\n";
        }
        c += &format!("signer_digest = {}\n", self.signer_digest.name());
        c += &format!("default_policy = {}\n", self.policy);
        if let Some(accuracy) = &self.accuracy {
            c += &format!("accuracy = {accuracy}\n");
        }
        c += &format!(
            "clock_precision_digits = {}\nordering = {}\ntsa_name = {}\n\
             ess_cert_id_chain = {}\ness_cert_id_alg = {}\n",
            self.clock_precision_digits,
            yes_no(self.ordering),
            yes_no(self.tsa_name),
            yes_no(self.ess_cert_id_chain),
            match self.ess_cert_id_alg {
                EssCertIdAlg::Sha1 => "sha1",
                EssCertIdAlg::Sha256 => "sha256",
            }
        );
        c
    }
}

/// OpenSSL's TSA (`openssl ts -reply`), in a temporary directory that lives as long as the
/// value: the TSA's certificate and key, the chain and the configuration, copied from a [`Pki`].
#[derive(Debug)]
pub struct Tsa {
    dir: TempDir,
    /// Numbers the files of each call.
    calls: AtomicUsize,
    /// One reply at a time (`ts -reply` reads and rewrites the serial file).
    replying: Mutex<()>,
}

impl Tsa {
    /// A TSA signing with `pki`'s TSA key and certificate, configured by `options`.
    pub fn new(pki: &Pki, options: &TsaOptions) -> Result<Tsa, Error> {
        let dir = temp_dir()?;
        let d = dir.path();
        write(&d.join("tsa.pem"), read(&pki.tsa_pem())?)?;
        write(&d.join("tsa.key"), read(&pki.tsa_key())?)?;
        let certs = [read(&pki.chain_pem())?, read(&pki.ca_pem())?].concat();
        write(&d.join("certs.pem"), certs)?;
        write(&d.join("tsaserial"), "01\n")?;
        write(&d.join("tsa.cnf"), options.config())?;
        Ok(Tsa {
            dir,
            calls: AtomicUsize::new(0),
            replying: Mutex::new(()),
        })
    }

    /// Its directory (`tsa.cnf`, `tsa.pem`, `tsa.key`, `certs.pem`, `tsaserial`).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The TimeStampResp OpenSSL answers `query` with (`openssl ts -reply -queryfile`). OpenSSL
    /// exits with success also when it rejects the query or cannot sign, so this may be a
    /// rejection: see [`reply_text`].
    pub fn reply(&self, query: &[u8]) -> Result<Vec<u8>, Error> {
        self.answer(query, false)
    }

    /// The bare token (a ContentInfo) OpenSSL answers `query` with (`-token_out`); an error when
    /// it makes none.
    pub fn token(&self, query: &[u8]) -> Result<Vec<u8>, Error> {
        let token = self.answer(query, true)?;
        if token.is_empty() {
            return Err(Error {
                command: "openssl ts -reply -token_out".into(),
                output: "no token written".into(),
            });
        }
        Ok(token)
    }

    fn answer(&self, query: &[u8], token_out: bool) -> Result<Vec<u8>, Error> {
        let n = self.calls.fetch_add(1, Ordering::Relaxed);
        let (q, r) = (format!("q{n}.tsq"), format!("r{n}.tsr"));
        write(&self.dir().join(&q), query)?;
        let mut args = vec![
            "ts",
            "-reply",
            "-config",
            "tsa.cnf",
            "-queryfile",
            &q,
            "-out",
            &r,
        ];
        if token_out {
            args.push("-token_out");
        }
        let _one_at_a_time = self.replying.lock().unwrap_or_else(|e| e.into_inner());
        run(Some(self.dir()), &args)?;
        read(&self.dir().join(&r))
    }
}

/// A TimeStampReq for `data` hashed with `hash`, with a nonce, asking for the TSA's certificate
/// when `cert` (`openssl ts -query -data F -sha256 [-cert]`).
pub fn ts_query(data: &[u8], hash: Digest, cert: bool) -> Result<Vec<u8>, Error> {
    let dir = temp_dir()?;
    write(&dir.path().join("data"), data)?;
    let flag = hash.flag();
    let mut args = vec!["ts", "-query", "-data", "data", &flag, "-out", "q.tsq"];
    if cert {
        args.push("-cert");
    }
    run(Some(dir.path()), &args)?;
    read(&dir.path().join("q.tsq"))
}

/// What `openssl ts -reply -in R -text` prints of a TimeStampResp ("Status: Granted.",
/// "Accuracy: 0x0258 seconds, ...").
pub fn reply_text(reply: &[u8]) -> Result<String, Error> {
    text(reply, false)
}

/// What `openssl ts -reply -in T -token_in -text` prints of a bare token.
pub fn token_text(token: &[u8]) -> Result<String, Error> {
    text(token, true)
}

fn text(bytes: &[u8], token_in: bool) -> Result<String, Error> {
    let dir = temp_dir()?;
    write(&dir.path().join("in"), bytes)?;
    let mut args = vec!["ts", "-reply", "-in", "in", "-text"];
    if token_in {
        args.push("-token_in");
    }
    run(Some(dir.path()), &args)
}

/// The DER TSTInfo a token signs (its eContent), as `openssl cms -verify -noverify` writes it;
/// `signer_cert` (PEM) is given as `-certfile`, for tokens that do not carry it.
pub fn tst_info(token: &[u8], signer_cert: &Path) -> Result<Vec<u8>, Error> {
    let dir = temp_dir()?;
    let (input, output) = (dir.path().join("token"), dir.path().join("tst.der"));
    write(&input, token)?;
    let args: [&OsStr; 12] = [
        "cms".as_ref(),
        "-verify".as_ref(),
        "-noverify".as_ref(),
        "-inform".as_ref(),
        "DER".as_ref(),
        "-in".as_ref(),
        input.as_os_str(),
        "-binary".as_ref(),
        "-certfile".as_ref(),
        signer_cert.as_os_str(),
        "-out".as_ref(),
        output.as_os_str(),
    ];
    run(None, &args)?;
    read(&output)
}
