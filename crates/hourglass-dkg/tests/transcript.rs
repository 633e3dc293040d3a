//! Signed transcripts (format v2): what a committee publishes, and what a verifier who trusts
//! the members' certificates accepts. Every test here can fail: each refusal is checked to be
//! the specific one, naming the member or field at fault.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use hourglass_dkg::transcript::{
    certificate_sha256, read_certificates, Committee, PublicTranscript, SignedTranscript,
    SigningScheme, TranscriptSignature, TranscriptSigner, VerifiedCommittee, MAX_CERTIFICATE_FILE,
    TRANSCRIPT_FORMAT, TRANSCRIPT_FORMAT_V1,
};
use hourglass_dkg::{
    CertificateProblem, Error, Integer, PartyId, ShareError, SignatureFault, TranscriptField,
    TranscriptProblem, TrustError,
};
use serde_json::Value;

use common::{identity, members, KeyKind};

/// A modulus whose factors the caller knows.
fn modulus(seed: u32) -> Integer {
    let p = (Integer::from(seed) << 255u32).next_prime();
    let q = (Integer::from(seed + 1) << 255u32).next_prime();
    p * q
}

fn transcript_for(certificates: &[Vec<u8>], n: Integer) -> PublicTranscript {
    PublicTranscript {
        cluster: "conf-2027".into(),
        session: [0x5a; 16],
        members: (1..=certificates.len() as PartyId).collect(),
        n,
        e: 65537,
        committee: Some(Committee {
            threshold: (certificates.len() - 1) / 2,
            certificate_sha256: certificates.iter().map(|c| certificate_sha256(c)).collect(),
        }),
    }
}

fn sign_all(t: &PublicTranscript, signers: &[TranscriptSigner]) -> SignedTranscript {
    let signatures = signers.iter().map(|s| s.sign(t).unwrap()).collect();
    SignedTranscript::new(t.clone(), signatures).unwrap()
}

fn untrusted(result: hourglass_dkg::Result<VerifiedCommittee>) -> TrustError {
    match result {
        Err(Error::Untrusted(e)) => e,
        other => panic!("expected an untrusted transcript, got {other:?}"),
    }
}

fn refused(result: hourglass_dkg::Result<SignedTranscript>) -> TranscriptProblem {
    match result {
        Err(Error::Share(ShareError::Transcript(p))) => p,
        other => panic!("expected a refused transcript file, got {other:?}"),
    }
}

/// A change to a transcript file's JSON.
type Edit = Box<dyn Fn(&mut Value)>;

fn edit(text: &str, change: impl FnOnce(&mut Value)) -> String {
    let mut v: Value = serde_json::from_str(text).unwrap();
    change(&mut v);
    serde_json::to_string_pretty(&v).unwrap()
}

#[test]
fn a_signed_v2_transcript_round_trips_and_verifies() {
    let m = members(&[KeyKind::P256; 3], "rt");
    let t = transcript_for(&m.certificates, modulus(3));
    let signed = sign_all(&t, &m.signers);
    let text = signed.to_json();
    assert!(text.contains(TRANSCRIPT_FORMAT));
    assert!(text.contains("\"ecdsa_secp256r1_sha256\""));
    let back = SignedTranscript::from_json(&text).unwrap();
    assert_eq!(back, signed);
    assert_eq!(
        back.to_json(),
        text,
        "serialising again gives the same bytes"
    );
    assert_eq!(back.version(), 2);
    assert_eq!(back.signatures().len(), 3);
    // The unsigned view reads the same file, with the version 2 fingerprint.
    let public = PublicTranscript::from_json(&text).unwrap();
    assert_eq!(public, t);
    assert_eq!(public.fingerprint_hex(), back.fingerprint_hex());
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["fingerprint"], back.fingerprint_hex());

    let committee = back.verify(&m.certificates).unwrap();
    assert_eq!(committee.cluster, "conf-2027");
    assert_eq!(committee.members, vec![1, 2, 3]);
    assert_eq!(committee.threshold, 1);
    assert_eq!(committee.n, t.n);
    assert_eq!(committee.fingerprint, t.fingerprint());
    // Order of the pinned certificates and extra ones do not matter.
    let mut pinned = m.certificates.clone();
    pinned.reverse();
    pinned.push(identity(KeyKind::P256, "stranger").certificate);
    assert_eq!(back.verify(&pinned).unwrap(), committee);
}

#[test]
fn every_field_edit_breaks_the_fingerprint() {
    // Five members, so that the threshold (2) can be edited to another valid value (1).
    let m = members(&[KeyKind::P256; 5], "edit");
    let t = transcript_for(&m.certificates, modulus(5));
    assert_eq!(t.committee.as_ref().unwrap().threshold, 2);
    let text = sign_all(&t, &m.signers).to_json();
    let other_hash = hex::encode([0x11; 32]);
    let edits: Vec<(&str, Edit)> = vec![
        ("cluster", Box::new(|v| v["cluster"] = "conf-2028".into())),
        (
            "session",
            Box::new(|v| v["session"] = hex::encode([0x5b; 16]).into()),
        ),
        ("threshold", Box::new(|v| v["threshold"] = 1.into())),
        (
            "members",
            Box::new(|v| {
                v["members"][4] = 6.into();
                v["signatures"][4]["member"] = 6.into();
            }),
        ),
        (
            "certificate_sha256",
            Box::new(move |v| v["certificate_sha256"][1] = other_hash.clone().into()),
        ),
        (
            "n",
            Box::new(|v| v["n"] = modulus(7).to_string_radix(16).into()),
        ),
        ("e", Box::new(|v| v["e"] = 3.into())),
        (
            "fingerprint",
            Box::new(|v| v["fingerprint"] = hex::encode([0; 32]).into()),
        ),
    ];
    for (field, change) in edits {
        let damaged = edit(&text, |v| change(v));
        assert_ne!(damaged, text, "{field}");
        let problem = refused(SignedTranscript::from_json(&damaged));
        assert!(
            matches!(problem, TranscriptProblem::Fingerprint),
            "{field}: {problem:?}"
        );
    }
    // Signatures are not fingerprinted (they sign the fingerprint): the file still parses
    // with one removed, and verification names the missing member.
    let fewer = edit(&text, |v| {
        v["signatures"].as_array_mut().unwrap().remove(4);
    });
    let s = SignedTranscript::from_json(&fewer).unwrap();
    assert_eq!(s.fingerprint_hex(), t.fingerprint_hex());
    // The same fields as a version 1 transcript have another fingerprint: a v2 fingerprint
    // cannot be passed off as a v1 one or the reverse.
    let v1 = PublicTranscript {
        committee: None,
        ..t.clone()
    };
    assert_ne!(v1.fingerprint(), t.fingerprint());
}

#[test]
fn swapped_altered_or_missing_signatures_are_refused_naming_the_member() {
    let m = members(&[KeyKind::P256; 3], "swap");
    let t = transcript_for(&m.certificates, modulus(9));
    let good = sign_all(&t, &m.signers);
    let sigs = good.signatures().to_vec();

    // Members 1 and 2 swap their signatures (each valid, under the other's key).
    let mut swapped = sigs.clone();
    let first = swapped[0].signature.clone();
    swapped[0].signature = swapped[1].signature.clone();
    swapped[1].signature = first;
    let s = SignedTranscript::new(t.clone(), swapped).unwrap();
    assert!(matches!(
        untrusted(s.verify(&m.certificates)),
        TrustError::BadSignature {
            member: 1,
            fault: SignatureFault::Invalid
        }
    ));

    // Member 3's signature altered in its last byte, in the file.
    let text = good.to_json();
    let damaged = edit(&text, |v| {
        let sig = v["signatures"][2]["signature"]
            .as_str()
            .unwrap()
            .to_string();
        let last = if sig.ends_with('0') { "1" } else { "0" };
        v["signatures"][2]["signature"] = format!("{}{last}", &sig[..sig.len() - 1]).into();
    });
    let s = SignedTranscript::from_json(&damaged).unwrap();
    assert!(matches!(
        untrusted(s.verify(&m.certificates)),
        TrustError::BadSignature {
            member: 3,
            fault: SignatureFault::Invalid
        }
    ));

    // Member 2's signature removed.
    let missing = edit(&text, |v| {
        v["signatures"].as_array_mut().unwrap().remove(1);
    });
    let s = SignedTranscript::from_json(&missing).unwrap();
    match untrusted(s.verify(&m.certificates)) {
        TrustError::MissingSignatures { members } => assert_eq!(members, vec![2]),
        other => panic!("{other:?}"),
    }

    // Member 2's signature relabelled with another scheme.
    let relabelled = edit(&text, |v| v["signatures"][1]["scheme"] = "ed25519".into());
    let s = SignedTranscript::from_json(&relabelled).unwrap();
    assert!(matches!(
        untrusted(s.verify(&m.certificates)),
        TrustError::BadSignature { member: 2, .. }
    ));

    // Member 1's signature of another transcript (another modulus), moved onto this one.
    let other = transcript_for(&m.certificates, modulus(11));
    let mut moved = sigs.clone();
    moved[0] = m.signers[0].sign(&other).unwrap();
    let s = SignedTranscript::new(t.clone(), moved).unwrap();
    assert!(matches!(
        untrusted(s.verify(&m.certificates)),
        TrustError::BadSignature {
            member: 1,
            fault: SignatureFault::Invalid
        }
    ));
}

#[test]
fn a_member_whose_certificate_is_not_pinned_is_refused_naming_it() {
    let m = members(&[KeyKind::P256; 3], "pin");
    let t = transcript_for(&m.certificates, modulus(13));
    let s = sign_all(&t, &m.signers);
    let without_2 = vec![m.certificates[0].clone(), m.certificates[2].clone()];
    match untrusted(s.verify(&without_2)) {
        TrustError::NotPinned { members } => assert_eq!(members, vec![2]),
        other => panic!("{other:?}"),
    }
    match untrusted(s.verify(&[])) {
        TrustError::NotPinned { members } => assert_eq!(members, vec![1, 2, 3]),
        other => panic!("{other:?}"),
    }
    // Another certificate for the same name is not the pinned one.
    let lookalike = identity(KeyKind::P256, "pin-party-2").certificate;
    let with_lookalike = vec![
        m.certificates[0].clone(),
        lookalike,
        m.certificates[2].clone(),
    ];
    match untrusted(s.verify(&with_lookalike)) {
        TrustError::NotPinned { members } => assert_eq!(members, vec![2]),
        other => panic!("{other:?}"),
    }
}

#[test]
fn v1_transcripts_are_read_but_verify_to_an_error() {
    let m = members(&[KeyKind::P256; 3], "v1");
    let v2 = transcript_for(&m.certificates, modulus(15));
    let v1 = PublicTranscript {
        committee: None,
        ..v2
    };
    let text = v1.to_json();
    assert!(text.contains(TRANSCRIPT_FORMAT_V1));
    assert!(!text.contains("signatures"));
    let s = SignedTranscript::from_json(&text).unwrap();
    assert_eq!(s.version(), 1);
    assert!(s.signatures().is_empty());
    assert_eq!(s.transcript(), &v1);
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["fingerprint"], s.fingerprint_hex());
    assert_eq!(
        PublicTranscript::from_json(&text)
            .unwrap()
            .fingerprint_hex(),
        s.fingerprint_hex()
    );
    assert!(matches!(
        untrusted(s.verify(&m.certificates)),
        TrustError::Unsigned
    ));
    // Signatures cannot be attached to a version 1 transcript.
    let sig = m.signers[0].sign(&v1).unwrap();
    assert!(SignedTranscript::new(v1.clone(), vec![sig]).is_err());
    let with_field = edit(&text, |v| v["signatures"] = serde_json::json!([]));
    assert!(matches!(
        refused(SignedTranscript::from_json(&with_field)),
        TranscriptProblem::Json(_)
    ));
}

/// Someone who knows the factors of a modulus writes a transcript for it, claiming the real
/// committee made it. Whatever they sign with, it does not verify against the committee's
/// certificates.
#[test]
fn an_attacker_who_knows_the_factors_cannot_pass_as_the_committee() {
    let committee = members(&[KeyKind::P256; 3], "real");
    let real = transcript_for(&committee.certificates, modulus(17));
    let published = sign_all(&real, &committee.signers);
    published.verify(&committee.certificates).unwrap();

    // The attacker's own modulus (they chose p and q), with keys of their own making.
    let forged_keys = members(&[KeyKind::P256; 3], "real");
    let mine = modulus(19);
    // (a) Honest about its certificates: they are not the committee's.
    let forged = sign_all(
        &transcript_for(&forged_keys.certificates, mine.clone()),
        &forged_keys.signers,
    );
    forged.verify(&forged_keys.certificates).unwrap(); // valid under the attacker's own keys
    match untrusted(forged.verify(&committee.certificates)) {
        TrustError::NotPinned { members } => assert_eq!(members, vec![1, 2, 3]),
        other => panic!("{other:?}"),
    }
    // (b) Naming the committee's certificates, signed with the attacker's keys.
    let claimed = transcript_for(&committee.certificates, mine.clone());
    let signatures = forged_keys
        .signers
        .iter()
        .map(|s| s.sign(&claimed).unwrap())
        .collect();
    let forged = SignedTranscript::new(claimed.clone(), signatures).unwrap();
    assert!(matches!(
        untrusted(forged.verify(&committee.certificates)),
        TrustError::BadSignature {
            member: 1,
            fault: SignatureFault::Invalid
        }
    ));
    // (c) The committee's real signatures (of its own transcript) copied onto the attacker's.
    let copied = SignedTranscript::new(claimed.clone(), published.signatures().to_vec()).unwrap();
    assert!(matches!(
        untrusted(copied.verify(&committee.certificates)),
        TrustError::BadSignature {
            member: 1,
            fault: SignatureFault::Invalid
        }
    ));
    // (d) The real transcript's fields with the attacker's modulus in the file: the
    // fingerprint no longer matches, and with it recomputed the signatures do not verify.
    let swapped_n = edit(&published.to_json(), |v| {
        v["n"] = mine.to_string_radix(16).into()
    });
    assert!(matches!(
        refused(SignedTranscript::from_json(&swapped_n)),
        TranscriptProblem::Fingerprint
    ));
    let refingerprinted = edit(&swapped_n, |v| {
        v["fingerprint"] = claimed.fingerprint_hex().into()
    });
    let s = SignedTranscript::from_json(&refingerprinted).unwrap();
    assert!(matches!(
        untrusted(s.verify(&committee.certificates)),
        TrustError::BadSignature { member: 1, .. }
    ));
}

#[test]
fn non_canonical_hex_is_refused_naming_the_field() {
    let m = members(&[KeyKind::P256; 3], "hex");
    let t = transcript_for(&m.certificates, modulus(21));
    let text = sign_all(&t, &m.signers).to_json();
    let upper = |v: &Value| v.as_str().unwrap().to_ascii_uppercase();
    let cases: Vec<(Edit, TranscriptField)> = vec![
        (
            Box::new(move |v| v["n"] = upper(&v["n"]).into()),
            TranscriptField::N,
        ),
        (
            Box::new(|v| v["n"] = format!("0{}", v["n"].as_str().unwrap()).into()),
            TranscriptField::N,
        ),
        (
            Box::new(move |v| v["session"] = upper(&v["session"]).into()),
            TranscriptField::Session,
        ),
        (
            Box::new(|v| v["session"] = format!("{}00", v["session"].as_str().unwrap()).into()),
            TranscriptField::Session,
        ),
        (
            Box::new(move |v| v["fingerprint"] = upper(&v["fingerprint"]).into()),
            TranscriptField::Fingerprint,
        ),
        (
            Box::new(move |v| {
                v["certificate_sha256"][2] = upper(&v["certificate_sha256"][2]).into()
            }),
            TranscriptField::CertificateSha256 { member: 3 },
        ),
        (
            Box::new(move |v| {
                v["signatures"][1]["signature"] = upper(&v["signatures"][1]["signature"]).into()
            }),
            TranscriptField::Signature { member: 2 },
        ),
        (
            Box::new(|v| {
                let s = v["signatures"][0]["signature"]
                    .as_str()
                    .unwrap()
                    .to_string();
                v["signatures"][0]["signature"] = s[1..].to_string().into();
            }),
            TranscriptField::Signature { member: 1 },
        ),
    ];
    for (change, field) in cases {
        let damaged = edit(&text, |v| change(v));
        match refused(SignedTranscript::from_json(&damaged)) {
            TranscriptProblem::Hex { field: f, .. } => assert_eq!(f, field),
            other => panic!("{field}: {other:?}"),
        }
        // The message names the field.
        let message = SignedTranscript::from_json(&damaged)
            .unwrap_err()
            .to_string();
        assert!(message.contains(&field.to_string()), "{message}");
    }
}

#[test]
fn malformed_committees_and_signature_lists_are_refused() {
    let m = members(&[KeyKind::P256; 3], "shape");
    let t = transcript_for(&m.certificates, modulus(23));
    let text = sign_all(&t, &m.signers).to_json();
    let first_cert = serde_json::json!(hex::encode(certificate_sha256(&m.certificates[0])));
    let cases: Vec<(Edit, &str)> = vec![
        (
            Box::new(|v| v["members"] = serde_json::json!([2, 1, 3])),
            "Members",
        ),
        (
            Box::new(|v| v["members"] = serde_json::json!([0, 1, 2])),
            "Members",
        ),
        (
            Box::new(|v| v["members"] = serde_json::json!([1, 1, 2])),
            "Members",
        ),
        (
            Box::new(|v| {
                v["certificate_sha256"].as_array_mut().unwrap().pop();
            }),
            "CertificateCount",
        ),
        (
            Box::new(move |v| v["certificate_sha256"][1] = first_cert.clone()),
            "SameCertificate",
        ),
        (Box::new(|v| v["threshold"] = 2.into()), "Threshold"),
        (
            Box::new(|v| v["threshold"] = serde_json::json!(u64::MAX)),
            "Threshold",
        ),
        (
            Box::new(|v| v["signatures"].as_array_mut().unwrap().swap(0, 1)),
            "SignatureMember",
        ),
        (
            Box::new(|v| {
                let dup = v["signatures"][0].clone();
                v["signatures"].as_array_mut().unwrap().insert(0, dup);
            }),
            "SignatureMember",
        ),
        (
            Box::new(|v| v["signatures"][2]["member"] = 4.into()),
            "SignatureMember",
        ),
        (
            Box::new(|v| v["signatures"][0]["scheme"] = "rsa_pkcs1_sha256".into()),
            "Scheme",
        ),
        (
            Box::new(|v| v["signatures"][0]["signature"] = "ab".repeat(1025).into()),
            "SignatureLength",
        ),
        (Box::new(|v| v["extra"] = 1.into()), "Json"),
        (
            Box::new(|v| v["format"] = "hourglass-dkg-transcript-v3".into()),
            "Format",
        ),
        (Box::new(|v| v["n"] = "0".into()), "NonPositiveModulus"),
    ];
    for (change, expected) in cases {
        let damaged = edit(&text, |v| change(v));
        let problem = refused(SignedTranscript::from_json(&damaged));
        assert!(
            format!("{problem:?}").starts_with(expected),
            "{expected}: {problem:?}"
        );
    }
}

#[test]
fn other_kinds_of_party_keys_sign_and_verify() {
    for (kinds, schemes) in [
        (
            vec![KeyKind::Ed25519, KeyKind::Ed25519, KeyKind::Ed25519],
            vec!["ed25519"; 3],
        ),
        (
            vec![KeyKind::P256, KeyKind::Ed25519, KeyKind::Rsa, KeyKind::P384],
            vec![
                "ecdsa_secp256r1_sha256",
                "ed25519",
                "rsa_pss_rsae_sha512",
                "ecdsa_secp384r1_sha384",
            ],
        ),
    ] {
        let m = members(&kinds, "kinds");
        let t = transcript_for(&m.certificates, modulus(25));
        let s = sign_all(&t, &m.signers);
        let names: Vec<&str> = s.signatures().iter().map(|s| s.scheme.name()).collect();
        assert_eq!(names, schemes);
        let back = SignedTranscript::from_json(&s.to_json()).unwrap();
        assert_eq!(
            back.verify(&m.certificates).unwrap().members.len(),
            kinds.len()
        );
        // A signature under one kind's scheme, claimed under another's, is refused.
        let mut sigs = back.signatures().to_vec();
        sigs[0].scheme = if sigs[0].scheme == SigningScheme::Ed25519 {
            SigningScheme::EcdsaP256Sha256
        } else {
            SigningScheme::Ed25519
        };
        let relabelled = SignedTranscript::new(t.clone(), sigs).unwrap();
        assert!(matches!(
            untrusted(relabelled.verify(&m.certificates)),
            TrustError::BadSignature { member: 1, .. }
        ));
    }
}

#[test]
fn a_signer_refuses_a_key_that_is_not_its_certificates() {
    let a = identity(KeyKind::P256, "a");
    let b = identity(KeyKind::P256, "b");
    let certs: BTreeMap<PartyId, Vec<u8>> =
        [(1, a.certificate.clone()), (2, b.certificate.clone())].into();
    assert!(matches!(
        TranscriptSigner::new(1, &b.key, certs.clone()),
        Err(Error::Config(hourglass_dkg::ConfigError::KeyNotCertified {
            party: 1
        }))
    ));
    assert!(matches!(
        TranscriptSigner::new(3, &a.key, certs.clone()),
        Err(Error::Config(hourglass_dkg::ConfigError::NoCertificate {
            party: 3
        }))
    ));
    let signer = TranscriptSigner::new(1, &a.key, certs).unwrap();
    let t = transcript_for(&[a.certificate.clone(), b.certificate.clone()], modulus(27));
    let sig: TranscriptSignature = signer.sign(&t).unwrap();
    assert_eq!(sig.member, 1);
    assert_eq!(sig.scheme, SigningScheme::EcdsaP256Sha256);
    assert!(
        format!("{signer:?}").contains("..."),
        "the key is not printed"
    );
}

fn write_pem(path: &Path, pems: &[String]) {
    std::fs::write(path, pems.concat()).unwrap();
}

fn certificate_problem(result: hourglass_dkg::Result<Vec<Vec<u8>>>) -> CertificateProblem {
    match result {
        Err(Error::Certificates { problem, .. }) => problem,
        other => panic!("expected a certificate error, got {other:?}"),
    }
}

#[test]
fn certificates_are_read_from_a_pem_file_or_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let m = members(&[KeyKind::P256, KeyKind::Ed25519, KeyKind::P384], "files");
    let certs = &m.pems;

    // One file with all three.
    write_pem(&d.join("all.pem"), certs);
    assert_eq!(
        read_certificates(&d.join("all.pem")).unwrap(),
        m.certificates
    );

    // A directory of *.pem and *.crt files (name order); other files and subdirectories
    // are skipped.
    let certs_dir = d.join("certs");
    std::fs::create_dir(&certs_dir).unwrap();
    write_pem(&certs_dir.join("a.crt.pem"), &certs[..1]);
    write_pem(&certs_dir.join("b.crt"), &certs[1..2]);
    write_pem(&certs_dir.join("c.pem"), &certs[2..]);
    std::fs::write(certs_dir.join("notes.txt"), "not a certificate").unwrap();
    std::fs::create_dir(certs_dir.join("sub.pem")).unwrap();
    // A FIFO would block a read: it is skipped, not opened.
    let fifo = std::process::Command::new("mkfifo")
        .arg(certs_dir.join("d-fifo.pem"))
        .status()
        .is_ok_and(|s| s.success());
    assert!(fifo, "mkfifo is needed for this test");
    assert_eq!(read_certificates(&certs_dir).unwrap(), m.certificates);

    // A file with none, a file that is not PEM, an empty directory, a missing path.
    std::fs::write(
        d.join("key.pem"),
        "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n",
    )
    .unwrap();
    assert!(matches!(
        certificate_problem(read_certificates(&d.join("key.pem"))),
        CertificateProblem::NoCertificate
    ));
    std::fs::write(d.join("empty.pem"), "").unwrap();
    assert!(matches!(
        certificate_problem(read_certificates(&d.join("empty.pem"))),
        CertificateProblem::NoCertificate
    ));
    let empty_dir = d.join("nothing");
    std::fs::create_dir(&empty_dir).unwrap();
    assert!(matches!(
        certificate_problem(read_certificates(&empty_dir)),
        CertificateProblem::EmptyDirectory
    ));
    assert!(matches!(
        certificate_problem(read_certificates(&d.join("absent.pem"))),
        CertificateProblem::Read(_)
    ));
    // In a directory, the file at fault is named.
    std::fs::copy(d.join("key.pem"), certs_dir.join("public.pem")).unwrap();
    match certificate_problem(read_certificates(&certs_dir)) {
        CertificateProblem::InFile { path, problem } => {
            assert!(path.ends_with("public.pem"), "{path:?}");
            assert!(matches!(*problem, CertificateProblem::NoCertificate));
        }
        other => panic!("{other:?}"),
    }
    // A block that is not X.509.
    std::fs::write(
        d.join("bogus.pem"),
        "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
    )
    .unwrap();
    assert!(matches!(
        certificate_problem(read_certificates(&d.join("bogus.pem"))),
        CertificateProblem::NotX509(_)
    ));
    // Over 1 MiB: refused by its size.
    let big = d.join("big.pem");
    let file = std::fs::File::create(&big).unwrap();
    file.set_len(MAX_CERTIFICATE_FILE + 1).unwrap();
    match certificate_problem(read_certificates(&big)) {
        CertificateProblem::TooLarge { len, max } => {
            assert_eq!(len, MAX_CERTIFICATE_FILE + 1);
            assert_eq!(max, MAX_CERTIFICATE_FILE);
        }
        other => panic!("{other:?}"),
    }
    // Exactly 1 MiB is read (padding after a certificate is allowed by PEM).
    let mut exact = m.pems[0].clone().into_bytes();
    exact.resize(MAX_CERTIFICATE_FILE as usize, b'\n');
    std::fs::write(&big, &exact).unwrap();
    assert_eq!(
        read_certificates(&big).unwrap(),
        vec![m.certificates[0].clone()]
    );
}

/// What a verifier reports: a member's signature that does not verify or is missing is a
/// negative verdict (exit status 1); a member it pinned no certificate for is an error (2),
/// since it cannot decide.
#[test]
fn refutations_are_verdicts_and_missing_pins_are_errors() {
    let m = members(&[KeyKind::P256; 3], "verdict");
    let t = transcript_for(&m.certificates, modulus(13));
    let good = sign_all(&t, &m.signers);
    let missing = edit(&good.to_json(), |v| {
        v["signatures"].as_array_mut().unwrap().remove(1);
    });
    let e = SignedTranscript::from_json(&missing)
        .unwrap()
        .verify(&m.certificates)
        .unwrap_err();
    assert!(e.is_verdict(), "{e}");
    let mut swapped = good.signatures().to_vec();
    let first = swapped[0].signature.clone();
    swapped[0].signature = swapped[1].signature.clone();
    swapped[1].signature = first;
    let e = SignedTranscript::new(t, swapped)
        .unwrap()
        .verify(&m.certificates)
        .unwrap_err();
    assert!(e.is_verdict(), "{e}");
    let e = good.verify(&m.certificates[..2]).unwrap_err();
    assert!(
        matches!(e, Error::Untrusted(TrustError::NotPinned { .. })),
        "{e}"
    );
    assert!(!e.is_verdict(), "{e}");
}
