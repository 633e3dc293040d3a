//! The one verdict, attacked as an outsider would: a relabelled origin, a link forged from the
//! factors, non-canonical spellings of one proof, a key list whose hashes differ, a bundle
//! crediting more time than has passed since 1970, and early stopping that must not change the
//! verdict.

use std::time::Duration;

use hourglass_arith::entropy::{OsEntropy, SeededEntropy};
use hourglass_arith::Integer;
use hourglass_timelock::bundle::{link_input, Bundle, Link, LinkProof};
use hourglass_timelock::public::{ModulusOrigin, OriginPins, ProofScheme, PublicSet};
use hourglass_timelock::submission::generate_set;
use hourglass_timelock::verdict::{Dating, LinkPolicy, Trust, Verdict, Verifier, VerifyOptions};
use hourglass_timelock::{Error, PuzzleHash, TrustError};
use hourglass_vdf::{SecurityLevel, Statement, Wesolowski};

/// A 2048-bit modulus whose factors the "institution" knows, and its group order.
fn known_modulus() -> (Integer, Integer) {
    let p = (Integer::from(0xc0ffee_u32) << 1000u32 | Integer::from(12345)).next_prime();
    let q = (Integer::from(0xbeef01_u32) << 1000u32 | Integer::from(67891)).next_prime();
    let order = (p.clone() - 1u32) * (q.clone() - 1u32);
    let n = p * q;
    assert!(n.significant_bits() >= 2048);
    (n, order)
}

fn public_set(n: &Integer, origin: ModulusOrigin, rate: f64) -> PublicSet {
    PublicSet::new(
        "forgery",
        n.clone(),
        origin,
        vec![1 << 40],
        rate,
        false,
        PuzzleHash::Sha256,
        ProofScheme::Wesolowski,
        "2026-11-27T00:00:00Z",
    )
    .unwrap()
}

/// A bundle of one 2^40-squaring link forged in milliseconds from the group order:
/// `y = x^(2^t mod order)` and `pi = x^(floor(2^t / l) mod order)`.
fn forged_bundle(set: &PublicSet, order: &Integer, document: &[u8]) -> Bundle {
    let t: u64 = 1 << 40;
    let group = set.group();
    let mut bundle = Bundle::new_public(set.hash, &set.hash.digest(document));
    let x = group.canonical(&link_input(&bundle, 0, set.n()).unwrap());
    let two_t = Integer::from(2).pow_mod(&Integer::from(t), order).unwrap();
    let y = group.canonical(&x.clone().pow_mod(&two_t, set.n()).unwrap());
    let statement = Statement {
        group: group.clone(),
        x: x.clone(),
        y: y.clone(),
        iterations: t,
        level: SecurityLevel::K128,
    };
    let l = Wesolowski::new(SecurityLevel::K128)
        .challenge(&statement)
        .unwrap();
    // floor(2^t / l) = (2^t - (2^t mod l)) / l, reduced modulo the order.
    let r = Integer::from(2).pow_mod(&Integer::from(t), &l).unwrap();
    let l_inv = l.clone().invert(order).unwrap();
    let quotient = ((two_t - r) * l_inv).modulo(order);
    let pi = group.canonical(&x.pow_mod(&quotient, set.n()).unwrap());
    bundle.links.push(Link::Vdf {
        puzzle: set.fingerprint_hex(),
        t,
        y: format!("{y:x}"),
        proof: LinkProof::Wesolowski {
            pi: format!("{pi:x}"),
            l: format!("{l:x}"),
        },
    });
    bundle
}

fn verdict(verifier: &Verifier, bundle: &Bundle, document: &[u8], links: LinkPolicy) -> Verdict {
    let digest = verifier.digest(document).unwrap();
    let options = VerifyOptions {
        links,
        ..VerifyOptions::default()
    };
    verifier
        .verify(bundle, &digest, &options, &mut OsEntropy)
        .unwrap()
}

#[test]
fn a_forged_link_on_the_institutions_modulus_is_never_trustless() {
    let (n, order) = known_modulus();
    let document = b"backdated paper";
    // On the institution's own modulus the forgery verifies, and the verdict says so.
    let own = public_set(&n, ModulusOrigin::Institution, 1.5e6);
    let bundle = forged_bundle(&own, &order, document);
    let verifier = Verifier::public(own, &OriginPins::default()).unwrap();
    let v = verdict(&verifier, &bundle, document, LinkPolicy::Every);
    assert!(v.is_valid(), "{v:?}");
    assert_eq!(*v.trust(), Trust::InstitutionModulus);
    assert!(!v.trust().trustless());
    assert!(
        v.trust().assumption().contains("could have forged"),
        "{}",
        v.trust().assumption()
    );

    // Relabelled as a committee's (the fingerprint recomputed): no verdict at all without the
    // committee pinned.
    let relabelled = public_set(
        &n,
        ModulusOrigin::Dkg {
            committee: "cluster 'conf-2027', members [1, 2, 3]".into(),
            transcript: "ab".repeat(32),
        },
        1.5e6,
    );
    let text = relabelled.to_json();
    let reread = PublicSet::from_json(&text).unwrap();
    let err = Verifier::public(reread, &OriginPins::default()).unwrap_err();
    assert!(
        matches!(err, Error::Trust(TrustError::UnpinnedCommittee { .. })),
        "{err}"
    );
    assert!(err.to_string().contains("pin the committee"), "{err}");
}

#[test]
fn one_proof_has_one_spelling() {
    let (n, order) = known_modulus();
    let document = b"one spelling";
    let set = public_set(&n, ModulusOrigin::Institution, 1.5e6);
    let bundle = forged_bundle(&set, &order, document);
    let text = bundle.to_json();
    assert!(Bundle::from_json(&text).is_ok());
    let Link::Vdf { y, puzzle, .. } = &bundle.links[0] else {
        unreachable!()
    };
    let upper_y = text.replacen(y.as_str(), &y.to_uppercase(), 1);
    let zero_y = text.replacen(y.as_str(), &format!("0{y}"), 1);
    let upper_puzzle = text.replacen(puzzle.as_str(), &puzzle.to_uppercase(), 1);
    let upper_digest = text.replacen(&bundle.digest, &bundle.digest.to_uppercase(), 1);
    for (edited, field) in [
        (upper_y, "field y"),
        (zero_y, "field y"),
        (upper_puzzle, "field puzzle"),
        (upper_digest, "field digest"),
    ] {
        assert_ne!(edited, text);
        let err = Bundle::from_json(&edited).unwrap_err().to_string();
        assert!(err.contains(field) && err.contains("canonical"), "{err}");
    }
    // The set's own hex fields too.
    let set_text = set.to_json();
    let n_hex = format!("{n:x}");
    let err = PublicSet::from_json(&set_text.replacen(&n_hex, &n_hex.to_uppercase(), 1))
        .unwrap_err()
        .to_string();
    assert!(err.contains("canonical"), "{err}");
}

#[test]
fn keys_that_fix_different_hashes_are_refused_in_any_order() {
    let mut rng = SeededEntropy::new(b"mixed hashes");
    let one = |hash| {
        generate_set(
            "mixed",
            &[Duration::from_secs(1)],
            1024,
            (1000.0, false),
            hash,
            &mut SeededEntropy::new(format!("{hash}").as_bytes()),
        )
        .unwrap()
        .1
        .remove(0)
    };
    let (a, b) = (one(PuzzleHash::Sha256), one(PuzzleHash::Sha512));
    for keys in [vec![a.clone(), b.clone()], vec![b, a]] {
        let err = Verifier::private(keys).unwrap_err().to_string();
        assert!(err.contains("sha256") && err.contains("sha512"), "{err}");
    }
    let _ = &mut rng;
}

#[test]
fn more_credit_than_time_since_1970_dates_to_the_epoch_without_failing() {
    let (n, order) = known_modulus();
    let document = b"from before the epoch";
    // 2^40 squarings at one squaring a millennium.
    let set = public_set(&n, ModulusOrigin::Institution, 1.0 / 3.15e10);
    let bundle = forged_bundle(&set, &order, document);
    let verifier = Verifier::public(set, &OriginPins::default()).unwrap();
    let v = verdict(&verifier, &bundle, document, LinkPolicy::Every);
    assert!(v.is_valid() && v.credited_secs() > 1e20, "{v:?}");
    let dating = Dating::new(&v, 1_800_000_000, Some(1_800_000_000));
    assert_eq!(dating.predated_to_ms, 0);
    assert_eq!(dating.before_deadline, Some(true));
    let json = serde_json::to_value(dating).unwrap();
    assert_eq!(json["predated_to"], "1970-01-01T00:00:00Z");
}

#[test]
fn stopping_early_keeps_the_verdict_and_its_reason() {
    let mut rng = SeededEntropy::new(b"early stop");
    let (set, keys) = generate_set(
        "early",
        &[Duration::from_millis(20)],
        1024,
        (1000.0, false),
        PuzzleHash::Sha256,
        &mut rng,
    )
    .unwrap();
    let key = &set.puzzles[0];
    let document = b"many links";
    let verifier = Verifier::private(keys).unwrap();
    // Four valid links, then a broken one, then more.
    let mut bundle = Bundle::new(PuzzleHash::Sha256, &PuzzleHash::Sha256.digest(document));
    for i in 0..12 {
        let m = link_input(&bundle, i, key.n()).unwrap();
        let options = hourglass_timelock::SolveOptions::default();
        let stop = std::sync::atomic::AtomicBool::new(false);
        let hourglass_timelock::SolveOutcome::Solved(c) =
            hourglass_timelock::solve(key, &m, &options, &stop, &mut |_| {}).unwrap()
        else {
            unreachable!()
        };
        let c = if i == 4 { c + 1u32 } else { c };
        bundle.links.push(Link::Puzzle {
            puzzle: key.fingerprint_hex(),
            t: key.t(),
            c: format!("{c:x}"),
        });
    }
    let every = verdict(&verifier, &bundle, document, LinkPolicy::Every);
    let early = verdict(&verifier, &bundle, document, LinkPolicy::StopAtFirstInvalid);
    assert!(!every.is_valid() && !early.is_valid());
    assert_eq!(every.reason(), early.reason());
    assert!(every.reason().unwrap().starts_with("link 5:"));
    assert_eq!(every.links().len(), 12);
    assert!(early.links().len() < 12, "{}", early.links().len());
    // Another document: nothing is checked when stopping early.
    let other = verdict(&verifier, &bundle, b"other", LinkPolicy::StopAtFirstInvalid);
    assert!(other.links().is_empty() && other.reason().unwrap().contains("document"));
    // An honest bundle is valid either way, with the same credit.
    bundle.links.truncate(4);
    let every = verdict(&verifier, &bundle, document, LinkPolicy::Every);
    let early = verdict(&verifier, &bundle, document, LinkPolicy::StopAtFirstInvalid);
    assert!(every.is_valid() && early.is_valid());
    assert_eq!(every.credited_secs(), early.credited_secs());
    assert_eq!(every.links(), early.links());
}
