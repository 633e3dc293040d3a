//! Threshold signing from n-of-n shares (hourglass_dkg::reshare, ::threshold, ::sign): parties
//! as threads over the in-memory mesh, with additive shares of a known 1024-bit key split at
//! random (the protocol is the same as for a generated key; the key is known here only so that
//! the tests are fast).
//!
//! Properties: every `t + 1` subset signs a standard signature; the integer sharing
//! reconstructs `Delta^2 d` from every `t + 1` subset (property test); a refresh keeps the key
//! and makes mixed epochs useless; a wrong partial is named, and excluded while `t + 1` valid
//! ones remain; shares of another cluster or epoch are refused, saying which.

use std::thread;
use std::time::Duration;

use hourglass_arith::entropy::SeededEntropy;
use hourglass_arith::secret::SecretInt;
use hourglass_dkg::adversary::{Deviant, Deviation};
use hourglass_dkg::keyshare::{AnyShare, KeyShare};
use hourglass_dkg::reshare::{refresh, reshare};
use hourglass_dkg::rng::Drbg;
use hourglass_dkg::sign::{sign_threshold, Scheme, ThresholdSigned};
use hourglass_dkg::threshold::{deal, factorial, lagrange, Sizes, ThresholdShare};
use hourglass_dkg::transport::{memory_mesh, NetSim, Transport};
use hourglass_dkg::{Error, Integer, PartyId, ThresholdError};
use hourglass_rsa::padding::{Pkcs1v15Sign, Pss};
use hourglass_rsa::{HashAlg, PublicKey};
use proptest::prelude::*;

const TIMEOUT: Duration = Duration::from_secs(20);

/// A `bits`-bit RSA key (e = 65537) from a seed: its public key and `d`.
fn key(bits: u32, seed: u8) -> (PublicKey, Integer) {
    let mut rng = Drbg::from_key(&[seed; 32]);
    let e = Integer::from(65537);
    let prime = |rng: &mut Drbg| loop {
        let top = Integer::from(3) << (bits / 2 - 2);
        let p = (rng.below(&(Integer::from(1) << (bits / 2 - 2))) + top).next_prime();
        if Integer::from(&p - 1u32).gcd(&e) == 1 && p.significant_bits() == bits / 2 {
            return p;
        }
    };
    let (p, q) = (prime(&mut rng), prime(&mut rng));
    let phi = Integer::from(&p - 1u32) * Integer::from(&q - 1u32);
    let d = e.clone().invert(&phi).unwrap();
    (PublicKey::new(p * q, e).unwrap(), d)
}

/// n-of-n shares of a key among parties `1..=k`: `d` split into random signed parts.
fn additive(bits: u32, k: u32, seed: u8, cluster: &str) -> Vec<KeyShare> {
    let (public, d) = key(bits, seed);
    let mut rng = Drbg::from_key(&[seed ^ 0x5a; 32]);
    let bound = Integer::from(1) << bits;
    let mut parts: Vec<Integer> = (1..k)
        .map(|_| rng.below(&bound) - Integer::from(&bound >> 1u32))
        .collect();
    let rest = &d - parts.iter().sum::<Integer>();
    parts.insert(0, rest);
    let members: Vec<PartyId> = (1..=k).collect();
    parts
        .into_iter()
        .enumerate()
        .map(|(i, part)| {
            KeyShare::new(
                cluster.into(),
                [seed; 16],
                i as PartyId + 1,
                members.clone(),
                public.clone(),
                SecretInt::new(part),
            )
        })
        .collect()
}

/// Runs `f` as every party of `ids` over the in-memory mesh, the `deviants` deviating.
fn parties<T: Send + 'static>(
    ids: &[PartyId],
    deviants: &[(PartyId, Deviation)],
    f: impl Fn(&mut dyn Transport, PartyId) -> T + Send + Sync + Clone + 'static,
) -> Vec<(PartyId, T)> {
    let handles: Vec<_> = memory_mesh(ids, NetSim::default())
        .into_iter()
        .map(|inner| {
            let f = f.clone();
            let how = deviants
                .iter()
                .find(|(id, _)| *id == inner.me())
                .map(|(_, how)| *how);
            thread::spawn(move || {
                let me = inner.me();
                let mut transport: Box<dyn Transport> = match how {
                    Some(how) => Box::new(Deviant::new(inner, how)),
                    None => Box::new(inner),
                };
                (me, f(&mut *transport, me))
            })
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}

fn reshared(shares: Vec<KeyShare>, t: usize) -> Vec<ThresholdShare> {
    let ids: Vec<PartyId> = shares.iter().map(|s| s.party).collect();
    let shares = std::sync::Arc::new(shares);
    parties(&ids, &[], move |transport, me| {
        let share = &shares[me as usize - 1];
        let mut rng = SeededEntropy::new(&[me as u8, 1]);
        reshare(transport, share, t, TIMEOUT, &mut rng)
    })
    .into_iter()
    .map(|(me, r)| r.unwrap_or_else(|e| panic!("party {me}: {e}")))
    .collect()
}

fn refreshed(shares: Vec<ThresholdShare>) -> Vec<Result<ThresholdShare, Error>> {
    let ids: Vec<PartyId> = shares.iter().map(|s| s.party).collect();
    let shares = std::sync::Arc::new(shares);
    parties(&ids, &[], move |transport, me| {
        let share = shares.iter().find(|s| s.party == me).unwrap();
        let mut rng = SeededEntropy::new(&[me as u8, 2]);
        refresh(transport, share, TIMEOUT, &mut rng)
    })
    .into_iter()
    .map(|(_, r)| r)
    .collect()
}

/// Every signer of `signers` signs `msg` with its share; the outcome at each.
fn sign(
    shares: &[ThresholdShare],
    signers: &[PartyId],
    scheme: Scheme,
    msg: &[u8],
    deviants: &[(PartyId, Deviation)],
) -> Vec<(PartyId, Result<ThresholdSigned, Error>)> {
    let files: Vec<String> = shares
        .iter()
        .filter(|s| signers.contains(&s.party))
        .map(|s| s.to_json().to_string())
        .collect();
    let files = std::sync::Arc::new(files);
    let list = signers.to_vec();
    let digest = HashAlg::Sha256.digest(msg);
    parties(signers, deviants, move |transport, me| {
        let share = files
            .iter()
            .map(|f| ThresholdShare::from_json(f).unwrap())
            .find(|s| s.party == me)
            .unwrap();
        let mut rng = SeededEntropy::new(&[me as u8, 3]);
        sign_threshold(
            transport,
            &share,
            &list,
            scheme,
            HashAlg::Sha256,
            &digest,
            TIMEOUT,
            &mut rng,
        )
    })
}

fn verifies(public: &PublicKey, scheme: Scheme, msg: &[u8], sig: &[u8]) -> bool {
    match scheme {
        Scheme::Pkcs1v15 => Pkcs1v15Sign::new(HashAlg::Sha256)
            .verify(public, msg, sig)
            .is_ok(),
        Scheme::Pss => Pss::new(HashAlg::Sha256).verify(public, msg, sig).is_ok(),
    }
}

fn subsets(k: u32, size: usize) -> Vec<Vec<PartyId>> {
    (0u32..1 << k)
        .filter(|m| m.count_ones() as usize == size)
        .map(|m| (1..=k).filter(|i| m & (1 << (i - 1)) != 0).collect())
        .collect()
}

#[test]
fn every_three_of_five_sign_after_a_reshare_and_after_a_refresh() {
    let shares = reshared(additive(1024, 5, 1, "c"), 2);
    let public = shares[0].public.public.clone();
    for s in &shares {
        assert_eq!(s.public.epoch, 1);
        assert_eq!(s.public.threshold, 2);
        assert_eq!(
            s.public, shares[0].public,
            "the same public data at every member"
        );
        // The file round-trips.
        let back = ThresholdShare::from_json(&s.to_json()).unwrap();
        assert_eq!(back.share(), s.share());
        assert_eq!(back.public, s.public);
    }
    let msg = b"any three of us";
    for (i, subset) in subsets(5, 3).iter().enumerate() {
        let scheme = if i % 2 == 0 {
            Scheme::Pkcs1v15
        } else {
            Scheme::Pss
        };
        let outcomes = sign(&shares, subset, scheme, msg, &[]);
        let first = outcomes[0].1.as_ref().unwrap().signature.clone();
        for (me, out) in &outcomes {
            let signed = out
                .as_ref()
                .unwrap_or_else(|e| panic!("{subset:?} party {me}: {e}"));
            assert_eq!(
                signed.signature, first,
                "every signer outputs the same signature"
            );
            assert!(signed.excluded.is_empty());
        }
        assert!(verifies(&public, scheme, msg, &first), "{subset:?}");
        assert!(!verifies(&public, scheme, b"another message", &first));
    }
    // A refresh: the same key, a new epoch, and again any three sign.
    let old: Vec<String> = shares.iter().map(|s| s.to_json().to_string()).collect();
    let fresh: Vec<ThresholdShare> = refreshed(shares).into_iter().map(Result::unwrap).collect();
    assert!(fresh
        .iter()
        .all(|s| s.public.epoch == 2 && s.public.public == public));
    let old: Vec<ThresholdShare> = old
        .iter()
        .map(|t| ThresholdShare::from_json(t).unwrap())
        .collect();
    assert_ne!(fresh[0].share(), old[0].share());
    // The shares do not grow from epoch to epoch.
    let sizes = Sizes::new(1024, 5, 2).unwrap();
    assert!(fresh
        .iter()
        .all(|s| s.share().significant_bits() <= sizes.share_bits));
    let outcomes = sign(&fresh, &[1, 4, 5], Scheme::Pss, msg, &[]);
    let sig = &outcomes[0].1.as_ref().unwrap().signature;
    assert!(verifies(&public, Scheme::Pss, msg, sig));

    // Epochs mixed: refused by epoch, naming the party that missed the refresh.
    let mixed = vec![
        ThresholdShare::from_json(&fresh[0].to_json()).unwrap(),
        ThresholdShare::from_json(&fresh[1].to_json()).unwrap(),
        ThresholdShare::from_json(&old[2].to_json()).unwrap(),
    ];
    for (me, out) in sign(&mixed, &[1, 2, 3], Scheme::Pkcs1v15, msg, &[]) {
        let err = out.unwrap_err();
        match me {
            3 => assert!(
                err.to_string().contains("this party missed a refresh"),
                "{err}"
            ),
            _ => assert!(
                matches!(
                    err,
                    Error::Threshold(ThresholdError::OtherEpoch {
                        party: 3,
                        theirs: 1,
                        ours: 2
                    })
                ) || err.to_string().contains("party 3 missed a refresh"),
                "party {me}: {err}"
            ),
        }
    }
    // Even forced (the old share relabelled with the new epoch's public data), the mix
    // yields no signature: party 3's partial fails its proof, and it is named.
    let mut forced = old[2].to_json().to_string();
    let new_public: serde_json::Value = serde_json::from_str(&fresh[2].to_json()).unwrap();
    let mut file: serde_json::Value = serde_json::from_str(&forced).unwrap();
    for field in [
        "epoch",
        "epoch_session",
        "verification_base",
        "verification_keys",
    ] {
        file[field] = new_public[field].clone();
    }
    forced = file.to_string();
    let mixed = vec![
        ThresholdShare::from_json(&fresh[0].to_json()).unwrap(),
        ThresholdShare::from_json(&fresh[1].to_json()).unwrap(),
        ThresholdShare::from_json(&forced).unwrap(),
    ];
    for (me, out) in sign(&mixed, &[1, 2, 3], Scheme::Pkcs1v15, msg, &[]) {
        if me == 3 {
            continue;
        }
        match out {
            Err(Error::Threshold(ThresholdError::WrongPartials { wrong, .. })) => {
                assert_eq!(wrong, vec![3], "party {me}")
            }
            other => panic!("party {me}: {other:?}"),
        }
    }
    // A refresh with a party at an old epoch is refused, naming it; nothing comes out.
    let mixed = vec![
        ThresholdShare::from_json(&fresh[0].to_json()).unwrap(),
        ThresholdShare::from_json(&fresh[1].to_json()).unwrap(),
        ThresholdShare::from_json(&old[2].to_json()).unwrap(),
        ThresholdShare::from_json(&fresh[3].to_json()).unwrap(),
        ThresholdShare::from_json(&fresh[4].to_json()).unwrap(),
    ];
    let outcomes = refreshed(mixed);
    assert!(outcomes.iter().all(Result::is_err));
    let text = outcomes[0].as_ref().unwrap_err().to_string();
    assert!(
        text.contains("party 3") && text.contains("epoch 1"),
        "{text}"
    );
}

#[test]
fn a_wrong_partial_is_named_and_left_out_while_t_plus_one_remain() {
    let shares = reshared(additive(1024, 5, 2, "w"), 2);
    let public = shares[0].public.public.clone();
    let msg = b"one of us lies";
    // Four signers, party 3 lying: the others name it, leave it out, and sign.
    for (me, out) in sign(
        &shares,
        &[1, 2, 3, 5],
        Scheme::Pkcs1v15,
        msg,
        &[(3, Deviation::WrongPartial)],
    ) {
        let signed = out.unwrap_or_else(|e| panic!("party {me}: {e}"));
        assert!(verifies(&public, Scheme::Pkcs1v15, msg, &signed.signature));
        if me != 3 {
            assert_eq!(signed.excluded, vec![3], "party {me}");
            assert!(!signed.used.contains(&3));
        }
    }
    // An outside combiner (no secret) given partials with their proofs: the same rule.
    let x = Integer::from(123_456_789u64);
    let mut partials: Vec<_> = [1usize, 2, 4, 5]
        .iter()
        .map(|&j| {
            shares[j - 1]
                .partial_sign(&x, &mut SeededEntropy::new(&[j as u8]))
                .unwrap()
        })
        .collect();
    partials[0].value += 1u32;
    let combined = shares[0].public.combine(&x, &partials).unwrap();
    assert_eq!(combined.excluded, vec![1]);
    assert_eq!(combined.used, vec![2, 4, 5]);
    assert_eq!(public.public_op(&combined.signature).unwrap(), x);
    // Without proofs, a wrong partial cannot be told apart: none is trusted.
    for p in &mut partials {
        p.proof = None;
    }
    assert!(matches!(
        shares[0].public.combine(&x, &partials),
        Err(Error::Threshold(ThresholdError::WrongPartials { .. }))
    ));
    // Exactly t + 1, one lying: an error naming it, no signature.
    for (me, out) in sign(
        &shares,
        &[2, 4, 5],
        Scheme::Pss,
        msg,
        &[(4, Deviation::WrongPartial)],
    ) {
        if me == 4 {
            continue;
        }
        let err = out.unwrap_err();
        assert!(
            matches!(&err, Error::Threshold(ThresholdError::WrongPartials { wrong, valid: 2, needed: 3 }) if wrong == &vec![4]),
            "party {me}: {err}"
        );
        assert!(err.to_string().contains("parties [4] are wrong"), "{err}");
        assert!(
            err.is_verdict(),
            "a liar caught is a negative verdict: {err}"
        );
    }
}

/// Every lying signer is named, not only those among the first `t + 1` by party: a liar
/// that the first combination would not use, and two liars among five signers (t = 2), while
/// the signature still comes out and verifies.
#[test]
fn every_lying_signer_is_named_even_outside_the_first_t_plus_one() {
    let shares = reshared(additive(1024, 5, 6, "every"), 2);
    let public = shares[0].public.public.clone();
    let msg = b"every liar named";
    // Party 5 lies among 1, 2, 3, 5: the first three combine, yet 5 is named.
    for (me, out) in sign(
        &shares,
        &[1, 2, 3, 5],
        Scheme::Pss,
        msg,
        &[(5, Deviation::WrongPartial)],
    ) {
        let signed = out.unwrap_or_else(|e| panic!("party {me}: {e}"));
        assert!(verifies(&public, Scheme::Pss, msg, &signed.signature));
        if me != 5 {
            assert_eq!(signed.excluded, vec![5], "party {me}");
            assert_eq!(signed.used, vec![1, 2, 3], "party {me}");
        }
    }
    // Two liars among five: both named by every honest signer, and the three others sign.
    for (me, out) in sign(
        &shares,
        &[1, 2, 3, 4, 5],
        Scheme::Pkcs1v15,
        msg,
        &[(2, Deviation::WrongPartial), (4, Deviation::WrongPartial)],
    ) {
        if [2, 4].contains(&me) {
            continue;
        }
        let signed = out.unwrap_or_else(|e| panic!("party {me}: {e}"));
        assert!(verifies(&public, Scheme::Pkcs1v15, msg, &signed.signature));
        assert_eq!(signed.excluded, vec![2, 4], "party {me}");
        assert_eq!(signed.used, vec![1, 3, 5], "party {me}");
    }
    // No liar: nobody is named.
    for (me, out) in sign(&shares, &[1, 2, 3, 4, 5], Scheme::Pss, msg, &[]) {
        let signed = out.unwrap_or_else(|e| panic!("party {me}: {e}"));
        assert!(signed.excluded.is_empty(), "party {me}");
        assert!(verifies(&public, Scheme::Pss, msg, &signed.signature));
    }
}

/// Colluding liars whose errors cancel in the first combination (so that it verifies under
/// `e`) are still named among five signers (2t or more): the other combinations catch them, and
/// the proofs name them.
#[test]
fn colluding_liars_whose_errors_cancel_are_named() {
    let shares = reshared(additive(1024, 5, 7, "collude"), 2);
    let public = &shares[0].public;
    let n = public.public.n().clone();
    let x = Integer::from(987_654_321u64);
    let honest: Vec<_> = (1usize..=5)
        .map(|j| {
            shares[j - 1]
                .partial_sign(&x, &mut SeededEntropy::new(&[j as u8, 9]))
                .unwrap()
        })
        .collect();
    // Without proofs, the honest partials pass the cheap check.
    let bare: Vec<_> = honest
        .iter()
        .cloned()
        .map(|mut p| {
            p.proof = None;
            p
        })
        .collect();
    let cheap = public.try_combine(&x, &bare).unwrap().expect("conclusive");
    assert_eq!(public.public.public_op(&cheap.signature).unwrap(), x);
    // Parties 2 and 3 shift their partials by g^(lambda_3) and g^(-lambda_2) (the Lagrange
    // coefficients of {1, 2, 3}): the product over {1, 2, 3} is unchanged.
    let delta = factorial(5);
    let g = Integer::from(7);
    let l2 = lagrange(&delta, &[1, 2, 3], 2).unwrap();
    let l3 = lagrange(&delta, &[1, 2, 3], 3).unwrap();
    let shift = |e: &Integer| Integer::from(g.pow_mod_ref(e, &n).unwrap());
    let mut lying = honest.clone();
    lying[1].value = (&lying[1].value * shift(&l3)) % &n;
    lying[2].value = (&lying[2].value * shift(&Integer::from(-&l2))) % &n;
    assert_ne!(lying[1].value, honest[1].value);
    assert_ne!(lying[2].value, honest[2].value);
    // Among exactly these three (fewer than 2t signers), the cheap check cannot see them: the
    // signature is still right, and nobody is named (the documented limit).
    let among_three = public
        .try_combine(&x, &lying[..3])
        .unwrap()
        .expect("they cancel");
    assert_eq!(among_three.signature, cheap.signature);
    assert!(among_three.excluded.is_empty());
    // Their proofs still name both.
    assert!(!public.verify_partial(&x, &lying[1]));
    assert!(!public.verify_partial(&x, &lying[2]));
    let stripped: Vec<_> = lying
        .iter()
        .cloned()
        .map(|mut p| {
            p.proof = None;
            p
        })
        .collect();
    assert!(
        public.try_combine(&x, &stripped).unwrap().is_none(),
        "the combinations with parties 4 and 5 expose them"
    );
    let combined = public.combine(&x, &lying).unwrap();
    assert_eq!(combined.excluded, vec![2, 3]);
    assert_eq!(combined.used, vec![1, 4, 5]);
    assert_eq!(public.public.public_op(&combined.signature).unwrap(), x);
}

#[test]
fn too_few_repeated_or_unknown_signers_and_foreign_shares_are_refused() {
    let shares = reshared(additive(1024, 5, 3, "f"), 2);
    let p = &shares[0].public;
    assert!(matches!(
        p.check_signers(&[1, 2]),
        Err(Error::Threshold(ThresholdError::TooFewSigners {
            needed: 3,
            got: 2,
            ..
        }))
    ));
    assert!(matches!(
        p.check_signers(&[1, 2, 2]),
        Err(Error::Threshold(ThresholdError::DuplicateSigner {
            party: 2
        }))
    ));
    assert!(matches!(
        p.check_signers(&[1, 2, 9]),
        Err(Error::Threshold(ThresholdError::UnknownSigner {
            party: 9,
            ..
        }))
    ));
    let text = p.check_signers(&[1, 5]).unwrap_err().to_string();
    assert!(text.contains("at least 3 signers"), "{text}");
    // A share of another cluster (another key and session) among the signers is refused.
    let other = reshared(additive(1024, 5, 4, "f"), 2);
    let mixed = vec![
        ThresholdShare::from_json(&shares[0].to_json()).unwrap(),
        ThresholdShare::from_json(&shares[1].to_json()).unwrap(),
        ThresholdShare::from_json(&other[2].to_json()).unwrap(),
    ];
    for (me, out) in sign(&mixed, &[1, 2, 3], Scheme::Pkcs1v15, b"m", &[]) {
        let err = out.unwrap_err();
        let party = if me == 3 { 1 } else { 3 };
        assert!(
            matches!(err, Error::Threshold(ThresholdError::OtherCluster { party: p, differs: hourglass_dkg::ClusterDifference::Session }) if p == party)
                || err
                    .to_string()
                    .contains("another cluster: another generation session"),
            "party {me}: {err}"
        );
    }
    // A reshare asked with different thresholds stops: the others name party 2's threshold
    // (party 2 itself may find a link already closed by a party that stopped first).
    let additive_shares = std::sync::Arc::new(additive(1024, 5, 5, "t"));
    let outcomes = parties(&[1, 2, 3, 4, 5], &[], move |transport, me| {
        let t = if me == 2 { 1 } else { 2 };
        let mut rng = SeededEntropy::new(&[me as u8]);
        reshare(
            transport,
            &additive_shares[me as usize - 1],
            t,
            TIMEOUT,
            &mut rng,
        )
    });
    for (me, out) in outcomes {
        let text = out.unwrap_err().to_string();
        if me == 2 && text.contains("connection closed") {
            continue;
        }
        assert!(
            text.contains("has threshold") && text.contains("nobody changes it"),
            "party {me}: {text}"
        );
    }
    // The share file: either version reads, and damage names the field.
    let v1 = additive(1024, 3, 6, "v")[0].to_json();
    assert!(matches!(
        AnyShare::from_json(&v1).unwrap(),
        AnyShare::Additive(_)
    ));
    let v2 = shares[0].to_json();
    assert!(matches!(
        AnyShare::from_json(&v2).unwrap(),
        AnyShare::Threshold(_)
    ));
    let mut file: serde_json::Value = serde_json::from_str(&v2).unwrap();
    file["threshold"] = 3.into();
    let err = ThresholdShare::from_json(&file.to_string())
        .unwrap_err()
        .to_string();
    assert!(err.contains("threshold 3 with 5 members"), "{err}");
    let mut file: serde_json::Value = serde_json::from_str(&v2).unwrap();
    file["verification_keys"].as_array_mut().unwrap().pop();
    let err = ThresholdShare::from_json(&file.to_string())
        .unwrap_err()
        .to_string();
    assert!(err.contains("4 verification keys for 5 members"), "{err}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// The integer sharing: k dealers' sharings of secrets below the bound add up to shares
    /// from which every t + 1 subset recovers Delta^2 * (sum of the secrets), exactly, and
    /// every sub-share matches its dealer's commitments.
    #[test]
    fn every_t_plus_one_subset_reconstructs_the_shared_sum(
        k in 3usize..=7,
        t_pick in 0usize..3,
        seed in any::<[u8; 32]>(),
    ) {
        let t = 1 + t_pick % ((k - 1) / 2);
        let bits = 1024;
        let sizes = Sizes::new(bits, k, t).unwrap();
        let (public, _) = key(bits, seed[0]);
        let n = public.n();
        let mut rng = Drbg::from_key(&seed);
        let v = rng.below(n).square() % n;
        let bound = Integer::from(1) << (sizes.dealt_bits - 1);
        let secrets: Vec<Integer> = (0..k).map(|_| rng.below(&bound) - Integer::from(&bound >> 1u32)).collect();
        let mut shares = vec![Integer::new(); k];
        for secret in &secrets {
            let dealing = deal(&sizes, secret, &v, n, &mut rng).unwrap();
            for (j, s) in dealing.sub_shares.iter().enumerate() {
                shares[j] += s.expose();
            }
            let j = 1 + (seed[1] as usize) % k;
            prop_assert!(hourglass_dkg::threshold::check_sub_share(
                &sizes, &v, n, &dealing.commitments, j, dealing.sub_shares[j - 1].expose()
            ).unwrap());
            prop_assert!(!hourglass_dkg::threshold::check_sub_share(
                &sizes, &v, n, &dealing.commitments, j, &(dealing.sub_shares[j - 1].expose_owned() + 1u32)
            ).unwrap());
        }
        let total: Integer = secrets.iter().sum();
        let delta = factorial(k);
        let want = Integer::from(&delta * &delta) * &total;
        for mask in 0u32..1 << k {
            if mask.count_ones() as usize != t + 1 {
                continue;
            }
            let subset: Vec<usize> = (1..=k).filter(|j| mask & (1 << (j - 1)) != 0).collect();
            let got: Integer = subset
                .iter()
                .map(|&j| lagrange(&delta, &subset, j).unwrap() * &shares[j - 1])
                .sum();
            prop_assert_eq!(&got, &want, "subset {:?}", subset);
        }
    }
}

/// Damaged version 2 share files never panic the parser, and whatever parses writes itself
/// back and parses again to the same share (seeded, 2,000 cases).
#[test]
fn damaged_threshold_share_files_never_panic_and_round_trip() {
    use hourglass_testkit::{damage, mutation};
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
    let shares = reshared(additive(1024, 3, 7, "d"), 1);
    let files: Vec<String> = shares.iter().map(|s| s.to_json().to_string()).collect();
    let config = Config {
        cases: 2000,
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner =
        TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &[31; 32]));
    let parsed = std::cell::Cell::new(0usize);
    runner
        .run(
            &(0..files.len(), proptest::collection::vec(mutation(), 1..4)),
            |(which, muts)| {
                let data = damage(files[which].clone().into_bytes(), &muts);
                let Ok(text) = std::str::from_utf8(&data) else {
                    return Ok(());
                };
                let Ok(share) = AnyShare::from_json(text) else {
                    return Ok(());
                };
                let AnyShare::Threshold(share) = share else {
                    return Ok(());
                };
                parsed.set(parsed.get() + 1);
                let json = share.to_json();
                let again = ThresholdShare::from_json(&json).unwrap();
                prop_assert_eq!(&again.public, &share.public);
                prop_assert_eq!(again.share(), share.share());
                prop_assert_eq!(&*again.to_json(), &*json);
                Ok(())
            },
        )
        .unwrap();
    assert!(parsed.get() > 100, "only {} parsed", parsed.get());
}
