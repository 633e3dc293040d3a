//! Timestamp tokens `openssl ts -reply` cannot make, signed by `openssl cms -sign` over the
//! TSTInfo of a token it did make.

use std::ffi::OsString;

use super::command::{read, run, temp_dir, write, Digest, Error};
use super::hierarchy::Pki;

/// id-ct-TSTInfo, the eContentType of a timestamp token.
pub const ID_CT_TSTINFO: &str = "1.2.840.113549.1.9.16.1.4";

/// How `openssl cms -sign` signs a token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CmsOptions {
    /// `-md`: the digest of the content and of the signed attributes; OpenSSL's default for
    /// the key when `None`.
    pub md: Option<Digest>,
    /// RSA-PSS with this `rsa_pss_saltlen` (`digest`, `max`, `32`) when given
    /// (`-keyopt rsa_padding_mode:pss -keyopt rsa_pss_saltlen:...`); the key's default padding
    /// (PKCS #1 v1.5 for RSA) when `None`.
    pub pss_saltlen: Option<String>,
    /// Whether the token carries the intermediates (`-certfile chain.pem`) besides the TSA's
    /// certificate, when there are any (`openssl cms -verify` 3.0 needs them there).
    pub include_chain: bool,
}

impl CmsOptions {
    /// RSA-PSS over `md`, the salt as long as the digest, the chain included.
    pub fn pss(md: Digest) -> CmsOptions {
        CmsOptions {
            md: Some(md),
            pss_saltlen: Some("digest".into()),
            include_chain: true,
        }
    }

    /// The key's own signature scheme over `md` (`None`: OpenSSL's default), the chain included.
    pub fn plain(md: Option<Digest>) -> CmsOptions {
        CmsOptions {
            md,
            pss_saltlen: None,
            include_chain: true,
        }
    }
}

impl Pki {
    /// A token over `tst_info` (a DER TSTInfo, say [`tst_info`](super::tsa::tst_info) of an
    /// OpenSSL token) signed with the TSA's key and certificate: `openssl cms -sign
    /// -econtent_type 1.2.840.113549.1.9.16.1.4 -binary -nodetach -cades -nosmimecap
    /// -outform DER`, so a ContentInfo of SignedData with eContentType id-ct-TSTInfo, the
    /// TSA's certificate, and signed attributes contentType, signingTime, messageDigest and
    /// SigningCertificateV2 (ESSCertIDv2, SHA-256).
    ///
    /// OpenSSL 3.0 cannot sign one with Ed25519 (see the module's documentation): an error.
    pub fn cms_token(&self, tst_info: &[u8], options: &CmsOptions) -> Result<Vec<u8>, Error> {
        let dir = temp_dir()?;
        let (input, output) = (dir.path().join("tst.der"), dir.path().join("token.der"));
        write(&input, tst_info)?;
        let mut args: Vec<OsString> = [
            "cms",
            "-sign",
            "-econtent_type",
            ID_CT_TSTINFO,
            "-binary",
            "-nodetach",
            "-cades",
            "-nosmimecap",
            "-outform",
            "DER",
        ]
        .map(OsString::from)
        .to_vec();
        args.extend(["-in".into(), input.into_os_string()]);
        args.extend(["-signer".into(), self.tsa_pem().into_os_string()]);
        args.extend(["-inkey".into(), self.tsa_key().into_os_string()]);
        args.extend(["-out".into(), output.clone().into_os_string()]);
        if let Some(md) = options.md {
            args.extend(["-md".into(), md.name().into()]);
        }
        if let Some(salt) = &options.pss_saltlen {
            args.extend(["-keyopt".into(), "rsa_padding_mode:pss".into()]);
            args.extend(["-keyopt".into(), format!("rsa_pss_saltlen:{salt}").into()]);
        }
        if options.include_chain && !self.spec().intermediates.is_empty() {
            args.extend(["-certfile".into(), self.chain_pem().into_os_string()]);
        }
        run(None, &args)?;
        read(&output)
    }
}
