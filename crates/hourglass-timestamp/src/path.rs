//! The path from an authority's certificate to an anchor the verifier pinned, validated as RFC
//! 5280 validates it by rustls-webpki, at the token's `genTime`: signatures, validity (a
//! certificate that expired since is fine, as RFC 3161 intends), basicConstraints and
//! pathLenConstraint, nameConstraints, unknown critical extensions, intermediates from the token
//! and from the verifier, cross-signed roots.
//!
//! What webpki leaves to its caller, and is checked here as OpenSSL checks it:
//! - the anchor's own constraints (webpki knows an anchor by name and key alone): its validity
//!   at `genTime` and its pathLenConstraint;
//! - keyUsage: every CA on the path, when it states one, allows keyCertSign;
//! - extendedKeyUsage on CAs: one that states purposes must allow timeStamping (or any).
//!
//! The authority certificate's own profile (RFC 3161 section 2.3) is [`crate::TsaCertificate`]'s.

use std::cell::RefCell;
use std::time::{SystemTime, UNIX_EPOCH};

use hourglass_x509::oid::CE_KEY_USAGE;
use hourglass_x509::{Certificate, Extension};
use pki_types::{CertificateDer, Der, TrustAnchor, UnixTime};
use webpki::{
    EndEntityCert, ExtendedKeyUsageValidator, KeyPurposeId, KeyPurposeIdIter, VerifiedPath,
};
use x509_cert::ext::pkix::KeyUsage;

use crate::anchor::TsaAnchor;
use crate::oid::{ANY_EXTENDED_KEY_USAGE, KP_TIME_STAMPING};
use crate::signature::CHAIN_ALGORITHMS;

/// Why no path leads from an authority's certificate to a pinned anchor.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PathProblem {
    /// No chain of issuers reaches one of the anchors.
    #[error("it does not chain to a pinned anchor: no path from its issuer '{issuer}' to {}", anchors.join("; "))]
    NoPath {
        /// The certificate's issuer.
        issuer: String,
        /// The anchors tried.
        anchors: Vec<String>,
    },
    /// A certificate of the path was not yet valid, or no longer valid, at `genTime`.
    #[error("a certificate on its path was {} at the token's genTime {}", if *expired { "expired" } else { "not yet valid" }, rfc3339(*at))]
    NotValidAt {
        /// Expired (`true`) or not yet valid.
        expired: bool,
        /// The time checked (the token's `genTime`).
        at: SystemTime,
    },
    /// The anchor itself was not valid at `genTime`.
    #[error("its anchor '{anchor}' was not valid at the token's genTime {}", rfc3339(*at))]
    AnchorNotValidAt {
        /// The anchor.
        anchor: String,
        /// The time checked.
        at: SystemTime,
    },
    /// More CAs below a CA than its pathLenConstraint allows.
    #[error(
        "path length constraint exceeded: more CAs below '{ca}' than its pathLenConstraint allows"
    )]
    PathLength {
        /// The constraining CA (as far as it is known).
        ca: String,
    },
    /// An issuer on the path that is not a CA (no basicConstraints CA:TRUE).
    #[error("an issuer on its path is not a CA (no basicConstraints CA:TRUE)")]
    IssuerNotCa,
    /// A CA on the path whose keyUsage does not allow keyCertSign.
    #[error(
        "the CA '{ca}' on its path may not sign certificates (its keyUsage lacks keyCertSign)"
    )]
    KeyUsage {
        /// The CA.
        ca: String,
    },
    /// A CA on the path restricted to other purposes than timestamping.
    #[error("a certificate on its path is restricted to other purposes than timeStamping (extendedKeyUsage)")]
    Purpose,
    /// A name outside a CA's nameConstraints.
    #[error("a name on its path is outside a CA's nameConstraints")]
    NameConstraints,
    /// A certificate's signature on the path does not verify under the key of the issuer it
    /// names (an anchor or CA of the same name with another key), or uses an algorithm or key
    /// this verifier does not accept (RSA below 2048 bits, SHA-1).
    #[error("it does not chain to a pinned anchor: a certificate on its path does not verify under the key of the issuer it names (another key under the same name, or altered), or uses an algorithm or key this verifier refuses (SHA-1, RSA below 2048 bits) [{0}]")]
    Signature(String),
    /// Anything else rustls-webpki refused (a malformed certificate, an unknown critical
    /// extension, a path too long to search).
    #[error("its path is refused: {0}")]
    Other(String),
}

fn rfc3339(t: SystemTime) -> String {
    humantime::format_rfc3339_seconds(t).to_string()
}

/// A validated path: the certificates' subjects from the authority to the anchor, and which
/// anchor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidPath {
    /// RFC 4514 subjects, the authority's first, the anchor's last.
    pub subjects: Vec<String>,
    /// The index of the anchor reached.
    pub anchor: usize,
}

/// The EKU rule for every certificate webpki sees: absent, or listing timeStamping or
/// anyExtendedKeyUsage. (The authority's own, exactly timeStamping and critical, is checked by
/// the profile.)
struct TimeStampingIfPresent;

impl ExtendedKeyUsageValidator for TimeStampingIfPresent {
    fn validate(&self, iter: KeyPurposeIdIter<'_, '_>) -> Result<(), webpki::Error> {
        let wanted = [
            KeyPurposeId::new(KP_TIME_STAMPING.as_bytes()),
            KeyPurposeId::new(ANY_EXTENDED_KEY_USAGE.as_bytes()),
        ];
        let mut empty = true;
        for id in iter {
            empty = false;
            if wanted.contains(&id?) {
                return Ok(());
            }
        }
        if empty {
            Ok(())
        } else {
            // The variant with context cannot be built outside webpki.
            #[allow(deprecated)]
            Err(webpki::Error::RequiredEkuNotFound)
        }
    }
}

/// Validates the path from `signer` (an authority's certificate, DER) to one of `anchors`
/// through `intermediates` (DER, untrusted: the token's certificates and the verifier's), every
/// certificate valid at `at`.
pub fn validate(
    signer: &[u8],
    intermediates: &[Vec<u8>],
    anchors: &[TsaAnchor],
    at: SystemTime,
) -> Result<ValidPath, PathProblem> {
    let signer_der = CertificateDer::from(signer);
    let ee = EndEntityCert::try_from(&signer_der)
        .map_err(|e| PathProblem::Other(format!("the authority's certificate: {e:?}")))?;
    let intermediate_ders = reachable(ee.issuer(), intermediates);
    // A bare key vouches under any name: one webpki anchor per issuer name on the way up.
    let mut issuers: Vec<Vec<u8>> = vec![ee.issuer().to_vec()];
    for der in &intermediate_ders {
        if let Ok(c) = EndEntityCert::try_from(der) {
            if !issuers.iter().any(|i| i == c.issuer()) {
                issuers.push(c.issuer().to_vec());
            }
        }
    }
    let key_spkis: Vec<Option<Vec<u8>>> = anchors
        .iter()
        .map(|a| match a {
            TsaAnchor::Key { key, .. } => spki_value(key),
            TsaAnchor::Certificate(_) => None,
        })
        .collect();
    let mut trust_anchors = Vec::new();
    let mut which = Vec::new();
    for (i, anchor) in anchors.iter().enumerate() {
        match (anchor, &key_spkis[i]) {
            (TsaAnchor::Certificate(ca), _) => {
                if let Ok(ta) = webpki::anchor_from_trusted_cert(ca.der()) {
                    trust_anchors.push(ta);
                    which.push(i);
                }
            }
            (TsaAnchor::Key { .. }, Some(spki)) => {
                for issuer in &issuers {
                    trust_anchors.push(TrustAnchor {
                        subject: Der::from_slice(issuer),
                        subject_public_key_info: Der::from_slice(spki),
                        name_constraints: None,
                    });
                    which.push(i);
                }
            }
            (TsaAnchor::Key { .. }, None) => {}
        }
    }
    let refused: RefCell<Option<PathProblem>> = RefCell::new(None);
    let constraints = |path: &VerifiedPath<'_>| -> Result<(), webpki::Error> {
        let anchor = trust_anchors
            .iter()
            .position(|t| std::ptr::eq(t, path.anchor()))
            .map(|k| &anchors[which[k]]);
        match beyond_webpki(path, anchor, at) {
            Ok(()) => Ok(()),
            Err(problem) => {
                *refused.borrow_mut() = Some(problem);
                Err(webpki::Error::UnknownIssuer)
            }
        }
    };
    let time = UnixTime::since_unix_epoch(at.duration_since(UNIX_EPOCH).unwrap_or_default());
    match ee.verify_for_usage(
        CHAIN_ALGORITHMS,
        &trust_anchors,
        &intermediate_ders,
        time,
        TimeStampingIfPresent,
        None,
        Some(&constraints),
    ) {
        Ok(path) => {
            let k = trust_anchors
                .iter()
                .position(|t| std::ptr::eq(t, path.anchor()))
                .unwrap_or_default();
            let mut subjects = vec![subject_of(signer)];
            subjects.extend(
                path.intermediate_certificates()
                    .map(|c| subject_of(c.der().as_ref())),
            );
            subjects.push(anchors[which[k]].name());
            Ok(ValidPath {
                subjects,
                anchor: which[k],
            })
        }
        Err(e) => Err(refused
            .into_inner()
            .unwrap_or_else(|| problem_of(e, &issuers[0], anchors, at))),
    }
}

/// The most certificates of one name, and in all, that may stand between an authority and its
/// anchor: webpki's search parses every intermediate it is given at each of its steps, so a
/// token of many same-named certificates would cost seconds; real paths hold one to three.
const MAX_PER_NAME: usize = 4;
/// See [`MAX_PER_NAME`].
const MAX_INTERMEDIATES: usize = 16;

/// The certificates of `pool` that can stand on a path up from a certificate issued by
/// `issuer` (the raw value of a Name): those whose subject is that issuer, or the issuer of
/// another one taken, at most [`MAX_PER_NAME`] of a name and [`MAX_INTERMEDIATES`] in all, in
/// the order given.
fn reachable<'a>(issuer: &[u8], pool: &'a [Vec<u8>]) -> Vec<CertificateDer<'a>> {
    let names: Vec<Option<(Vec<u8>, Vec<u8>)>> = pool
        .iter()
        .map(|der| {
            let der = CertificateDer::from(der.as_slice());
            EndEntityCert::try_from(&der)
                .ok()
                .map(|c| (c.subject().to_vec(), c.issuer().to_vec()))
        })
        .collect();
    let mut wanted: Vec<Vec<u8>> = vec![issuer.to_vec()];
    let mut taken = vec![false; pool.len()];
    let mut out = Vec::new();
    loop {
        let mut grew = false;
        for (i, entry) in names.iter().enumerate() {
            let Some((subject, its_issuer)) = entry else {
                continue;
            };
            if taken[i] || !wanted.contains(subject) || out.len() >= MAX_INTERMEDIATES {
                continue;
            }
            let of_name = (0..pool.len())
                .filter(|&j| taken[j] && names[j].as_ref().is_some_and(|(s, _)| s == subject))
                .count();
            if of_name >= MAX_PER_NAME {
                continue;
            }
            taken[i] = true;
            out.push(CertificateDer::from(pool[i].as_slice()));
            if !wanted.contains(its_issuer) {
                wanted.push(its_issuer.clone());
            }
            grew = true;
        }
        if !grew {
            return out;
        }
    }
}

/// The anchor's own constraints, and the keyUsage of the CAs between, on a path webpki found.
fn beyond_webpki(
    path: &VerifiedPath<'_>,
    anchor: Option<&TsaAnchor>,
    at: SystemTime,
) -> Result<(), PathProblem> {
    let mut below = 0u32;
    for c in path.intermediate_certificates() {
        let Ok(cert) = Certificate::from_der(c.der().as_ref()) else {
            return Err(PathProblem::Other("an intermediate does not decode".into()));
        };
        let ku = cert
            .decode_extension::<KeyUsage>(CE_KEY_USAGE, Extension::KeyUsage)
            .map_err(|e| PathProblem::Other(e.to_string()))?;
        if ku.is_some_and(|(_, ku)| !ku.key_cert_sign()) {
            return Err(PathProblem::KeyUsage { ca: cert.subject() });
        }
        // Self-issued CAs (a key rollover) do not count towards a path length (RFC 5280
        // section 4.2.1.9).
        if cert.tbs().subject != cert.tbs().issuer {
            below += 1;
        }
    }
    if let Some(TsaAnchor::Certificate(ca)) = anchor {
        if !ca.valid_at(at) {
            return Err(PathProblem::AnchorNotValidAt {
                anchor: ca.certificate().subject(),
                at,
            });
        }
        if ca.path_len().is_some_and(|n| below > u32::from(n)) {
            return Err(PathProblem::PathLength {
                ca: ca.certificate().subject(),
            });
        }
    }
    Ok(())
}

/// The SubjectPublicKeyInfo's value (without its SEQUENCE header) of an RSA key, as webpki's
/// anchors hold it.
fn spki_value(key: &hourglass_rsa::PublicKey) -> Option<Vec<u8>> {
    use der::{Decode, Encode};
    let spki = hourglass_x509::key::rsa_spki(key.n(), key.e()).ok()?;
    let der = spki.to_der().ok()?;
    let mut reader = der::SliceReader::new(&der).ok()?;
    let header = der::Header::decode(&mut reader).ok()?;
    let header_len = usize::try_from(header.encoded_len().ok()?).ok()?;
    der.get(header_len..).map(<[u8]>::to_vec)
}

/// A certificate's subject, RFC 4514.
fn subject_of(der: &[u8]) -> String {
    Certificate::from_der(der).map_or_else(|_| "(unreadable certificate)".into(), |c| c.subject())
}

/// Our words for webpki's refusal.
#[allow(deprecated)] // The variants without context are still returned by our own validator.
fn problem_of(
    e: webpki::Error,
    issuer: &[u8],
    anchors: &[TsaAnchor],
    at: SystemTime,
) -> PathProblem {
    use webpki::Error as E;
    match e {
        E::UnknownIssuer => PathProblem::NoPath {
            issuer: name_text(issuer),
            anchors: anchors.iter().map(TsaAnchor::name).collect(),
        },
        E::CertExpired { .. } => PathProblem::NotValidAt { expired: true, at },
        E::CertNotValidYet { .. } => PathProblem::NotValidAt { expired: false, at },
        E::PathLenConstraintViolated => PathProblem::PathLength {
            ca: "an intermediate CA".into(),
        },
        E::EndEntityUsedAsCa => PathProblem::IssuerNotCa,
        E::RequiredEkuNotFound | E::RequiredEkuNotFoundContext(_) => PathProblem::Purpose,
        E::NameConstraintViolation => PathProblem::NameConstraints,
        E::InvalidSignatureForPublicKey
        | E::UnsupportedSignatureAlgorithm
        | E::UnsupportedSignatureAlgorithmContext(_)
        | E::UnsupportedSignatureAlgorithmForPublicKey
        | E::UnsupportedSignatureAlgorithmForPublicKeyContext(_)
        | E::SignatureAlgorithmMismatch => PathProblem::Signature(format!("{e:?}")),
        other => PathProblem::Other(format!("{other:?}")),
    }
}

/// An issuer name (the DER value of a Name) as RFC 4514 text.
fn name_text(value: &[u8]) -> String {
    use der::Decode;
    let mut der = vec![0x30];
    if value.len() < 128 {
        der.push(value.len() as u8);
    } else {
        let len = value.len().to_be_bytes();
        let skip = len.iter().take_while(|b| **b == 0).count();
        der.push(0x80 | (len.len() - skip) as u8);
        der.extend_from_slice(&len[skip..]);
    }
    der.extend_from_slice(value);
    x509_cert::name::Name::from_der(&der)
        .map_or_else(|_| "(unreadable name)".into(), |n| n.to_string())
}
