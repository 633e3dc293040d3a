//! Certificate hierarchies and RFC 3161 timestamp authorities made by the `openssl` command line
//! (OpenSSL 3.0), and OpenSSL's verdicts on tokens, so that tests can check that a verifier
//! agrees with OpenSSL. It knows nothing of hourglass's own crates: what goes in and comes out
//! is paths and bytes. Everything is made by running `openssl` in a temporary directory that
//! lives as long as the value returned.
//!
//! - [`Key`]: a key pair of a [`KeyKind`] (`openssl genpkey`).
//! - [`Pki`]: a hierarchy described by a [`HierarchySpec`] of [`CertSpec`]s (key kind, the
//!   issuer's digest and padding, basicConstraints, keyUsage, extendedKeyUsage, validity), made
//!   by `openssl req` and `openssl ca`; files `ca.pem`, `chain.pem`, `tsa.pem`, `tsa.key`,
//!   `all.pem`.
//! - [`Tsa`]: `openssl ts -reply` with a configuration of [`TsaOptions`]; [`ts_query`] makes
//!   the queries, [`reply_text`] and [`token_text`] print what OpenSSL reads in a reply.
//! - [`Pki::cms_token`]: tokens `ts -reply` cannot make (RSA-PSS), by `openssl cms -sign` over
//!   the TSTInfo ([`tst_info`]) of an OpenSSL token.
//! - [`TsVerify`] and [`CmsVerify`]: `openssl ts -verify` and `openssl cms -verify`, returning
//!   (accepted, what OpenSSL printed), never asserting.
//!
//! ```
//! use hourglass_testkit::openssl_pki::*;
//!
//! let spec = HierarchySpec::new(CertSpec::root(KeyKind::P256), CertSpec::tsa(KeyKind::P384))
//!     .with_intermediate(CertSpec::intermediate(KeyKind::P256));
//! let pki = Pki::build(&spec).expect("openssl makes the hierarchy");
//! let tsa = Tsa::new(&pki, &TsaOptions::default()).expect("the TSA is set up");
//! let query = ts_query(b"data", Digest::Sha256, true).expect("openssl ts -query");
//! let reply = tsa.reply(&query).expect("openssl ts -reply");
//! let (ok, out) = pki.ts_verify().reply(&reply, Imprint::Data(b"data"));
//! assert!(ok, "{out}");
//! let (ok, out) = pki.ts_verify().reply(&reply, Imprint::Data(b"other data"));
//! assert!(!ok && out.contains("message imprint mismatch"), "{out}");
//! ```
//!
//! # What OpenSSL 3.0 (3.0.19) does, as this module's tests find
//!
//! Making things:
//! - `openssl x509 -req` has no `-not_before`/`-not_after` before 3.4 (only `-days`), so every
//!   certificate is made by `openssl ca -startdate -enddate` (`-selfsign` for the root). It
//!   checks neither that notAfter follows notBefore nor that the issuer is a CA, and adds the
//!   subject and authority key identifiers itself. With an Ed25519 issuer `-md` is ignored.
//! - `openssl ts -reply` signs with an expired or not yet valid certificate without a word.
//! - It will not sign with a certificate whose extendedKeyUsage is not `critical,timeStamping`
//!   (non-critical or absent): "invalid signer certificate purpose", no reply.
//! - It cannot sign with Ed25519 (its TSA code is PKCS #7): "signing not supported for this key
//!   type". It still exits with success and writes a rejection ("Status: Rejected.", "Error
//!   during signature generation."); with `-token_out` it fails and writes nothing.
//! - `openssl cms -sign` cannot sign with Ed25519 either: "no default digest" without `-md`,
//!   "invalid digest" with `-md sha512`. So OpenSSL 3.0 makes no Ed25519 token at all (an
//!   Ed25519 CA issuing the certificates is fine).
//! - `openssl cms -sign -cades` writes SignedData version 3, eContentType id-ct-TSTInfo, the
//!   signed attributes contentType, signingTime, messageDigest and SigningCertificateV2; with
//!   `-keyopt rsa_padding_mode:pss` the signature is RSASSA-PSS.
//!
//! `openssl ts -verify` refuses (each message as it prints it, after "Verify error:" for the
//! certificate checks):
//! - the token for other data: "message imprint mismatch"; another query's: "nonce mismatch";
//! - a token carrying its chain up to another root: "self-signed certificate in certificate
//!   chain"; an intermediate that is in neither the token nor `-untrusted`: "unable to get
//!   local issuer certificate"; an intermediate as the only trust anchor: "unable to get issuer
//!   certificate", accepted with `-partial_chain`;
//! - path lengths, "path length constraint exceeded": a TSA below one CA, or below two, under a
//!   `pathlen:0` root; below two CAs under a `pathlen:1` root; below two CAs the first of which
//!   has `pathlen:0`. Accepted: a TSA right under a `pathlen:0` root, below one CA under a
//!   `pathlen:1` root, right under a `pathlen:0` CA. A self-issued CA (issued by a CA of the same
//!   name) is not counted: two same-named CAs under a `pathlen:1` root are accepted;
//! - an issuer that is not a CA, "invalid CA certificate": an intermediate with `CA:FALSE`, or
//!   with no basicConstraints even when its keyUsage has keyCertSign (intermediates are held to
//!   `-x509_strict`; `-untrusted` also warns "... is not a CA cert"); a root with `CA:FALSE`. A
//!   root with no basicConstraints but keyCertSign is accepted, unless `-x509_strict`;
//! - a certificate outside its validity at the time of checking, which is now, not the token's
//!   genTime: "certificate has expired", "certificate is not yet valid"; `-attime` moves it;
//! - any RSA-PSS token, "signature failure" (from TS_RESP_verify_signature: its PKCS #7 code
//!   checks PKCS #1 v1.5 only), though the same TSTInfo signed by `cms -sign` with PKCS #1 v1.5
//!   is accepted; `openssl cms -verify` accepts the PSS tokens. Certificates signed with PSS are
//!   accepted in the chain;
//! - an empty `-untrusted` file: "Could not read any extra untrusted certs".
//!
//! `openssl cms -verify` (3.0) builds the signer's chain only from the token's certificates and
//! `-CAfile`: `-certfile` serves to find the signer's certificate, not the intermediates (and
//! `cms` has no `-untrusted`), so a token without its intermediate is refused, "unable to get
//! local issuer certificate", whatever `-certfile` holds.
//!
//! `openssl ts -reply -text` prints the accuracy as "Accuracy: 0x0258 seconds, unspecified
//! millis, unspecified micros" (600 s), or "Accuracy: unspecified" when there is none.

mod cms;
mod command;
mod hierarchy;
mod keys;
mod tsa;
mod verify;

#[cfg(test)]
mod tests;

pub use cms::{CmsOptions, ID_CT_TSTINFO};
pub use command::{unix_now, Digest, Error};
pub use hierarchy::{BasicConstraints, CertSpec, HierarchySpec, Pki, INTERMEDIATE_NAME};
pub use keys::{Key, KeyKind};
pub use tsa::{reply_text, token_text, ts_query, tst_info, EssCertIdAlg, Tsa, TsaOptions};
pub use verify::{CmsVerify, Imprint, TsVerify};
