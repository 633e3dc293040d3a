//! OpenSSL's verdicts on tokens: `openssl ts -verify` and `openssl cms -verify`, returned, never
//! asserted.

use std::ffi::OsString;
use std::path::PathBuf;

use super::command::{openssl, temp_dir, write};

/// What a token is checked to be for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Imprint<'a> {
    /// `-data F`: these bytes, hashed as the token says.
    Data(&'a [u8]),
    /// `-digest HEX`: this hash of them.
    Digest(&'a [u8]),
    /// `-queryfile F`: this DER TimeStampReq (its imprint, nonce and policy).
    Query(&'a [u8]),
}

/// `openssl ts -verify -CAfile ca.pem [-untrusted U] [-attime T] [-partial_chain]
/// [-x509_strict]`: paths absolute or relative to the process's directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TsVerify {
    /// `-CAfile`: the trusted certificates.
    pub ca_file: PathBuf,
    /// `-untrusted`: more certificates to build the chain from (not an empty file: OpenSSL
    /// refuses "Could not read any extra untrusted certs").
    pub untrusted: Option<PathBuf>,
    /// `-attime`: check the certificates at this time (seconds since the Unix epoch) instead
    /// of now.
    pub attime: Option<i64>,
    /// `-partial_chain`: a trusted intermediate may end the chain.
    pub partial_chain: bool,
    /// `-x509_strict`.
    pub x509_strict: bool,
}

impl TsVerify {
    /// Against the certificates of `ca_file`, nothing else.
    pub fn new(ca_file: impl Into<PathBuf>) -> TsVerify {
        TsVerify {
            ca_file: ca_file.into(),
            untrusted: None,
            attime: None,
            partial_chain: false,
            x509_strict: false,
        }
    }

    /// The same, checking the certificates at `unix` (`-attime`).
    pub fn at(self, unix: i64) -> TsVerify {
        TsVerify {
            attime: Some(unix),
            ..self
        }
    }

    /// OpenSSL's verdict on a TimeStampResp: (accepted, what it printed). Accepted when it
    /// exits with success and prints "Verification: OK".
    pub fn reply(&self, reply: &[u8], imprint: Imprint<'_>) -> (bool, String) {
        self.verify(reply, false, imprint)
    }

    /// OpenSSL's verdict on a bare token (`-token_in`): (accepted, what it printed).
    pub fn token(&self, token: &[u8], imprint: Imprint<'_>) -> (bool, String) {
        self.verify(token, true, imprint)
    }

    fn verify(&self, input: &[u8], token_in: bool, imprint: Imprint<'_>) -> (bool, String) {
        let dir = temp_dir().expect("a temporary directory for openssl ts -verify");
        let file = |name: &str, bytes: &[u8]| {
            let path = dir.path().join(name);
            write(&path, bytes).expect("openssl ts -verify's input is written");
            path.into_os_string()
        };
        let mut args: Vec<OsString> = vec!["ts".into(), "-verify".into()];
        args.extend(["-in".into(), file("in", input)]);
        if token_in {
            args.push("-token_in".into());
        }
        match imprint {
            Imprint::Data(data) => args.extend(["-data".into(), file("data", data)]),
            Imprint::Digest(hash) => args.extend(["-digest".into(), hex(hash).into()]),
            Imprint::Query(query) => args.extend(["-queryfile".into(), file("q.tsq", query)]),
        }
        args.extend(["-CAfile".into(), self.ca_file.clone().into_os_string()]);
        if let Some(untrusted) = &self.untrusted {
            args.extend(["-untrusted".into(), untrusted.clone().into_os_string()]);
        }
        common_options(&mut args, self.attime, self.partial_chain, self.x509_strict);
        let (ok, output) = openssl(None, &args).expect("openssl runs");
        (ok && output.contains("Verification: OK"), output)
    }
}

/// `openssl cms -verify -inform DER -binary -CAfile ca.pem [-certfile F] [-purpose P] [-cades]
/// [-attime T] [-partial_chain] [-x509_strict]`: paths absolute or relative to the process's
/// directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CmsVerify {
    /// `-CAfile`: the trusted certificates.
    pub ca_file: PathBuf,
    /// `-certfile`: more certificates, where OpenSSL 3.0 looks for the signer's certificate
    /// only: it builds the chain from the token's certificates and `-CAfile` (there is no
    /// `-untrusted` for `cms` in 3.0).
    pub certfile: Option<PathBuf>,
    /// `-purpose` (`any`; without it OpenSSL checks for S/MIME signing, which a TSA's critical
    /// extendedKeyUsage timeStamping does not allow).
    pub purpose: Option<String>,
    /// `-cades`: check the ESS signing-certificate attribute against the signer.
    pub cades: bool,
    /// `-attime`: check the certificates at this time (seconds since the Unix epoch).
    pub attime: Option<i64>,
    /// `-partial_chain`.
    pub partial_chain: bool,
    /// `-x509_strict`.
    pub x509_strict: bool,
}

impl CmsVerify {
    /// Against the certificates of `ca_file`, `-purpose any -cades`.
    pub fn new(ca_file: impl Into<PathBuf>) -> CmsVerify {
        CmsVerify {
            ca_file: ca_file.into(),
            certfile: None,
            purpose: Some("any".into()),
            cades: true,
            attime: None,
            partial_chain: false,
            x509_strict: false,
        }
    }

    /// OpenSSL's verdict on a DER ContentInfo: (accepted, what it printed). Accepted when it
    /// exits with success and prints "Verification successful".
    pub fn verify(&self, token: &[u8]) -> (bool, String) {
        let dir = temp_dir().expect("a temporary directory for openssl cms -verify");
        let (input, content) = (dir.path().join("in"), dir.path().join("content"));
        write(&input, token).expect("openssl cms -verify's input is written");
        let mut args: Vec<OsString> = ["cms", "-verify", "-inform", "DER", "-binary"]
            .map(OsString::from)
            .to_vec();
        args.extend(["-in".into(), input.into_os_string()]);
        args.extend(["-out".into(), content.into_os_string()]);
        args.extend(["-CAfile".into(), self.ca_file.clone().into_os_string()]);
        if let Some(certfile) = &self.certfile {
            args.extend(["-certfile".into(), certfile.clone().into_os_string()]);
        }
        if let Some(purpose) = &self.purpose {
            args.extend(["-purpose".into(), purpose.into()]);
        }
        if self.cades {
            args.push("-cades".into());
        }
        common_options(&mut args, self.attime, self.partial_chain, self.x509_strict);
        let (ok, output) = openssl(None, &args).expect("openssl runs");
        (ok && output.contains("Verification successful"), output)
    }
}

/// The chain options both verifiers take.
fn common_options(args: &mut Vec<OsString>, attime: Option<i64>, partial: bool, strict: bool) {
    if let Some(t) = attime {
        args.extend(["-attime".into(), t.to_string().into()]);
    }
    if partial {
        args.push("-partial_chain".into());
    }
    if strict {
        args.push("-x509_strict".into());
    }
}

/// Lowercase hex.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
