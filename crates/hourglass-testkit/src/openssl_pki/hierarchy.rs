//! Certificate hierarchies (a root, intermediate CAs, a TSA) made by `openssl ca`.

use std::path::{Path, PathBuf};

use tempfile::TempDir;

use super::command::{asn1_time, read, run, temp_dir, unix_now, write, Digest, Error};
use super::keys::{generate, KeyKind};
use super::verify::{CmsVerify, TsVerify};

/// The commonName of [`CertSpec::intermediate`].
pub const INTERMEDIATE_NAME: &str = "OpenSSL Test Intermediate CA";

/// A certificate's basicConstraints extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BasicConstraints {
    /// `critical,CA:TRUE`, with `pathlen:N` when given.
    Ca(Option<u32>),
    /// `critical,CA:FALSE`.
    NotCa,
    /// No basicConstraints extension at all.
    Absent,
}

/// One certificate of a hierarchy: its key and what its issuer writes in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CertSpec {
    /// The subject's commonName (given to `openssl req -subj /CN=...`).
    pub common_name: String,
    /// The kind of the certificate's own key.
    pub key: KeyKind,
    /// The digest of the issuer's signature (`-md`); not given to OpenSSL when the issuer's key
    /// is Ed25519, which signs without a separate digest.
    pub digest: Digest,
    /// Whether the issuer signs with RSA-PSS (`-sigopt rsa_padding_mode:pss`, salt as long as
    /// the digest); an RSA issuer only.
    pub pss: bool,
    /// basicConstraints.
    pub basic_constraints: BasicConstraints,
    /// keyUsage, as OpenSSL's configuration writes it (`critical,keyCertSign,cRLSign`).
    pub key_usage: Option<String>,
    /// extendedKeyUsage, as OpenSSL's configuration writes it (`critical,timeStamping`).
    pub extended_key_usage: Option<String>,
    /// More extension lines for the issuer's extension section (`certificatePolicies = 1.2.3`).
    pub extra_extensions: Vec<String>,
    /// notBefore, in seconds since the Unix epoch.
    pub not_before: i64,
    /// notAfter, in seconds since the Unix epoch (OpenSSL does not check that it is later).
    pub not_after: i64,
}

impl CertSpec {
    /// A root CA: `critical,CA:TRUE`, keyUsage `critical,keyCertSign,cRLSign`, SHA-256, valid
    /// from a year ago for ten years.
    pub fn root(key: KeyKind) -> CertSpec {
        let now = unix_now();
        CertSpec {
            common_name: "OpenSSL Test Root CA".into(),
            key,
            digest: Digest::Sha256,
            pss: false,
            basic_constraints: BasicConstraints::Ca(None),
            key_usage: Some("critical,keyCertSign,cRLSign".into()),
            extended_key_usage: None,
            extra_extensions: Vec::new(),
            not_before: now - 365 * 86_400,
            not_after: now + 3650 * 86_400,
        }
    }

    /// An intermediate CA: as [`CertSpec::root`], named [`INTERMEDIATE_NAME`] (numbered by
    /// [`HierarchySpec::with_intermediate`]).
    pub fn intermediate(key: KeyKind) -> CertSpec {
        CertSpec {
            common_name: INTERMEDIATE_NAME.into(),
            ..CertSpec::root(key)
        }
    }

    /// A TSA: `critical,CA:FALSE`, keyUsage `critical,digitalSignature`, extendedKeyUsage
    /// `critical,timeStamping`, SHA-256, valid from a day ago for five years.
    pub fn tsa(key: KeyKind) -> CertSpec {
        let now = unix_now();
        CertSpec {
            common_name: "OpenSSL Test TSA".into(),
            basic_constraints: BasicConstraints::NotCa,
            key_usage: Some("critical,digitalSignature".into()),
            extended_key_usage: Some("critical,timeStamping".into()),
            not_before: now - 86_400,
            not_after: now + 5 * 365 * 86_400,
            ..CertSpec::root(key)
        }
    }

    /// The same with basicConstraints `bc`.
    pub fn basic_constraints(self, bc: BasicConstraints) -> CertSpec {
        CertSpec {
            basic_constraints: bc,
            ..self
        }
    }

    /// The same, valid from `not_before` to `not_after` (seconds since the Unix epoch).
    pub fn validity(self, not_before: i64, not_after: i64) -> CertSpec {
        CertSpec {
            not_before,
            not_after,
            ..self
        }
    }

    /// The same, signed by its issuer with `digest`, and RSA-PSS when `pss`.
    pub fn signed_with(self, digest: Digest, pss: bool) -> CertSpec {
        CertSpec {
            digest,
            pss,
            ..self
        }
    }

    /// The extension section `openssl ca -extfile` reads.
    fn extensions(&self) -> String {
        let mut lines = Vec::new();
        match self.basic_constraints {
            BasicConstraints::Ca(None) => lines.push("basicConstraints = critical,CA:TRUE".into()),
            BasicConstraints::Ca(Some(n)) => {
                lines.push(format!("basicConstraints = critical,CA:TRUE,pathlen:{n}"));
            }
            BasicConstraints::NotCa => lines.push("basicConstraints = critical,CA:FALSE".into()),
            BasicConstraints::Absent => {}
        }
        if let Some(ku) = &self.key_usage {
            lines.push(format!("keyUsage = {ku}"));
        }
        if let Some(eku) = &self.extended_key_usage {
            lines.push(format!("extendedKeyUsage = {eku}"));
        }
        lines.extend(self.extra_extensions.iter().cloned());
        lines.iter().map(|l| format!("{l}\n")).collect()
    }
}

/// A hierarchy: a self-signed root, the CAs below it (root-side first: the root issues the
/// first, which issues the next), and a TSA issued by the last CA (by the root when none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HierarchySpec {
    /// The self-signed root.
    pub root: CertSpec,
    /// The intermediate CAs, root-side first.
    pub intermediates: Vec<CertSpec>,
    /// The TSA certificate.
    pub tsa: CertSpec,
}

impl HierarchySpec {
    /// A root and a TSA it issued, RSA-2048 root and TSA with the defaults of [`CertSpec`].
    pub fn rsa() -> HierarchySpec {
        HierarchySpec::new(
            CertSpec::root(KeyKind::Rsa(2048)),
            CertSpec::tsa(KeyKind::Rsa(2048)),
        )
    }

    /// A root and a TSA it issued.
    pub fn new(root: CertSpec, tsa: CertSpec) -> HierarchySpec {
        HierarchySpec {
            root,
            intermediates: Vec::new(),
            tsa,
        }
    }

    /// The same with `ca` below the intermediates there are (between them and the TSA). When
    /// its commonName is [`INTERMEDIATE_NAME`], its number is appended ("... CA 1" below the
    /// root, "... CA 2" below that): a CA issued by one of the same name is self-issued, and
    /// path lengths do not count it.
    pub fn with_intermediate(mut self, mut ca: CertSpec) -> HierarchySpec {
        if ca.common_name == INTERMEDIATE_NAME {
            ca.common_name = format!("{INTERMEDIATE_NAME} {}", self.intermediates.len() + 1);
        }
        self.intermediates.push(ca);
        self
    }
}

/// The configuration `openssl ca` runs with: its database in the directory, any subject.
const CA_CONFIG: &str = "[ ca ]\ndefault_ca = CA_default\n[ CA_default ]\n\
    database = ./index.txt\nnew_certs_dir = ./newcerts\nserial = ./serial\n\
    default_md = default\npolicy = policy_any\nunique_subject = no\nemail_in_dn = no\n\
    [ policy_any ]\ncommonName = supplied\n";

/// A hierarchy made by OpenSSL, in a temporary directory that lives as long as the value:
/// `ca.pem` (the root), `chain.pem` (the intermediates, TSA-side first; empty when none),
/// `tsa.pem`, `tsa.key` and `all.pem` (TSA, intermediates TSA-side first, root); and each
/// certificate's own `root.pem`/`root.key`, `ca1.pem`/`ca1.key` (below the root), ...
#[derive(Debug)]
pub struct Pki {
    dir: TempDir,
    spec: HierarchySpec,
}

impl Pki {
    /// Makes the keys (`openssl genpkey`), the requests (`openssl req`) and the certificates
    /// (`openssl ca`, with `-startdate`/`-enddate`; `-selfsign` for the root) of `spec`.
    pub fn build(spec: &HierarchySpec) -> Result<Pki, Error> {
        let dir = temp_dir()?;
        let d = dir.path();
        write(&d.join("ca.cnf"), CA_CONFIG)?;
        write(&d.join("index.txt"), "")?;
        write(&d.join("serial"), "1000\n")?;
        std::fs::create_dir_all(d.join("newcerts"))
            .map_err(|e| super::command::io_error("creating", &d.join("newcerts"), &e))?;
        let n = spec.intermediates.len();
        let names: Vec<String> = std::iter::once("root".to_string())
            .chain((1..=n).map(|i| format!("ca{i}")))
            .chain(std::iter::once("tsa".to_string()))
            .collect();
        let certs: Vec<&CertSpec> = std::iter::once(&spec.root)
            .chain(&spec.intermediates)
            .chain(std::iter::once(&spec.tsa))
            .collect();
        for (i, (name, cert)) in names.iter().zip(&certs).enumerate() {
            let issuer = i.checked_sub(1).map(|j| (names[j].as_str(), certs[j].key));
            issue(d, name, cert, issuer)?;
        }
        let pem = |name: &str| read(&d.join(format!("{name}.pem")));
        let mut chain = Vec::new();
        for name in names[1..=n].iter().rev() {
            chain.extend(pem(name)?);
        }
        write(&d.join("ca.pem"), pem("root")?)?;
        write(&d.join("chain.pem"), &chain)?;
        write(
            &d.join("all.pem"),
            [pem("tsa")?, chain, pem("root")?].concat(),
        )?;
        Ok(Pki {
            dir,
            spec: spec.clone(),
        })
    }

    /// The directory of its files.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// What it was made from.
    pub fn spec(&self) -> &HierarchySpec {
        &self.spec
    }

    /// The root certificate (PEM): the trust anchor.
    pub fn ca_pem(&self) -> PathBuf {
        self.dir().join("ca.pem")
    }

    /// The intermediate certificates (PEM), TSA-side first; an empty file when there are none.
    pub fn chain_pem(&self) -> PathBuf {
        self.dir().join("chain.pem")
    }

    /// The TSA's certificate (PEM).
    pub fn tsa_pem(&self) -> PathBuf {
        self.dir().join("tsa.pem")
    }

    /// The TSA's private key (PEM, PKCS#8, unencrypted).
    pub fn tsa_key(&self) -> PathBuf {
        self.dir().join("tsa.key")
    }

    /// Every certificate (PEM): the TSA's, the intermediates TSA-side first, the root.
    pub fn all_pem(&self) -> PathBuf {
        self.dir().join("all.pem")
    }

    /// The certificate (PEM) of intermediate `i`, 0 the one the root issued.
    pub fn intermediate_pem(&self, i: usize) -> PathBuf {
        self.dir().join(format!("ca{}.pem", i + 1))
    }

    /// A certificate as DER (`openssl x509 -outform DER`), from one of its PEM files.
    pub fn der(&self, pem: &Path) -> Result<Vec<u8>, Error> {
        let tmp = temp_dir()?;
        let out = tmp.path().join("cert.der");
        run(
            None,
            &[
                "x509".as_ref(),
                "-in".as_ref(),
                pem.as_os_str(),
                "-outform".as_ref(),
                "DER".as_ref(),
                "-out".as_ref(),
                out.as_os_str(),
            ],
        )?;
        read(&out)
    }

    /// `openssl ts -verify` against this root, with the intermediates as `-untrusted` when
    /// there are any (an empty `-untrusted` file is an error to OpenSSL).
    pub fn ts_verify(&self) -> TsVerify {
        let untrusted = (!self.spec.intermediates.is_empty()).then(|| self.chain_pem());
        TsVerify {
            untrusted,
            ..TsVerify::new(self.ca_pem())
        }
    }

    /// `openssl cms -verify -purpose any -cades` against this root. The intermediates must be
    /// in the token: OpenSSL 3.0 builds no chain from `-certfile`.
    pub fn cms_verify(&self) -> CmsVerify {
        CmsVerify::new(self.ca_pem())
    }
}

/// Makes `name.key`, `name.csr` and `name.pem` in `d`, issued by `issuer` (the name of its files
/// and its key's kind), self-signed when `None`.
fn issue(
    d: &Path,
    name: &str,
    cert: &CertSpec,
    issuer: Option<(&str, KeyKind)>,
) -> Result<(), Error> {
    let (key, csr, ext) = (
        format!("{name}.key"),
        format!("{name}.csr"),
        format!("{name}.ext"),
    );
    generate(cert.key, &d.join(&key))?;
    let subject = format!("/CN={}", cert.common_name);
    run(
        Some(d),
        &["req", "-new", "-key", &key, "-subj", &subject, "-out", &csr],
    )?;
    write(&d.join(&ext), cert.extensions())?;
    let (start, end) = (asn1_time(cert.not_before), asn1_time(cert.not_after));
    let out = format!("{name}.pem");
    let mut args: Vec<String> = [
        "ca",
        "-batch",
        "-config",
        "ca.cnf",
        "-notext",
        "-in",
        &csr,
        "-out",
        &out,
        "-extfile",
        &ext,
        "-startdate",
        &start,
        "-enddate",
        &end,
    ]
    .map(String::from)
    .to_vec();
    let issuer_kind = match issuer {
        None => {
            args.extend(["-selfsign".into(), "-keyfile".into(), key]);
            cert.key
        }
        Some((issuer, kind)) => {
            let (pem, key) = (format!("{issuer}.pem"), format!("{issuer}.key"));
            args.extend(["-cert".into(), pem, "-keyfile".into(), key]);
            kind
        }
    };
    if issuer_kind != KeyKind::Ed25519 {
        args.extend(["-md".into(), cert.digest.name().into()]);
    }
    if cert.pss {
        args.extend(
            [
                "-sigopt",
                "rsa_padding_mode:pss",
                "-sigopt",
                "rsa_pss_saltlen:digest",
            ]
            .map(String::from),
        );
    }
    run(Some(d), &args).map(drop)
}
