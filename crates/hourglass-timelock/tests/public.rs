//! Public sets: a bundle sealed with proofs verifies with public data alone, and every
//! tampering an author, a friend of the institution or a thief could try is refused, with a
//! reason that names the link.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use hourglass_arith::checkpoint::{CheckpointFile, CheckpointKey};
use hourglass_arith::entropy::OsEntropy;
use hourglass_timelock::bundle::{Bundle, Link, LinkProof, SealEnd, SealOptions};
use hourglass_timelock::public::{seal_public, ModulusOrigin, OriginPins, ProofScheme, PublicSet};
use hourglass_timelock::verdict::{Verdict, Verifier, VerifyOptions};
use hourglass_timelock::PuzzleHash;
use hourglass_vdf::group::RsaGroup;

/// The one verdict on `bundle` for `document`, with `set` (its origin needs no pin).
fn verify_public(set: &PublicSet, bundle: &Bundle, document: &[u8]) -> Verdict {
    let verifier = Verifier::public(set.clone(), &OriginPins::default()).unwrap();
    let digest = verifier.digest(document).unwrap();
    verifier
        .verify(bundle, &digest, &VerifyOptions::default(), &mut OsEntropy)
        .unwrap()
}

fn set_on(group: &RsaGroup, name: &str) -> PublicSet {
    PublicSet::new(
        name,
        group.modulus().clone(),
        ModulusOrigin::Rsa2048,
        vec![4000, 2000, 1000],
        1000.0,
        false,
        PuzzleHash::Sha256,
        ProofScheme::Wesolowski,
        "2026-11-24T00:00:00Z",
    )
    .unwrap()
}

fn options(name: &str, until: f64, open_ended: bool) -> SealOptions {
    let dir = std::env::temp_dir().join(format!("hg-public-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    SealOptions {
        expect_secs: Some(until),
        until_credited_secs: Some(until),
        open_ended,
        checkpoint: CheckpointFile::new(dir.join("b.ckpt"), CheckpointKey::from_bytes([8; 32])),
        checkpoint_every: Duration::ZERO,
    }
}

/// Each seal gets its own checkpoint file (tests run in parallel).
static SEALS: AtomicUsize = AtomicUsize::new(0);

fn sealed(set: &PublicSet, document: &[u8], until: f64) -> Bundle {
    let mut bundle = Bundle::new_public(set.hash, &set.hash.digest(document));
    let end = seal_public(
        set,
        &mut bundle,
        &options(
            &format!("seal-{}", SEALS.fetch_add(1, Ordering::Relaxed)),
            until,
            false,
        ),
        &AtomicBool::new(false),
        &mut |_, _, _| {},
        &mut |_| Ok(()),
    )
    .unwrap();
    assert_eq!(end, SealEnd::Reached);
    bundle
}

fn reason(set: &PublicSet, bundle: &Bundle, document: &[u8], link: usize) -> String {
    let v = verify_public(set, bundle, document);
    assert!(!v.is_valid() && v.credited_secs() == 0.0);
    assert!(
        !v.links()[link].is_valid(),
        "link {link} should be refused: {v:?}"
    );
    v.links()[link].reason().map(str::to_string).unwrap()
}

#[test]
fn a_public_bundle_verifies_with_public_data_and_tampering_is_refused() {
    let group = RsaGroup::rsa_2048();
    let set = set_on(&group, "public test");
    // The set survives its file format, and any edit of it is detected.
    let text = set.to_json();
    assert_eq!(PublicSet::from_json(&text).unwrap(), set);
    let err =
        PublicSet::from_json(&text.replacen("\"rate\": 1000.0", "\"rate\": 10.0", 1)).unwrap_err();
    assert!(err.to_string().contains("fingerprint"), "{err}");

    let doc = b"the paper";
    let bundle = sealed(&set, doc, 7.0);
    let ts: Vec<u64> = bundle.links.iter().map(Link::t).collect();
    assert_eq!(ts, vec![4000, 2000, 1000]);
    let back = Bundle::from_json(&bundle.to_json()).unwrap();
    assert!(back.is_public());
    let v = verify_public(&set, &back, doc);
    assert!(v.is_valid(), "{v:?}");
    assert!((v.credited_secs() - 7.0).abs() < 1e-9);

    // Another document.
    let v = verify_public(&set, &back, b"another paper");
    assert!(!v.is_valid() && !v.document_matches());

    // A bad proof.
    let mut bad = back.clone();
    if let Link::Vdf {
        proof: LinkProof::Wesolowski { pi, .. },
        ..
    } = &mut bad.links[1]
    {
        pi.replace_range(0..1, if pi.starts_with('1') { "2" } else { "1" });
    }
    assert!(reason(&set, &bad, doc, 1).contains("proof does not verify"));

    // A claimed output that is not the result (the proof was for the real one).
    let mut bad = back.clone();
    if let Link::Vdf { y, .. } = &mut bad.links[0] {
        y.replace_range(0..1, if y.starts_with('1') { "2" } else { "1" });
    }
    assert!(reason(&set, &bad, doc, 0).contains("proof does not verify"));

    // Swapped links: each proof is bound to its input, which comes from the previous output.
    let mut bad = back.clone();
    bad.links.swap(1, 2);
    let v = verify_public(&set, &bad, doc);
    assert!(
        !v.is_valid()
            && v.links()[0].is_valid()
            && !v.links()[1].is_valid()
            && !v.links()[2].is_valid()
    );

    // Another t with the same proof (a longer claim).
    let mut bad = back.clone();
    if let Link::Vdf { t, .. } = &mut bad.links[2] {
        *t *= 2;
    }
    assert!(reason(&set, &bad, doc, 2).contains("proof does not verify"));

    // A bundle made for another public set (another modulus) is named as such; the same proof
    // presented as if for this set's modulus does not verify.
    let other_group = {
        let p = (rug::Integer::from(1) << 1024u32).next_prime();
        let q = (rug::Integer::from(3) << 1023u32).next_prime();
        RsaGroup::new(p * q).unwrap()
    };
    let other = PublicSet::new(
        "other",
        other_group.modulus().clone(),
        ModulusOrigin::Institution,
        vec![1000],
        1000.0,
        false,
        PuzzleHash::Sha256,
        ProofScheme::Wesolowski,
        "2026-11-24T00:00:00Z",
    )
    .unwrap();
    let foreign = sealed(&other, doc, 1.0);
    assert!(reason(&set, &foreign, doc, 0).contains("another public set"));
    let mut relabelled = foreign.clone();
    if let Link::Vdf { puzzle, .. } = &mut relabelled.links[0] {
        *puzzle = set.fingerprint_hex();
    }
    assert!(reason(&set, &relabelled, doc, 0).contains("proof does not verify"));

    // A bundle naming another hash than the set fixes (and a digest of that length).
    let mut bad = back.clone();
    bad.hash = PuzzleHash::Sha512;
    bad.digest = hex::encode(PuzzleHash::Sha512.digest(doc));
    let v = verify_public(&set, &bad, doc);
    assert!(
        !v.is_valid() && v.reason().unwrap().contains("fixes sha256"),
        "{v:?}"
    );

    // Public bundles are not accepted by the private verifier, and the other way round.
    let mut rng = hourglass_arith::entropy::SeededEntropy::new(b"cross");
    let (_, keys) = hourglass_timelock::submission::generate_set(
        "private",
        &[Duration::from_secs(1)],
        1024,
        (1000.0, false),
        PuzzleHash::Sha256,
        &mut rng,
    )
    .unwrap();
    let private_verifier = Verifier::private(keys).unwrap();
    let digest = private_verifier.digest(&doc[..]).unwrap();
    let v = private_verifier
        .verify(&back, &digest, &VerifyOptions::default(), &mut rng)
        .unwrap();
    assert!(
        !v.is_valid() && v.reason().unwrap().contains("public set"),
        "{v:?}"
    );
    let mut private = back.clone();
    private.set = hourglass_timelock::SetKind::Private;
    assert!(Bundle::from_json(&private.to_json()).is_err());
}

#[test]
fn open_ended_public_links_and_resume() {
    let group = RsaGroup::rsa_2048();
    let set = set_on(&group, "open");
    let doc = b"open-ended";
    let mut bundle = Bundle::new_public(set.hash, &set.hash.digest(doc));
    let opts = options("open", 2.5, true);
    // Stopped at once: nothing finished, then resumed to the end.
    assert_eq!(
        seal_public(
            &set,
            &mut bundle,
            &opts,
            &AtomicBool::new(true),
            &mut |_, _, _| {},
            &mut |_| Ok(())
        )
        .unwrap(),
        SealEnd::Stopped
    );
    assert!(bundle.links.is_empty());
    seal_public(
        &set,
        &mut bundle,
        &opts,
        &AtomicBool::new(false),
        &mut |_, _, _| {},
        &mut |_| Ok(()),
    )
    .unwrap();
    assert_eq!(bundle.links.len(), 1);
    assert_eq!(bundle.links[0].t(), 2500);
    let v = verify_public(&set, &bundle, doc);
    assert!(
        v.is_valid() && (v.credited_secs() - 2.5).abs() < 1e-9,
        "{v:?}"
    );
}

#[test]
fn small_or_structured_moduli_are_refused() {
    let small = (rug::Integer::from(1) << 1023u32).next_prime()
        * (rug::Integer::from(1) << 1000u32).next_prime();
    let err = PublicSet::new(
        "x",
        small,
        ModulusOrigin::Institution,
        vec![10],
        1.0,
        false,
        PuzzleHash::Sha256,
        ProofScheme::Wesolowski,
        "",
    )
    .unwrap_err();
    assert!(err.to_string().contains("2048"), "{err}");
    // Claiming RSA-2048 for another number is refused.
    let p = (rug::Integer::from(1) << 1024u32).next_prime();
    let q = (rug::Integer::from(5) << 1022u32).next_prime();
    let err = PublicSet::new(
        "x",
        p * q,
        ModulusOrigin::Rsa2048,
        vec![10],
        1.0,
        false,
        PuzzleHash::Sha256,
        ProofScheme::Wesolowski,
        "",
    )
    .unwrap_err();
    assert!(err.to_string().contains("RSA-2048"), "{err}");
}

/// A set may fix Pietrzak proofs instead; the verifier follows the set, never the bundle: a
/// Wesolowski link presented for a Pietrzak set (or the reverse) is refused by name.
#[test]
fn pietrzak_sets_and_the_set_decides_the_scheme() {
    let group = RsaGroup::rsa_2048();
    let mut set = set_on(&group, "pietrzak");
    set = PublicSet::new(
        &set.name,
        set.n().clone(),
        set.origin.clone(),
        set.squarings.clone(),
        set.rate,
        set.rate_measured,
        set.hash,
        ProofScheme::Pietrzak,
        &set.created,
    )
    .unwrap();
    assert_eq!(PublicSet::from_json(&set.to_json()).unwrap(), set);
    let doc = b"pietrzak paper";
    let bundle = sealed(&set, doc, 3.0);
    assert!(matches!(
        &bundle.links[0],
        Link::Vdf {
            proof: LinkProof::Pietrzak { .. },
            ..
        }
    ));
    let v = verify_public(&set, &bundle, doc);
    assert!(v.is_valid(), "{v:?}");
    // An edited midpoint.
    let mut bad = bundle.clone();
    if let Link::Vdf {
        proof: LinkProof::Pietrzak { mu },
        ..
    } = &mut bad.links[0]
    {
        let m = &mut mu[0];
        m.replace_range(0..1, if m.starts_with('1') { "2" } else { "1" });
    }
    assert!(reason(&set, &bad, doc, 0).contains("proof does not verify"));
    // The same statement with a Wesolowski proof, against a set that fixes Pietrzak.
    let wes = set_on(&group, "pietrzak");
    let mut mixed = sealed(&wes, doc, 3.0);
    for l in &mut mixed.links {
        if let Link::Vdf { puzzle, .. } = l {
            *puzzle = set.fingerprint_hex();
        }
    }
    assert!(reason(&set, &mixed, doc, 0).contains("the set fixes pietrzak proofs"));
}
