//! Soundness and completeness of both VDFs: honest proofs verify for every shape of `T`
//! (1 to 2^24 by real evaluation, beyond 2^30 with the trapdoor), and any change to the
//! modulus, input, `T`, output or proof is rejected, including the low-order trick of
//! answering `-y`.

use hourglass_vdf::eval::{evaluate_in_memory, stride_for, Evaluation};
use hourglass_vdf::group::RsaGroup;
use hourglass_vdf::pietrzak::rounds;
use hourglass_vdf::{
    Pietrzak, PietrzakProof, SecurityLevel, Statement, Vdf, Wesolowski, WesolowskiProof,
};
use proptest::prelude::*;
use rug::Integer;

/// A 512-bit modulus with known factors (insecure on purpose: fast, and the trapdoor lets tests
/// check very long `T`).
fn toy() -> (RsaGroup, Integer) {
    let p = (Integer::from(1) << 255u32).next_prime();
    let q = (Integer::from(0xb7e1_5162u32) << 224u32).next_prime();
    let order = Integer::from(&p - 1u32) * Integer::from(&q - 1u32);
    (RsaGroup::new_insecure(p * q).unwrap(), order)
}

fn other_toy() -> RsaGroup {
    let p = (Integer::from(3) << 254u32).next_prime();
    let q = (Integer::from(5) << 253u32).next_prime();
    RsaGroup::new_insecure(p * q).unwrap()
}

fn wesolowski(ev: &Evaluation, level: SecurityLevel) -> (Statement, WesolowskiProof) {
    let vdf = Wesolowski::new(level);
    (ev.statement(level), vdf.prove(ev).unwrap())
}

fn pietrzak(ev: &Evaluation, level: SecurityLevel) -> (Statement, PietrzakProof) {
    let vdf = Pietrzak::new(level);
    (ev.statement(level), vdf.prove(ev).unwrap())
}

#[test]
fn honest_proofs_verify_for_odd_even_and_power_of_two_t() {
    let (g, _) = toy();
    let x = g.hash_to_element(b"completeness").unwrap();
    let mut ts: Vec<u64> = vec![
        1, 2, 3, 4, 5, 7, 8, 63, 64, 65, 127, 128, 129, 255, 256, 257,
    ];
    for e in [10u32, 11, 12, 16, 20] {
        ts.extend([(1 << e) - 1, 1 << e, (1 << e) + 1]);
    }
    ts.push(1_000_003);
    for &t in &ts {
        let ev = evaluate_in_memory(&g, &x, t).unwrap();
        if t <= 1 << 16 {
            let direct = hourglass_arith::squaring::square_k_times(&x, t, g.modulus());
            assert_eq!(ev.output(), g.canonical(&direct), "y for T = {t}");
        }
        for level in [SecurityLevel::K128, SecurityLevel::K256] {
            let (st, proof) = wesolowski(&ev, level);
            Wesolowski::new(level)
                .verify(&st, &proof)
                .unwrap_or_else(|e| panic!("Wesolowski T = {t}: {e}"));
            let (st, proof) = pietrzak(&ev, level);
            assert_eq!(proof.mu.len(), rounds(t));
            Pietrzak::new(level)
                .verify(&st, &proof)
                .unwrap_or_else(|e| panic!("Pietrzak T = {t}: {e}"));
        }
    }
}

#[test]
fn honest_proofs_verify_at_t_2_pow_24() {
    let (g, _) = toy();
    let x = g.hash_to_element(b"2^24").unwrap();
    let ev = evaluate_in_memory(&g, &x, 1 << 24).unwrap();
    assert_eq!(ev.stride(), stride_for(1 << 24));
    let (st, proof) = wesolowski(&ev, SecurityLevel::K128);
    Wesolowski::default().verify(&st, &proof).unwrap();
    let (st, proof) = pietrzak(&ev, SecurityLevel::K128);
    Pietrzak::default().verify(&st, &proof).unwrap();
}

/// A public Rust implementation produced invalid proofs beyond about 10^7 iterations; the
/// trapdoor computes the kept powers directly, so `T` far beyond evaluation reach is checked.
/// A proof still costs about `T / 11` multiplications, so a 128-bit modulus keeps this quick.
#[test]
fn proofs_stay_valid_far_beyond_ten_million_iterations() {
    let p = (Integer::from(0xc90f_daa2u32) << 32u32).next_prime();
    let q = (Integer::from(0xadf8_5458u32) << 32u32).next_prime();
    let order = Integer::from(&p - 1u32) * Integer::from(&q - 1u32);
    let g = RsaGroup::new_insecure(p * q).unwrap();
    let x = g.hash_to_element(b"long T").unwrap();
    // The strides a real evaluation uses (1024 and 2048), and a coarser one.
    for (t, stride) in [
        (10_000_019u64, stride_for(10_000_019)),
        ((1 << 30) + 1, stride_for((1 << 30) + 1)),
        ((1 << 30) + 3, 1 << 16),
    ] {
        let ev = Evaluation::with_group_order(&g, &x, t, &order, stride).unwrap();
        let (st, proof) = wesolowski(&ev, SecurityLevel::K128);
        Wesolowski::default()
            .verify(&st, &proof)
            .unwrap_or_else(|e| panic!("Wesolowski T = {t}: {e}"));
        let (st, proof) = pietrzak(&ev, SecurityLevel::K128);
        Pietrzak::default()
            .verify(&st, &proof)
            .unwrap_or_else(|e| panic!("Pietrzak T = {t}: {e}"));
    }
}

fn flip(v: &Integer, bit: u32) -> Integer {
    let mut w = v.clone();
    w.toggle_bit(bit);
    w
}

#[test]
fn wesolowski_rejects_every_change() {
    let (g, _) = toy();
    let x = g.hash_to_element(b"tamper").unwrap();
    let ev = evaluate_in_memory(&g, &x, 5000).unwrap();
    let vdf = Wesolowski::default();
    let (st, proof) = wesolowski(&ev, SecurityLevel::K128);
    vdf.verify(&st, &proof).unwrap();
    let n = g.modulus().clone();
    let reject = |st: &Statement, p: &WesolowskiProof, what: &str| {
        assert!(vdf.verify(st, p).is_err(), "accepted: {what}");
    };
    for bit in [0u32, 1, 7, 64, 200, 400, 509] {
        reject(
            &Statement {
                y: flip(&st.y, bit),
                ..st.clone()
            },
            &proof,
            "flipped y",
        );
        reject(
            &st,
            &WesolowskiProof {
                pi: flip(&proof.pi, bit),
                ..proof.clone()
            },
            "flipped pi",
        );
        reject(
            &Statement {
                x: flip(&st.x, bit),
                ..st.clone()
            },
            &proof,
            "flipped x",
        );
    }
    for bit in [0u32, 1, 100, 254, 255] {
        reject(
            &st,
            &WesolowskiProof {
                l: flip(&proof.l, bit),
                ..proof.clone()
            },
            "flipped l",
        );
    }
    for t in [st.iterations - 1, st.iterations + 1, st.iterations * 2] {
        reject(
            &Statement {
                iterations: t,
                ..st.clone()
            },
            &proof,
            "other T",
        );
    }
    let other_input = g.hash_to_element(b"tamper!").unwrap();
    reject(
        &Statement {
            x: other_input,
            ..st.clone()
        },
        &proof,
        "other input",
    );
    reject(
        &Statement {
            group: other_toy(),
            ..st.clone()
        },
        &proof,
        "other modulus",
    );
    reject(
        &Statement {
            level: SecurityLevel::K256,
            ..st.clone()
        },
        &proof,
        "other level",
    );
    // The low-order attack: -y and -pi satisfy the equation in Z_N*, but are not canonical.
    let minus_y = Integer::from(&n - &st.y);
    let minus_pi = Integer::from(&n - &proof.pi);
    reject(
        &Statement {
            y: minus_y.clone(),
            ..st.clone()
        },
        &proof,
        "-y",
    );
    reject(
        &Statement {
            y: minus_y,
            ..st.clone()
        },
        &WesolowskiProof {
            pi: minus_pi.clone(),
            ..proof.clone()
        },
        "-y, -pi",
    );
    reject(
        &st,
        &WesolowskiProof {
            pi: minus_pi,
            ..proof.clone()
        },
        "-pi",
    );
    reject(
        &st,
        &WesolowskiProof {
            pi: Integer::ZERO,
            ..proof.clone()
        },
        "pi = 0",
    );
    reject(
        &Statement {
            y: Integer::ZERO,
            ..st.clone()
        },
        &proof,
        "y = 0",
    );
    // Another prime of the right size is not the challenge, even with a matching pi.
    let other_l = Integer::from(&proof.l + 2u32).next_prime();
    let q = (Integer::from(1) << st.iterations as u32) / &other_l;
    let forged_pi = g.canonical(&Integer::from(st.x.pow_mod_ref(&q, &n).unwrap()));
    reject(
        &st,
        &WesolowskiProof {
            pi: forged_pi,
            l: other_l,
        },
        "chosen prime",
    );
}

#[test]
fn pietrzak_rejects_every_change() {
    let (g, _) = toy();
    let x = g.hash_to_element(b"tamper").unwrap();
    let ev = evaluate_in_memory(&g, &x, 5001).unwrap();
    let vdf = Pietrzak::default();
    let (st, proof) = pietrzak(&ev, SecurityLevel::K128);
    vdf.verify(&st, &proof).unwrap();
    assert!(proof.mu.len() >= 6);
    let n = g.modulus().clone();
    let reject = |st: &Statement, p: &PietrzakProof, what: &str| {
        assert!(vdf.verify(st, p).is_err(), "accepted: {what}");
    };
    for i in 0..proof.mu.len() {
        for bit in [0u32, 300] {
            let mut p = proof.clone();
            p.mu[i] = flip(&p.mu[i], bit);
            reject(&st, &p, "flipped mu");
        }
        let mut p = proof.clone();
        p.mu[i] = Integer::from(&n - &p.mu[i]);
        reject(&st, &p, "-mu");
    }
    let mut p = proof.clone();
    p.mu.swap(0, 1);
    reject(&st, &p, "swapped mu");
    let mut p = proof.clone();
    p.mu.pop();
    reject(&st, &p, "missing mu");
    let mut p = proof.clone();
    p.mu.push(st.x.clone());
    reject(&st, &p, "extra mu");
    for bit in [0u32, 77, 509] {
        reject(
            &Statement {
                y: flip(&st.y, bit),
                ..st.clone()
            },
            &proof,
            "flipped y",
        );
    }
    reject(
        &Statement {
            y: Integer::from(&n - &st.y),
            ..st.clone()
        },
        &proof,
        "-y",
    );
    for t in [st.iterations - 1, st.iterations + 1] {
        reject(
            &Statement {
                iterations: t,
                ..st.clone()
            },
            &proof,
            "other T",
        );
    }
    reject(
        &Statement {
            group: other_toy(),
            ..st.clone()
        },
        &proof,
        "other modulus",
    );
    reject(
        &Statement {
            x: g.hash_to_element(b"other").unwrap(),
            ..st.clone()
        },
        &proof,
        "other input",
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, rng_seed: proptest::test_runner::RngSeed::Fixed(0x5eed), ..ProptestConfig::default() })]

    /// Random inputs and lengths: the honest proof verifies and a one-bit change of the
    /// output does not.
    #[test]
    fn random_statements(input in proptest::collection::vec(any::<u8>(), 0..40), t in 1u64..3000, bit in 0u32..500) {
        let (g, _) = toy();
        let x = g.hash_to_element(&input).unwrap();
        let ev = evaluate_in_memory(&g, &x, t).unwrap();
        let (st, w) = wesolowski(&ev, SecurityLevel::K128);
        prop_assert!(Wesolowski::default().verify(&st, &w).is_ok());
        let (_, p) = pietrzak(&ev, SecurityLevel::K128);
        prop_assert!(Pietrzak::default().verify(&st, &p).is_ok());
        let bad = Statement { y: flip(&st.y, bit), ..st.clone() };
        prop_assert!(Wesolowski::default().verify(&bad, &w).is_err());
        prop_assert!(Pietrzak::default().verify(&bad, &p).is_err());
    }
}
