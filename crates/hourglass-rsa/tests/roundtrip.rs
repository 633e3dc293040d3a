//! Property tests: every variant, at small insecure sizes from seeded entropy, round-trips
//! textbook RSA, OAEP and both signature paddings, and rejects tampering.

use hourglass_arith::entropy::{random_below, SeededEntropy};
use hourglass_rsa::padding::{Oaep, Pkcs1v15Sign, Pss};
use hourglass_rsa::{HashAlg, KeyGenOptions, Variant};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm};

fn variant() -> impl Strategy<Value = Variant> {
    prop::sample::select(Variant::ALL.to_vec())
}

proptest! {
    #![proptest_config(Config { cases: 24, rng_algorithm: RngAlgorithm::ChaCha, failure_persistence: None, ..Config::default() })]

    #[test]
    fn every_variant_round_trips(variant in variant(), bits in prop::sample::select(vec![512u32, 640, 768, 1024]), seed in any::<u64>(), msg in prop::collection::vec(any::<u8>(), 0..40), flip in any::<u16>()) {
        let mut rng = SeededEntropy::new(&seed.to_le_bytes());
        let key = KeyGenOptions::new(bits, variant).allow_insecure(true).generate(&mut rng).unwrap();
        let public = key.public_key();
        prop_assert_eq!(public.bits(), bits);

        // Textbook RSA on a random m < n.
        let m = random_below(&mut rng, public.n()).unwrap();
        let c = public.public_op(&m).unwrap();
        prop_assert_eq!(key.private_op(&c, &mut rng).unwrap(), m);

        // OAEP (SHA-1 fits every size here; SHA-256 from 640 bits).
        let hash = if bits >= 640 { HashAlg::Sha256 } else { HashAlg::Sha1 };
        let oaep = Oaep::new(hash);
        let short = &msg[..msg.len().min(oaep.max_message_len(public.size()))];
        let mut ct = oaep.encrypt(&public, short, &mut rng).unwrap();
        prop_assert_eq!(oaep.decrypt(&key, &ct, &mut rng).unwrap(), short.to_vec());
        let bit = usize::from(flip) % (ct.len() * 8);
        ct[bit / 8] ^= 1 << (bit % 8);
        prop_assert!(oaep.decrypt(&key, &ct, &mut rng).is_err());

        // Signatures.
        let pss = Pss::new(hash);
        let mut sig = pss.sign(&key, &msg, &mut rng).unwrap();
        prop_assert!(pss.verify(&public, &msg, &sig).is_ok());
        let len = sig.len();
        sig[bit / 8 % len] ^= 1 << (bit % 8);
        prop_assert!(pss.verify(&public, &msg, &sig).is_err());
        let v15 = Pkcs1v15Sign::new(hash);
        let sig = v15.sign(&key, &msg, &mut rng).unwrap();
        prop_assert!(v15.verify(&public, &msg, &sig).is_ok());
        let mut other = msg.clone();
        other.push(1);
        prop_assert!(v15.verify(&public, &other, &sig).is_err());
    }
}
