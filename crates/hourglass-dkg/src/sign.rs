//! Signing with the shares: every member raises the encoded message to its share, and the
//! product is a standard RSA signature (PKCS#1 v1.5 or PSS, RFC 8017) that any verifier
//! accepts with the public key. With threshold shares ([`sign_threshold`]), any `t + 1`
//! members sign instead (docs/FORMATS.md section 16.7).
//!
//! Rounds: (1) every member broadcasts what it was asked to sign (the digest, the padding,
//! the hash, the key) and a fresh salt; all must agree, and the salt of the lowest member is
//! used for PSS; (2) every member broadcasts `m^(d_j) mod N`, computed with constant-time
//! exponentiation. Each member multiplies the partial signatures and checks the result with
//! the public exponent before releasing it, so a fault or a deviating member never yields a
//! wrong signature.

use std::time::Duration;

use hourglass_arith::entropy::EntropySource;
use hourglass_rsa::hazmat;
use hourglass_rsa::padding::{i2osp, os2ip};
use hourglass_rsa::HashAlg;
use rug::Integer;
use sha2::{Digest, Sha256};

use crate::bounds::FrameBounds;
use crate::keyshare::KeyShare;
use crate::protocol::partial_power;
use crate::session::{Halt, Session};
use crate::threshold::{Claim, PartialSignature, Proof, ThresholdShare, CHALLENGE_BITS};
use crate::transport::{PartyId, Transport};
use crate::wire::{step, Reader, Writer};
use crate::{
    ConfigError, Error, Failure, MessageProblem, ParamError, Result, SignatureError,
    ThresholdError, WireError,
};

pub(crate) mod error;

/// The signature scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// RSASSA-PKCS1-v1_5.
    Pkcs1v15,
    /// RSASSA-PSS with MGF1 of the same hash and a salt as long as the hash.
    Pss,
}

impl Scheme {
    fn code(self) -> u8 {
        match self {
            Scheme::Pkcs1v15 => 1,
            Scheme::Pss => 2,
        }
    }
}

fn halt(e: Halt) -> Error {
    e.into_error(Failure::WhileSigning)
}

fn halt_threshold(e: Halt) -> Error {
    e.into_error(Failure::WhileSigningWithThreshold)
}

/// Checks a signer's request digest and salt against this party's, keeping the salt of the
/// lowest signer in `chosen`.
fn agree_on_request(
    from: PartyId,
    theirs: &[u8],
    their_salt: Vec<u8>,
    request: &[u8; 32],
    hash: HashAlg,
    chosen: &mut (PartyId, Vec<u8>),
) -> Result<()> {
    let refuse = |reason| {
        Err(Error::BadMessage {
            sender: from,
            reason,
        })
    };
    if theirs != request {
        return refuse(MessageProblem::SignsOther);
    }
    if their_salt.len() != hash.output_len() {
        return refuse(MessageProblem::SaltLength);
    }
    if from < chosen.0 {
        *chosen = (from, their_salt);
    }
    Ok(())
}

/// The encoded message representative for `digest` under `scheme` for the key `public`.
pub fn encode(
    public: &hourglass_rsa::PublicKey,
    scheme: Scheme,
    hash: HashAlg,
    digest: &[u8],
    salt: &[u8],
) -> Result<Integer> {
    let k = public.size();
    let em = match scheme {
        Scheme::Pkcs1v15 => hazmat::pkcs1v15_encode(hash, digest, k)?,
        Scheme::Pss => hazmat::pss_encode(hash, digest, salt, public.bits() - 1)?,
    };
    Ok(os2ip(&em))
}

/// Checks a digest's length against its hash.
fn check_digest(hash: HashAlg, digest: &[u8]) -> Result<()> {
    if digest.len() != hash.output_len() {
        return Err(ParamError::DigestLength {
            hash,
            want: hash.output_len(),
            got: digest.len(),
        }
        .into());
    }
    Ok(())
}

/// Produces the signature of `digest` (a `hash` digest of the message) together with the
/// other members, who must run this with the same digest at the same time.
pub fn sign_jointly(
    transport: &mut dyn Transport,
    share: &KeyShare,
    scheme: Scheme,
    hash: HashAlg,
    digest: &[u8],
    timeout: Duration,
    entropy: &mut dyn EntropySource,
) -> Result<Vec<u8>> {
    check_digest(hash, digest)?;
    if transport.me() != share.party {
        return Err(ConfigError::OtherPartysShare {
            share: share.party,
            me: transport.me(),
        }
        .into());
    }
    let n = share.public.n().clone();
    let bounds = FrameBounds::signing(share.public.bits(), share.members.len(), hash);
    let mut session = Session::new(transport, share.members.clone(), timeout, bounds);
    // Round 1: agree on the request; the lowest member's salt is used.
    let mut request = Sha256::new();
    request.update(b"hourglass dkg signing request v1\0");
    request.update(share.session);
    request.update(n.to_digits::<u8>(rug::integer::Order::Msf));
    request.update([scheme.code()]);
    request.update(hash.name().as_bytes());
    request.update([0]);
    request.update(digest);
    let request: [u8; 32] = request.finalize().into();
    let mut salt = vec![0u8; hash.output_len()];
    entropy.fill(&mut salt)?;
    let mut w = Writer::new();
    w.bytes(&request).bytes(&salt);
    let replies = session
        .broadcast(1, step::SIGN_REQUEST, w.finish())
        .map_err(halt)?;
    let mut chosen = (share.party, salt);
    for (&from, payload) in &replies {
        let mut r = Reader::new(payload);
        let bad = |reason: crate::WireError| Error::BadMessage {
            sender: from,
            reason: reason.into(),
        };
        let theirs = r.bytes().map_err(bad)?;
        let their_salt = r.bytes().map_err(bad)?.to_vec();
        r.end().map_err(bad)?;
        agree_on_request(from, theirs, their_salt, &request, hash, &mut chosen)?;
    }
    let m = encode(&share.public, scheme, hash, digest, &chosen.1)?;
    // Round 2: partial signatures.
    let partial = partial_power(&m, share.d_share(), &n)?;
    let mut w = Writer::new();
    w.int(&partial);
    let replies = session
        .broadcast(1, step::SIGN_PARTIAL, w.finish())
        .map_err(halt)?;
    let mut s = partial;
    for (&from, payload) in &replies {
        let mut r = Reader::new(payload);
        let bad = |reason: crate::WireError| Error::BadMessage {
            sender: from,
            reason: reason.into(),
        };
        let v = r.int_below(&n).map_err(bad)?;
        r.end().map_err(bad)?;
        s = (s * v) % &n;
    }
    let check = share.public.public_op(&s).map_err(SignatureError::Check)?;
    if check != m {
        return Err(SignatureError::WrongPartial.into());
    }
    Ok(i2osp(&s, share.public.size())?)
}

/// A threshold signature, and the signers whose partials were wrong and left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThresholdSigned {
    /// The signature (as long as the modulus), checked with the public key.
    pub signature: Vec<u8>,
    /// The `t + 1` signers whose partials made it.
    pub used: Vec<PartyId>,
    /// Every signer whose partial signature was wrong (its proof did not verify).
    pub excluded: Vec<PartyId>,
}

/// Produces the signature of `digest` with threshold shares, together with the other
/// `signers` (at least `t + 1` members, each named once; every signer runs this with the same
/// list and digest at the same time).
///
/// Rounds: (1) every signer sends the request digest (the cluster, scheme, hash, digest and
/// signer list), a fresh salt, and its cluster identity, threshold, epoch and public
/// fingerprint, each compared on its own (a signer of another epoch is named as having missed
/// a refresh; the threshold is the one fixed at reshare, at every signer); the lowest signer's
/// salt is used for PSS. (2) every signer sends its partial signature
/// ([`ThresholdShare::partial`]) and checks every partial cheaply
/// ([`crate::threshold::ThresholdPublic::try_combine`]: the first `t + 1` combined, and each
/// other one with the first `t`, under `e`). (3) every signer says whether every combination
/// held; if so at all, the first `t + 1` make the signature. (4) otherwise every signer sends the proof of correctness of its partial
/// ([`ThresholdShare::prove`]) and every signer verifies every proof
/// ([`crate::threshold::ThresholdPublic::combine`]): every wrong partial is named and left out
/// while `t + 1` valid ones remain. No signature is returned unchecked.
#[allow(clippy::too_many_arguments)]
pub fn sign_threshold(
    transport: &mut dyn Transport,
    share: &ThresholdShare,
    signers: &[PartyId],
    scheme: Scheme,
    hash: HashAlg,
    digest: &[u8],
    timeout: Duration,
    entropy: &mut dyn EntropySource,
) -> Result<ThresholdSigned> {
    check_digest(hash, digest)?;
    let public = &share.public;
    if transport.me() != share.party {
        return Err(ConfigError::OtherPartysShare {
            share: share.party,
            me: transport.me(),
        }
        .into());
    }
    public.check_signers(signers)?;
    let mut signers = signers.to_vec();
    signers.sort_unstable();
    if !signers.contains(&share.party) {
        return Err(ThresholdError::NotASigner {
            party: share.party,
            signers,
        }
        .into());
    }
    let sizes = public.sizes()?;
    let n = public.public.n().clone();
    let bounds = FrameBounds::threshold_signing(&sizes, signers.len(), hash);
    let mut session = Session::new(transport, signers.clone(), timeout, bounds);
    let claim = public.claim();
    let cluster_id = claim.cluster_id;
    let mut request = Sha256::new();
    request.update(b"hourglass dkg threshold signing request v1\0");
    request.update(cluster_id);
    request.update([scheme.code()]);
    request.update(hash.name().as_bytes());
    request.update([0]);
    request.update(digest);
    for s in &signers {
        request.update(s.to_be_bytes());
    }
    let request: [u8; 32] = request.finalize().into();
    let mut salt = vec![0u8; hash.output_len()];
    entropy.fill(&mut salt)?;
    let mut w = Writer::new();
    w.bytes(&request).bytes(&salt);
    claim.write(&mut w);
    let replies = session
        .broadcast(1, step::THRESHOLD_REQUEST, w.finish())
        .map_err(|h| session.explain(halt_threshold(h)))?;
    let mut chosen = (share.party, salt);
    for (&from, payload) in &replies {
        let bad = |reason: WireError| Error::BadMessage {
            sender: from,
            reason: reason.into(),
        };
        let mut r = Reader::new(payload);
        let theirs = r.bytes().map_err(bad)?;
        let their_salt = r.bytes().map_err(bad)?.to_vec();
        let their_claim = Claim::read(&mut r).map_err(bad)?;
        r.end().map_err(bad)?;
        claim.check(from, &their_claim)?;
        agree_on_request(from, theirs, their_salt, &request, hash, &mut chosen)?;
    }
    let x = encode(&public.public, scheme, hash, digest, &chosen.1)?;
    // Round 2: the partials, combined optimistically.
    let mine = share.partial(&x)?;
    let mut w = Writer::new();
    w.int(&mine.value);
    let replies = session
        .broadcast(1, step::THRESHOLD_PARTIAL, w.finish())
        .map_err(|h| session.explain(halt_threshold(h)))?;
    let mut partials = vec![mine];
    for (&from, payload) in &replies {
        let mut r = Reader::new(payload);
        let bad = |reason: WireError| Error::BadMessage {
            sender: from,
            reason: reason.into(),
        };
        let value = r.int_below(&n).map_err(bad)?;
        r.end().map_err(bad)?;
        partials.push(PartialSignature {
            party: from,
            value,
            proof: None,
        });
    }
    let optimistic = public.try_combine(&x, &partials)?;
    // Round 3: did everyone's combination verify? If so, no proof is needed.
    let replies = session
        .broadcast(
            1,
            step::THRESHOLD_STATUS,
            vec![u8::from(optimistic.is_none())],
        )
        .map_err(|h| session.explain(halt_threshold(h)))?;
    let mut failed_somewhere = optimistic.is_none();
    for (&from, payload) in &replies {
        match payload.as_slice() {
            [0] => {}
            [1] => failed_somewhere = true,
            _ => {
                return Err(Error::BadMessage {
                    sender: from,
                    reason: WireError::Truncated.into(),
                })
            }
        }
    }
    let combined = match optimistic {
        Some(combined) if !failed_somewhere => combined,
        _ => {
            // Round 4: every signer proves its partial, and the wrong ones are named.
            let proof = share.prove(&x, &partials[0].value, entropy)?;
            let mut w = Writer::new();
            w.int(&proof.challenge).int(&proof.response);
            partials[0].proof = Some(proof);
            let replies = session
                .broadcast(1, step::THRESHOLD_PROOF, w.finish())
                .map_err(|h| session.explain(halt_threshold(h)))?;
            let challenge_bound = Integer::from(1) << CHALLENGE_BITS;
            let response_bound = Integer::from(1) << sizes.response_bits();
            for (&from, payload) in &replies {
                let mut r = Reader::new(payload);
                let bad = |reason: WireError| Error::BadMessage {
                    sender: from,
                    reason: reason.into(),
                };
                let challenge = r.int_below(&challenge_bound).map_err(bad)?;
                let response = r.int_below(&response_bound).map_err(bad)?;
                r.end().map_err(bad)?;
                if let Some(p) = partials.iter_mut().find(|p| p.party == from) {
                    p.proof = Some(Proof {
                        challenge,
                        response,
                    });
                }
            }
            public.combine(&x, &partials)?
        }
    };
    Ok(ThresholdSigned {
        signature: i2osp(&combined.signature, public.public.size())?,
        used: combined.used,
        excluded: combined.excluded,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::{memory_mesh, NetSim};
    use hourglass_arith::entropy::SeededEntropy;
    use hourglass_arith::secret::SecretInt;
    use hourglass_rsa::padding::{Pkcs1v15Sign, Pss};
    use hourglass_rsa::PublicKey;

    /// Shares of a textbook key: d split additively at random.
    fn dealt_shares() -> Vec<KeyShare> {
        let p = Integer::from_str_radix(
            "e0dfd2c2a288acebc705efab30e4447541a8c5a47a37185c5a9cb98389ce4de19199aa3069b404fd98c801568cb9170eb712bf10b4955ce9c9dc8ce6855c6123",
            16,
        )
        .unwrap()
        .next_prime();
        let q = Integer::from_str_radix(
            "ebe0fcf21866fd9a9f0d72f5c9c1d0f93c7e1ed3fbb4dd0f4b0a2d37bd8b5a8e9a8d1a5a3ef6e1f5a3ecb2c6c1b1d65c4b6d1b3a2b1fa2d4c35f1f2a7a8d4c7",
            16,
        )
        .unwrap()
        .next_prime();
        let n = Integer::from(&p * &q);
        let e = Integer::from(65537);
        let phi = Integer::from(&p - 1u32) * Integer::from(&q - 1u32);
        let d = e.clone().invert(&phi).unwrap();
        let public = PublicKey::new(n.clone(), e).unwrap();
        let d1 = Integer::from(&d + 12345u32);
        let d2 = Integer::from(-7000);
        let d3 = Integer::from(&d - &d1) - &d2;
        [d1, d2, d3]
            .into_iter()
            .enumerate()
            .map(|(i, dj)| {
                KeyShare::new(
                    "t".into(),
                    [1; 16],
                    i as u32 + 1,
                    vec![1, 2, 3],
                    public.clone(),
                    SecretInt::new(dj),
                )
            })
            .collect()
    }

    fn sign_all(
        shares: Vec<KeyShare>,
        scheme: Scheme,
        digests: [Vec<u8>; 3],
    ) -> Vec<Result<Vec<u8>>> {
        let mesh = memory_mesh(&[1, 2, 3], NetSim::default());
        let handles: Vec<_> = mesh
            .into_iter()
            .zip(shares)
            .zip(digests)
            .map(|((mut t, share), digest)| {
                std::thread::spawn(move || {
                    let mut rng = SeededEntropy::new(&[share.party as u8]);
                    sign_jointly(
                        &mut t,
                        &share,
                        scheme,
                        HashAlg::Sha256,
                        &digest,
                        Duration::from_secs(5),
                        &mut rng,
                    )
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    }

    #[test]
    fn joint_signatures_verify_as_standard_rsa() {
        let msg = b"hello committee";
        let digest = HashAlg::Sha256.digest(msg);
        for scheme in [Scheme::Pkcs1v15, Scheme::Pss] {
            let shares = dealt_shares();
            let public = shares[0].public.clone();
            let sigs = sign_all(
                shares,
                scheme,
                [digest.clone(), digest.clone(), digest.clone()],
            );
            let sig = sigs[0].as_ref().unwrap();
            for s in &sigs {
                assert_eq!(
                    s.as_ref().unwrap(),
                    sig,
                    "every member outputs the same signature"
                );
            }
            match scheme {
                Scheme::Pkcs1v15 => Pkcs1v15Sign::new(HashAlg::Sha256)
                    .verify(&public, msg, sig)
                    .unwrap(),
                Scheme::Pss => Pss::new(HashAlg::Sha256).verify(&public, msg, sig).unwrap(),
            }
        }
    }

    #[test]
    fn members_asked_to_sign_different_things_refuse() {
        let a = HashAlg::Sha256.digest(b"a");
        let b = HashAlg::Sha256.digest(b"b");
        let results = sign_all(dealt_shares(), Scheme::Pkcs1v15, [a.clone(), a, b]);
        assert!(results.iter().all(|r| r.is_err()));
        let err = results[0].as_ref().unwrap_err().to_string();
        assert!(
            err.contains("party 3") && err.contains("something else"),
            "{err}"
        );
    }

    #[test]
    fn a_wrong_share_never_yields_a_signature() {
        let mut shares = dealt_shares();
        let bad = shares.pop().unwrap();
        let wrong = KeyShare::new(
            "t".into(),
            [1; 16],
            3,
            vec![1, 2, 3],
            bad.public.clone(),
            SecretInt::new(Integer::from(bad.d_share() + 1u32)),
        );
        shares.push(wrong);
        let digest = HashAlg::Sha256.digest(b"m");
        let results = sign_all(
            shares,
            Scheme::Pss,
            [digest.clone(), digest.clone(), digest],
        );
        for r in results {
            assert!(r
                .unwrap_err()
                .to_string()
                .contains("partial signature is wrong"));
        }
    }
}
