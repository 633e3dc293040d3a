//! From n-of-n to `t`-of-`k` without a dealer ([`reshare`]), and proactive refreshes of a
//! threshold sharing to a new epoch ([`refresh`]), over the cluster's authenticated links.
//!
//! Every member takes part (a reshare needs every additive share, and a refresh gives every
//! member its new share). The rounds, after a hello that fixes the session and exchanges
//! pairwise stream seeds (docs/FORMATS.md section 16.7):
//!
//! 1. **Agreement** ([`step::RESHARE_AGREE`]): every member sends its cluster identity, the
//!    threshold, its share's epoch and kind, and its public fingerprint; each is compared on its
//!    own, so the error says which differs (another cluster, another threshold: `t` is fixed at
//!    reshare and nobody changes it on another's word, another epoch: that party missed a
//!    refresh).
//! 2. **Sharing** ([`step::RESHARE_DEAL`]): every member deals the value it holds by
//!    [`crate::threshold::deal`] and sends each member its sub-share with the commitments; each
//!    receiver checks its sub-share against them and names a dealer whose does not match. A
//!    reshare deals the additive shares `d_i` (they sum to `d`). A refresh first turns the
//!    threshold shares into small additive shares of `d`: `u_j = lambda_j s_j` with the
//!    integer Lagrange coefficients of all `k` positions (`lambda_j = (-1)^(j+1) C(k, j)`,
//!    `sum u_j = Delta d`), masked with pairwise masks drawn from the hello's seeds
//!    (`u_j - sum sent + sum received`, the same sum); each member publishes its masked value's
//!    quotient `q_j = floor(u_j / M)` and residue `r_j = u_j mod Delta` (`M = Delta 2^L`) and
//!    deals `l_j = ((u_j mod M) - r_j) / Delta < 2^L`; then
//!    `d = sum l_j + c` with the public `c = 2^L sum q_j + (sum r_j) / Delta`, added to every
//!    share as `Delta c`. The masks are uniform and far longer than `u_j`, so the published
//!    quotients and residues are within `2^-128` of independent of `d` (the quotients reveal
//!    `sum l_j`, uniform over a range `2^128` times longer than `d`); the dealt values are as
//!    short as a generation's, so the sizes never grow from epoch to epoch.
//! 3. **Confirmation** ([`step::RESHARE_CONFIRM`]): every member checks that the commitments
//!    to the sharing's constant make the key (`C_0^e = v^Delta`: the dealt values sum to `d`),
//!    derives every member's verification key, and sends the fingerprint of the new epoch's
//!    public data; all must agree before anything is written.
//!
//! The model is honest-but-curious (as the generation's): any `t` colluders learn nothing of
//! `d`, and a dealer that sends a sub-share its commitments do not promise is named. Since
//! `k >= 2t + 1`, a crash while the members write their files leaves `t + 1` of them with the
//! same epoch, old or new, so the key survives.

use std::collections::BTreeMap;
use std::time::Duration;

use hourglass_arith::entropy::EntropySource;
use hourglass_arith::secret::{mod_ct, SecretInt};
use rug::Integer;
use sha2::{Digest, Sha256};

use crate::bounds::FrameBounds;
use crate::keyshare::KeyShare;
use crate::rng::Drbg;
use crate::session::{Halt, Session};
use crate::threshold::{
    check_sub_share, committed_value, deal, verification_base, Claim, Sizes, ThresholdPublic,
    ThresholdShare,
};
use crate::transport::{PartyId, Transport};
use crate::wire::{step, Reader, Writer};
use crate::{ConfigError, Error, Failure, MessageProblem, Result, ThresholdError, WireError};

/// Turns this party's n-of-n share into its `threshold`-of-`k` share (epoch 1), with every
/// other member doing the same at the same time with the same threshold.
pub fn reshare(
    transport: &mut dyn Transport,
    share: &KeyShare,
    threshold: usize,
    timeout: Duration,
    entropy: &mut dyn EntropySource,
) -> Result<ThresholdShare> {
    let start = Start {
        cluster: &share.cluster,
        session: share.session,
        party: share.party,
        members: &share.members,
        public: &share.public,
        threshold,
        epoch: 0,
        fingerprint: [0; 32],
        held: Held::Additive(share),
    };
    run(transport, &start, timeout, entropy)
}

/// Refreshes this party's threshold share to the next epoch (same `N`, `e`, `t`, members),
/// with every other member doing the same at the same time. Afterwards shares of the two
/// epochs never combine.
pub fn refresh(
    transport: &mut dyn Transport,
    share: &ThresholdShare,
    timeout: Duration,
    entropy: &mut dyn EntropySource,
) -> Result<ThresholdShare> {
    let p = &share.public;
    let start = Start {
        cluster: &p.cluster,
        session: p.session,
        party: share.party,
        members: &p.members,
        public: &p.public,
        threshold: p.threshold,
        epoch: p.epoch,
        fingerprint: p.fingerprint(),
        held: Held::Threshold(share),
    };
    run(transport, &start, timeout, entropy)
}

/// What a member holds before the run.
enum Held<'a> {
    Additive(&'a KeyShare),
    Threshold(&'a ThresholdShare),
}

struct Start<'a> {
    cluster: &'a str,
    session: [u8; 16],
    party: PartyId,
    members: &'a [PartyId],
    public: &'a hourglass_rsa::PublicKey,
    threshold: usize,
    epoch: u32,
    fingerprint: [u8; 32],
    held: Held<'a>,
}

impl Start<'_> {
    fn refreshing(&self) -> bool {
        matches!(self.held, Held::Threshold(_))
    }

    fn claim(&self) -> Claim {
        Claim {
            cluster_id: crate::threshold::cluster_id(self.cluster, &self.session, self.public),
            session: self.session,
            modulus: crate::threshold::modulus_hash(self.public),
            threshold: self.threshold,
            epoch: self.epoch,
            threshold_share: self.refreshing(),
            fingerprint: self.fingerprint,
        }
    }
}

fn halt(e: Halt) -> Error {
    e.into_error(Failure::WhileResharing)
}

fn bad(sender: PartyId, reason: impl Into<MessageProblem>) -> Error {
    Error::BadMessage {
        sender,
        reason: reason.into(),
    }
}

/// Writes a signed integer: a sign byte (0 or 1) and the magnitude.
fn write_signed(w: &mut Writer, v: &Integer) {
    w.bytes(&[u8::from(*v < 0)]);
    w.int(&Integer::from(v.abs_ref()));
}

fn read_signed(r: &mut Reader<'_>, bound: &Integer) -> std::result::Result<Integer, WireError> {
    let sign = r.bytes()?;
    let negative = match sign {
        [0] => false,
        [1] => true,
        _ => return Err(WireError::Truncated),
    };
    let v = r.int_below(bound)?;
    Ok(if negative { -v } else { v })
}

fn run(
    transport: &mut dyn Transport,
    start: &Start<'_>,
    timeout: Duration,
    entropy: &mut dyn EntropySource,
) -> Result<ThresholdShare> {
    if transport.me() != start.party {
        return Err(ConfigError::OtherPartysShare {
            share: start.party,
            me: transport.me(),
        }
        .into());
    }
    let sizes = Sizes::new(start.public.bits(), start.members.len(), start.threshold)?;
    let bounds = FrameBounds::resharing(&sizes, start.refreshing());
    let mut session = Session::new(transport, start.members.to_vec(), timeout, bounds);
    let outcome = run_session(&mut session, start, &sizes, entropy).map_err(|e| session.explain(e));
    if let Err(e) = &outcome {
        let culprits: Vec<PartyId> = match e {
            Error::Reported { .. } | Error::PartyFailed { .. } => return outcome,
            Error::BadMessage { sender, .. } => vec![*sender],
            Error::Threshold(
                ThresholdError::BadSubShare { dealer: party }
                | ThresholdError::OtherCluster { party, .. }
                | ThresholdError::OtherThreshold { party, .. }
                | ThresholdError::OtherEpoch { party, .. }
                | ThresholdError::OtherVerification { party, .. }
                | ThresholdError::OtherKind { party, .. }
                | ThresholdError::Disagree { party },
            ) => vec![*party],
            _ => Vec::new(),
        };
        session.announce_fatal(&culprits, &e.to_string());
    }
    outcome
}

fn run_session(
    session: &mut Session<'_>,
    start: &Start<'_>,
    sizes: &Sizes,
    entropy: &mut dyn EntropySource,
) -> Result<ThresholdShare> {
    let n = start.public.n().clone();
    let k = start.members.len();
    let me = session.position();
    let mut rng = Drbg::new(entropy)?;
    // Hello: the session, and a pairwise seed for every other member (a refresh's masks).
    let mut digest = Sha256::new();
    digest.update(b"hourglass dkg reshare v1\0");
    digest.update([u8::from(start.refreshing())]);
    let digest: [u8; 32] = digest.finalize().into();
    let mut nonce = [0u8; 16];
    rng.fill_bytes(&mut nonce);
    let mut seeds = BTreeMap::new();
    for &m in start.members.iter().filter(|&&m| m != start.party) {
        let mut seed = [0u8; 32];
        rng.fill_bytes(&mut seed);
        seeds.insert(m, seed);
    }
    let received = session
        .hello(start.cluster, &digest, &nonce, &seeds)
        .map_err(halt)?;
    // Round 1: agree on everything public, field by field.
    let claim = start.claim();
    let cluster_id = claim.cluster_id;
    let mut w = Writer::new();
    claim.write(&mut w);
    let replies = session
        .broadcast(1, step::RESHARE_AGREE, w.finish())
        .map_err(halt)?;
    for (&from, payload) in &replies {
        let mut r = Reader::new(payload);
        let theirs = Claim::read(&mut r).map_err(|e| bad(from, e))?;
        r.end().map_err(|e| bad(from, e))?;
        claim.check(from, &theirs)?;
    }
    // What this member deals, and in a refresh its public quotient and residue.
    let (dealt, residues) = match start.held {
        Held::Additive(share) => (SecretInt::new(share.d_share().clone()), None),
        Held::Threshold(share) => {
            let (dealt, q, r) = mask_and_split(share, sizes, me, &seeds, &received)?;
            (dealt, Some((q, r)))
        }
    };
    let epoch = start.epoch + 1;
    let base = verification_base(&cluster_id, epoch, &session.id(), &n);
    let dealing = deal(sizes, dealt.expose(), &base, &n, &mut rng)?;
    drop(dealt);
    // Round 2: the sharing.
    let offset = sizes.sub_share_offset();
    let outgoing = start
        .members
        .iter()
        .enumerate()
        .filter(|&(_, &m)| m != start.party)
        .map(|(i, &m)| {
            let mut w = Writer::new();
            if let Some((q, r)) = &residues {
                write_signed(&mut w, q);
                w.int(r);
            }
            for c in &dealing.commitments {
                w.int(c);
            }
            let sent = SecretInt::new(Integer::from(dealing.sub_shares[i].expose() + &offset));
            w.int(sent.expose());
            (m, w.finish())
        })
        .collect();
    let replies = session
        .exchange(1, step::RESHARE_DEAL, outgoing)
        .map_err(halt)?;
    let mut share = dealing.sub_shares[me - 1].clone();
    let mut commitments = dealing.commitments.clone();
    let (mut q_sum, mut r_sum) = residues.clone().unwrap_or_default();
    let quotient_bound = Integer::from(1) << sizes.quotient_bits();
    let sub_share_bound = Integer::from(1) << sizes.sub_share_bits();
    for (&from, payload) in &replies {
        let mut r = Reader::new(payload);
        let malformed = |e: WireError| bad(from, e);
        if start.refreshing() {
            q_sum += read_signed(&mut r, &quotient_bound).map_err(malformed)?;
            r_sum += r.int_below(&sizes.delta).map_err(malformed)?;
        }
        let theirs = r.ints_below(sizes.threshold + 1, &n).map_err(malformed)?;
        let value = SecretInt::new(r.int_below(&sub_share_bound).map_err(malformed)? - &offset);
        r.end().map_err(malformed)?;
        if !check_sub_share(sizes, &base, &n, &theirs, me, value.expose())? {
            return Err(ThresholdError::BadSubShare { dealer: from }.into());
        }
        *share.expose_mut() += value.expose();
        for (c, t) in commitments.iter_mut().zip(&theirs) {
            *c *= t;
            *c %= &n;
        }
    }
    if start.refreshing() {
        // d = sum l_j + 2^L sum q_j + (sum r_j) / Delta: the public part, times Delta, goes
        // into every share and into the constant's commitment.
        let (fix, rest) = r_sum.div_rem(sizes.delta.clone());
        if rest != 0 {
            return Err(ThresholdError::ResidueSum.into());
        }
        let public_part = (q_sum << sizes.low_bits) + fix;
        let scaled = Integer::from(&public_part * &sizes.delta);
        *share.expose_mut() += &scaled;
        let shift = Integer::from(
            base.pow_mod_ref(&scaled, &n)
                .ok_or(crate::SignatureError::NotInvertible)?,
        );
        commitments[0] = Integer::from(&commitments[0] * &shift) % &n;
    }
    // The constant is v^(Delta d): raised to e it is v^Delta.
    let key_check = commitments[0]
        .pow_mod_ref(start.public.e(), &n)
        .map(Integer::from)
        .unwrap_or_default();
    let want = base
        .pow_mod_ref(&sizes.delta, &n)
        .map(Integer::from)
        .unwrap_or_default();
    if key_check != want {
        return Err(ThresholdError::DealtSumWrong.into());
    }
    if *share.expose() <= 0 || share.expose().significant_bits() > sizes.share_bits {
        return Err(ThresholdError::ShareOutOfRange.into());
    }
    let keys = (1..=k)
        .map(|position| committed_value(&commitments, position, &n))
        .collect::<Result<Vec<_>>>()?;
    let public = ThresholdPublic {
        cluster: start.cluster.to_string(),
        session: start.session,
        members: start.members.to_vec(),
        threshold: start.threshold,
        epoch,
        epoch_session: session.id(),
        public: start.public.clone(),
        base,
        keys,
    };
    // Round 3: everyone ends with the same public data.
    let fingerprint = public.fingerprint();
    let mut w = Writer::new();
    w.bytes(&fingerprint);
    let replies = session
        .broadcast(1, step::RESHARE_CONFIRM, w.finish())
        .map_err(halt)?;
    for (&from, payload) in &replies {
        let mut r = Reader::new(payload);
        let theirs = r.bytes().map_err(|e| bad(from, e))?;
        r.end().map_err(|e| bad(from, e))?;
        if theirs != fingerprint {
            return Err(ThresholdError::Disagree { party: from }.into());
        }
    }
    Ok(ThresholdShare::new(public, start.party, share))
}

/// A refresh's first step at this member (position `me`): its Lagrange-weighted share, masked
/// with the pairwise masks, split into the public quotient and residue and the small value it
/// deals.
fn mask_and_split(
    share: &ThresholdShare,
    sizes: &Sizes,
    me: usize,
    sent: &BTreeMap<PartyId, [u8; 32]>,
    received: &BTreeMap<PartyId, [u8; 32]>,
) -> Result<(SecretInt, Integer, Integer)> {
    let k = sizes.parties as u32;
    let binomial = Integer::from(Integer::binomial_u(k, me as u32));
    let lambda = if me % 2 == 1 { binomial } else { -binomial };
    let mut masked = SecretInt::new(Integer::from(share.share() * &lambda));
    let mask_bound = Integer::from(1) << sizes.mask_bits();
    for (&peer, seed) in sent {
        *masked.expose_mut() -= Drbg::from_key(seed).below(&mask_bound);
        let Some(theirs) = received.get(&peer) else {
            return Err(bad(peer, MessageProblem::NoPairwiseSeed));
        };
        *masked.expose_mut() += Drbg::from_key(theirs).below(&mask_bound);
    }
    let m = sizes.residue_modulus();
    let low = SecretInt::new(mod_ct(masked.expose(), &m)?);
    let residue = mod_ct(low.expose(), &sizes.delta)?;
    let quotient = Integer::from(masked.expose() - low.expose()).div_exact(&m);
    let dealt = SecretInt::new(Integer::from(low.expose() - &residue).div_exact(&sizes.delta));
    // Kept for the others' checks: the dealt value is short and non-negative.
    debug_assert!(dealt.expose().significant_bits() <= sizes.low_bits);
    Ok((dealt, quotient, residue))
}
