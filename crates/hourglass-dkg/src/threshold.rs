//! Threshold RSA from the distributed key: the arithmetic of a `t`-of-`k` sharing of `d` over
//! the integers, its public verification data, partial signatures with proofs of correctness,
//! and their combination (docs/FORMATS.md section 16.7 specifies every value).
//!
//! **Construction.** Shoup's threshold RSA ("Practical threshold signatures", EUROCRYPT 2000)
//! with the changes Damgard and Koprowski ("Practical threshold RSA signatures without a trusted
//! dealer", EUROCRYPT 2001) make for a modulus that is not a product of safe primes, such as a
//! Boneh-Franklin one, and Rabin's dealer-free sharing of additive shares over the integers
//! ("A simplified approach to threshold and proactive RSA", CRYPTO 1998):
//!
//! - each of the `k` parties deals its additive share `u_i` by Shamir's scheme over the integers,
//!   `f_i(x) = Delta u_i + a_1 x + ... + a_t x^t` with `Delta = k!` and `a_l` uniform in
//!   `[0, 2^coefficient_bits)`; party `j` (at position `j` of the members) holds
//!   `s_j = sum_i f_i(j)`, a point of `f = sum_i f_i`, whose value at 0 is `Delta d`;
//! - for any `t + 1` positions `S`, `lambda_j = Delta prod_{l in S, l != j} l / (l - j)` is an
//!   integer (Shoup's lemma), and `sum_{j in S} lambda_j s_j = Delta^2 d`;
//! - a partial signature of `x` is `sigma_j = x^(2 Delta s_j)`; `w = prod sigma_j^(2 lambda_j)
//!   = x^(4 Delta^3 d)`, so `w^e = x^(4 Delta^3)`, and with `a 4 Delta^3 + b e = 1` (Bezout:
//!   `e` is a prime above `k`), `y = w^a x^b` is the signature: `y^e = x`;
//! - verification data: a public square `v` of `Z_N*` (hashed from the session), Feldman-style
//!   commitments `v^(a_l)` to every dealt coefficient (each receiver checks its sub-share
//!   against them), and the verification keys `v_j = v^(s_j)` everyone derives from them;
//! - every partial is checked, cheaply first: the first `t + 1` combined and each other one
//!   combined with the first `t`, under `e` ([`ThresholdPublic::try_combine`]); when one
//!   fails, each signer sends Shoup's proof that `log_v v_j = log_(x^(4 Delta))
//!   sigma_j^2` (Fiat-Shamir with SHA-256, 128-bit challenges), so every wrong partial present
//!   is named ([`ThresholdShare::prove`], [`ThresholdPublic::combine`]).
//!
//! **Hiding.** For `t` colluders `T` and one honest dealer, the map `f -> f + h` with
//! `h(x) = (u' - u) Delta prod_{j in T} (j - x) / prod_{j in T} j` (integer coefficients: the
//! product of `t` distinct numbers of `1..k` divides `k!`) matches the shares on `T` of a
//! sharing of `u` with those of `u'`, and shifts coefficient `l` by at most
//! `|u' - u| Delta C(t, l)`. So the statistical distance between the colluders' views for any
//! two secrets below `2^dealt_bits` is at most `2^(dealt_bits + 1 + t) Delta / 2^coefficient_bits`
//! per dealer; [`Sizes::coefficient_bits`] makes it `2^-128 / k`, so `2^-128` over all dealers.
//! The commitments and verification keys hide only computationally (as in Shoup's scheme, they
//! are simulated from `v^d`, an RSA signature on a random square).
//!
//! **Soundness of the proofs.** Shoup's proof needs the squares of `Z_N*` to have no elements of
//! small order, which safe primes give. For a Boneh-Franklin modulus, as Damgard and Koprowski
//! assume, a party that makes a wrong partial pass its proof must know an element of small order
//! other than `±1` (squaring removes those of order 2); for small primes dividing only one of
//! `p - 1`, `q - 1` such an element factors `N`, for small primes dividing both it is an
//! assumption beyond factoring. It only matters for naming: the combined signature is always
//! checked with `e` before it is released, so no wrong partial ever yields a wrong signature.

use hourglass_arith::entropy::EntropySource;
use hourglass_arith::modular::{pow_mod_ct_bits, CtPair};
use hourglass_arith::secret::SecretInt;
use hourglass_rsa::PublicKey;
use rug::integer::Order;
use rug::ops::Pow;
use rug::Integer;
use sha2::{Digest, Sha256};

use crate::rng::Drbg;
use crate::transport::PartyId;
use crate::{ClusterDifference, ParamError, Result, SignatureError, ThresholdError};

pub(crate) mod error;

/// The statistical security of the sharing and of the proofs' masks, in bits.
pub const STATISTICAL_BITS: u32 = 128;

/// The length of a proof's challenge, in bits.
pub const CHALLENGE_BITS: u32 = 128;

/// `ceil(log2(x))` for `x >= 1`.
fn ceil_log2(x: &Integer) -> u32 {
    let b = x.significant_bits();
    if x.is_power_of_two() {
        b - 1
    } else {
        b
    }
}

/// `k!`.
pub fn factorial(k: usize) -> Integer {
    Integer::from(Integer::factorial(k as u32))
}

/// The lengths of every value of a `t`-of-`k` sharing of a `bits`-bit key (docs/FORMATS.md
/// section 16.7), all derived from the parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sizes {
    /// The modulus length.
    pub bits: u32,
    /// The parties `k`.
    pub parties: usize,
    /// The threshold `t`: any `t + 1` sign, `t` learn nothing.
    pub threshold: usize,
    /// `Delta = k!`.
    pub delta: Integer,
    /// A bound on every dealt secret: `|u| < 2^dealt_bits` (the additive shares of a
    /// generation, at most `bits + 64` bits, and the refreshed ones, below `(k + 1) 2^low_bits`).
    pub dealt_bits: u32,
    /// The dealt coefficients are uniform below `2^coefficient_bits`:
    /// `dealt_bits + 1 + t + ceil(log2 Delta) + ceil(log2 k) + 128`.
    pub coefficient_bits: u32,
    /// Every threshold share is positive and below `2^share_bits`.
    pub share_bits: u32,
    /// The refreshed additive shares are below `2^low_bits`: `bits + 128 + ceil(log2 k) + 1`.
    pub low_bits: u32,
}

impl Sizes {
    /// The sizes of a `threshold`-of-`parties` sharing of a `bits`-bit key: `1 <= t` and
    /// `2t + 1 <= k` (the generation's rule: an honest majority), `3 <= k <= 256`.
    pub fn new(bits: u32, parties: usize, threshold: usize) -> Result<Self> {
        if !(3..=256).contains(&parties) || threshold == 0 || 2 * threshold + 1 > parties {
            return Err(ParamError::Threshold {
                threshold,
                parties,
                max: parties.saturating_sub(1) / 2,
            }
            .into());
        }
        let delta = factorial(parties);
        let k = Integer::from(parties);
        let log_k = ceil_log2(&k);
        let log_k1 = ceil_log2(&Integer::from(parties + 1));
        let low_bits = bits + STATISTICAL_BITS + log_k + 1;
        let dealt_bits = bits + STATISTICAL_BITS + 2 * log_k1 + 2;
        let coefficient_bits =
            dealt_bits + 1 + threshold as u32 + ceil_log2(&delta) + log_k + STATISTICAL_BITS;
        // s_j = Delta d + sum_i sum_{l=1..t} a_il j^l with d < 2^bits and j <= k.
        let powers: Integer = (1..=threshold as u32).map(|l| k.clone().pow(l)).sum();
        let largest = Integer::from(&delta << bits)
            + Integer::from(&k * &powers) * ((Integer::from(1) << coefficient_bits) - 1u32);
        Ok(Sizes {
            bits,
            parties,
            threshold,
            share_bits: largest.significant_bits(),
            delta,
            dealt_bits,
            coefficient_bits,
            low_bits,
        })
    }

    /// What is added to a sub-share on the wire so that it is non-negative: `Delta 2^dealt_bits`.
    pub fn sub_share_offset(&self) -> Integer {
        Integer::from(&self.delta << self.dealt_bits)
    }

    /// A bound on a sub-share as sent (with the offset): `f_i(j) + Delta 2^dealt_bits` is below
    /// `2^sub_share_bits`.
    pub fn sub_share_bits(&self) -> u32 {
        let k = Integer::from(self.parties);
        let powers: Integer = (1..=self.threshold as u32).map(|l| k.clone().pow(l)).sum();
        let largest = (self.sub_share_offset() << 1u32)
            + powers * ((Integer::from(1) << self.coefficient_bits) - 1u32);
        largest.significant_bits()
    }

    /// A bound on the exponent of a partial signature, `2 Delta s_j`.
    pub fn partial_exponent_bits(&self) -> u32 {
        self.share_bits + Integer::from(&self.delta << 1u32).significant_bits()
    }

    /// The length of a proof's secret mask `r`: `share_bits + 2 * 128`, so that the response
    /// `r + c s_j` hides `c s_j` to within `2^-128`.
    pub fn nonce_bits(&self) -> u32 {
        self.share_bits + CHALLENGE_BITS + STATISTICAL_BITS
    }

    /// A bound on a proof's response `z = r + c s_j`.
    pub fn response_bits(&self) -> u32 {
        self.nonce_bits() + 1
    }

    /// A bound on the refresh's public quotients: `|floor(u / M)| < 2^quotient_bits` for the
    /// masked `u = lambda_j s_j - (masks sent) + (masks received)`.
    pub fn quotient_bits(&self) -> u32 {
        let binomial = Integer::from(Integer::binomial_u(
            self.parties as u32,
            self.parties as u32 / 2,
        ));
        let largest = binomial * (Integer::from(1) << self.share_bits)
            + Integer::from(self.parties - 1) * (Integer::from(1) << self.mask_bits());
        (largest / self.residue_modulus() + 1u32).significant_bits()
    }

    /// The modulus of the refresh's public residues: `M = Delta 2^low_bits`.
    pub fn residue_modulus(&self) -> Integer {
        Integer::from(&self.delta << self.low_bits)
    }

    /// The masks of a refresh are uniform below `2^mask_bits`: at least
    /// `2^(128 + ceil(log2 k) + 1)` times `M` ([`Sizes::residue_modulus`]) times any
    /// `|lambda_j s_j|` (`|lambda_j| <= C(k, k/2)`), so a masked value is within `2^-128` of
    /// uniform modulo `M` and hides the unmasked one.
    pub fn mask_bits(&self) -> u32 {
        let binomial = Integer::from(Integer::binomial_u(
            self.parties as u32,
            self.parties as u32 / 2,
        ));
        let largest = binomial.significant_bits() + self.share_bits;
        largest
            + STATISTICAL_BITS
            + ceil_log2(&Integer::from(self.parties))
            + 1
            + self.residue_modulus().significant_bits()
    }
}

/// `Delta prod_{l in positions, l != j} l / (l - j)`: the integer Lagrange coefficient of
/// position `j` for the value at 0 (Shoup's lemma: `Delta` times a Lagrange coefficient over
/// points of `0..=k` is an integer).
pub fn lagrange(delta: &Integer, positions: &[usize], j: usize) -> Result<Integer> {
    let mut num = delta.clone();
    let mut den = Integer::from(1);
    for &l in positions.iter().filter(|&&l| l != j) {
        num *= l as u64;
        den *= l as i64 - j as i64;
    }
    let (q, r) = num.div_rem(den);
    if r != 0 {
        return Err(ParamError::Lagrange.into());
    }
    Ok(q)
}

/// `base^exp mod n` for a secret exponent of any sign whose length is below the public
/// `bound` bits, in constant time ([`pow_mod_ct_bits`]; a negative exponent raises the
/// inverse).
pub fn pow_secret(base: &Integer, exp: &Integer, n: &Integer, bound: u32) -> Result<Integer> {
    let base = if *exp < 0 {
        base.clone()
            .invert(n)
            .map_err(|_| SignatureError::NotInvertible)?
    } else {
        base.clone()
    };
    let magnitude = SecretInt::new(exp.clone().abs());
    if *magnitude.expose() == 0 {
        return Ok(Integer::from(1));
    }
    Ok(pow_mod_ct_bits(&base, magnitude.expose(), n, bound)?)
}

/// `base^exp mod n` for a public exponent of any sign (variable time).
fn pow_public(base: &Integer, exp: &Integer, n: &Integer) -> Result<Integer> {
    base.pow_mod_ref(exp, n)
        .map(Integer::from)
        .ok_or_else(|| SignatureError::NotInvertible.into())
}

/// `prod bases[i]^exps[i] mod n` for public exponents of any sign, by one simultaneous
/// square-and-multiply over the longest exponent (variable time; the combination's
/// `prod sigma_j^(2 lambda_j)`).
pub fn multi_pow(bases: &[Integer], exps: &[Integer], n: &Integer) -> Result<Integer> {
    let mut positive = Vec::with_capacity(bases.len());
    for (b, e) in bases.iter().zip(exps) {
        let b = if *e < 0 {
            b.clone()
                .invert(n)
                .map_err(|_| SignatureError::NotInvertible)?
        } else {
            b.clone()
        };
        positive.push((b, e.clone().abs()));
    }
    let top = positive
        .iter()
        .map(|(_, e)| e.significant_bits())
        .max()
        .unwrap_or(0);
    let mut acc = Integer::from(1);
    for bit in (0..top).rev() {
        acc.square_mut();
        acc %= n;
        for (b, e) in &positive {
            if e.get_bit(bit) {
                acc *= b;
                acc %= n;
            }
        }
    }
    Ok(acc)
}

/// A sharing dealt by one party: its sub-share for every position, and its commitments
/// `v^(Delta u), v^(a_1), ..., v^(a_t)`.
pub struct Dealing {
    /// `f(j)` for positions `1..=k` (element `j - 1`), secret.
    pub sub_shares: Vec<SecretInt>,
    /// `v^(f's coefficient l)` for `l = 0..=t`.
    pub commitments: Vec<Integer>,
}

impl std::fmt::Debug for Dealing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dealing")
            .field("commitments", &self.commitments.len())
            .finish_non_exhaustive()
    }
}

/// Deals `secret` (`|secret| < 2^dealt_bits`) to the `k` positions: `f(x) = Delta secret + a_1 x
/// + ... + a_t x^t`, `a_l` uniform below `2^coefficient_bits`, committed under the base `v`.
pub fn deal(
    sizes: &Sizes,
    secret: &Integer,
    v: &Integer,
    n: &Integer,
    rng: &mut Drbg,
) -> Result<Dealing> {
    if secret.significant_bits() >= sizes.dealt_bits {
        return Err(ThresholdError::DealtTooLarge.into());
    }
    let bound = Integer::from(1) << sizes.coefficient_bits;
    let mut coefficients = vec![SecretInt::new(Integer::from(secret * &sizes.delta))];
    coefficients.extend((0..sizes.threshold).map(|_| SecretInt::new(rng.below(&bound))));
    let constant_bits = sizes.dealt_bits + sizes.delta.significant_bits();
    let mut commitments = Vec::with_capacity(coefficients.len());
    for (l, c) in coefficients.iter().enumerate() {
        let bound = if l == 0 {
            constant_bits
        } else {
            sizes.coefficient_bits
        };
        commitments.push(pow_secret(v, c.expose(), n, bound)?);
    }
    let sub_shares = (1..=sizes.parties as u32)
        .map(|x| {
            let mut acc = coefficients[sizes.threshold].clone();
            for c in coefficients[..sizes.threshold].iter().rev() {
                *acc.expose_mut() *= x;
                *acc.expose_mut() += c.expose();
            }
            acc
        })
        .collect();
    Ok(Dealing {
        sub_shares,
        commitments,
    })
}

/// `prod_l commitments[l]^(position^l) mod n`: what `v^(f(position))` must be.
pub fn committed_value(commitments: &[Integer], position: usize, n: &Integer) -> Result<Integer> {
    let exps: Vec<Integer> = (0..commitments.len() as u32)
        .map(|l| Integer::from(position).pow(l))
        .collect();
    multi_pow(commitments, &exps, n)
}

/// Whether the sub-share `value` (at `position`) is the one the commitments promise:
/// `v^value == prod_l C_l^(position^l)` (the exponentiation by the secret sub-share in
/// constant time).
pub fn check_sub_share(
    sizes: &Sizes,
    v: &Integer,
    n: &Integer,
    commitments: &[Integer],
    position: usize,
    value: &Integer,
) -> Result<bool> {
    let mine = pow_secret(v, value, n, sizes.sub_share_bits())?;
    Ok(mine == committed_value(commitments, position, n)?)
}

/// The public base `v` of an epoch's verification data: the square of a unit of `Z_N*`
/// drawn from a stream keyed with SHA-256 of `"hourglass dkg threshold base v1\0"`, the
/// cluster identity, the epoch and its session (docs/FORMATS.md section 16.7).
pub fn verification_base(
    cluster_id: &[u8; 32],
    epoch: u32,
    session: &[u8; 16],
    n: &Integer,
) -> Integer {
    let mut h = Sha256::new();
    h.update(b"hourglass dkg threshold base v1\0");
    h.update(cluster_id);
    h.update(epoch.to_be_bytes());
    h.update(session);
    let mut drbg = Drbg::from_key(&h.finalize().into());
    loop {
        let g = drbg.below(n);
        if g > 1 && Integer::from(g.gcd_ref(n)) == 1 {
            return g.square() % n;
        }
    }
}

/// The public half of a threshold sharing: what a combiner (any party, or an outside process
/// with no secret) needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThresholdPublic {
    /// The cluster name.
    pub cluster: String,
    /// The session that generated the key.
    pub session: [u8; 16],
    /// Every party holding a share, sorted (positions are 1-based ranks in this list).
    pub members: Vec<PartyId>,
    /// The threshold `t`, fixed at reshare.
    pub threshold: usize,
    /// The epoch: 1 after the reshare, one more at every refresh.
    pub epoch: u32,
    /// The session of the reshare or refresh that made this epoch.
    pub epoch_session: [u8; 16],
    /// The public key.
    pub public: PublicKey,
    /// The verification base `v`.
    pub base: Integer,
    /// `v_j = v^(s_j)`, in member order.
    pub keys: Vec<Integer>,
}

/// What every party of a reshare, refresh or threshold signature must hold the same:
/// compared field by field ([`Claim::check`]) so that a refusal says which differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Claim {
    /// The cluster's identity ([`cluster_id`]).
    pub cluster_id: [u8; 32],
    /// The generation session.
    pub session: [u8; 16],
    /// SHA-256 of the modulus ([`modulus_hash`]).
    pub modulus: [u8; 32],
    /// The threshold (the one asked for, in a reshare).
    pub threshold: usize,
    /// The share's epoch (0 for an n-of-n share).
    pub epoch: u32,
    /// Whether the share is a threshold one.
    pub threshold_share: bool,
    /// The fingerprint of the epoch's public data ([`ThresholdPublic::fingerprint`]; zeros
    /// for an n-of-n share).
    pub fingerprint: [u8; 32],
}

impl Claim {
    /// Appends the claim to a payload: seven byte strings (32, 16, 32, 8, 4, 1 and 32 bytes).
    pub fn write(&self, w: &mut crate::wire::Writer) {
        w.bytes(&self.cluster_id)
            .bytes(&self.session)
            .bytes(&self.modulus)
            .bytes(&(self.threshold as u64).to_be_bytes())
            .bytes(&self.epoch.to_be_bytes())
            .bytes(&[u8::from(self.threshold_share)])
            .bytes(&self.fingerprint);
    }

    /// Reads a claim written by [`Claim::write`].
    pub fn read(r: &mut crate::wire::Reader<'_>) -> std::result::Result<Self, crate::WireError> {
        let short = crate::WireError::Truncated;
        let cluster_id = <[u8; 32]>::try_from(r.bytes()?).map_err(|_| short.clone())?;
        let session = <[u8; 16]>::try_from(r.bytes()?).map_err(|_| short.clone())?;
        let modulus = <[u8; 32]>::try_from(r.bytes()?).map_err(|_| short.clone())?;
        let threshold = <[u8; 8]>::try_from(r.bytes()?).map_err(|_| short.clone())?;
        let epoch = <[u8; 4]>::try_from(r.bytes()?).map_err(|_| short.clone())?;
        let kind = r.bytes()?;
        let fingerprint = <[u8; 32]>::try_from(r.bytes()?).map_err(|_| short)?;
        Ok(Claim {
            cluster_id,
            session,
            modulus,
            threshold: usize::try_from(u64::from_be_bytes(threshold)).unwrap_or(usize::MAX),
            epoch: u32::from_be_bytes(epoch),
            threshold_share: kind == [1],
            fingerprint,
        })
    }

    /// Checks `party`'s claim `theirs` against this party's, in order: the cluster (saying
    /// which of the session, the modulus or the rest differs), the kind
    /// of share, the threshold (fixed at reshare: nobody changes it on another's word), the
    /// epoch (naming who missed a refresh), the public data.
    pub fn check(&self, party: PartyId, theirs: &Claim) -> Result<()> {
        let differs = if theirs.session != self.session {
            Some(ClusterDifference::Session)
        } else if theirs.modulus != self.modulus {
            Some(ClusterDifference::Modulus)
        } else if theirs.cluster_id != self.cluster_id {
            Some(ClusterDifference::NameOrExponent)
        } else {
            None
        };
        if let Some(differs) = differs {
            return Err(ThresholdError::OtherCluster { party, differs }.into());
        }
        if theirs.threshold_share != self.threshold_share {
            return Err(ThresholdError::OtherKind {
                party,
                threshold: theirs.threshold_share,
            }
            .into());
        }
        if theirs.threshold != self.threshold {
            return Err(ThresholdError::OtherThreshold {
                party,
                theirs: theirs.threshold,
                ours: self.threshold,
            }
            .into());
        }
        if theirs.epoch != self.epoch {
            return Err(ThresholdError::OtherEpoch {
                party,
                theirs: theirs.epoch,
                ours: self.epoch,
            }
            .into());
        }
        if theirs.fingerprint != self.fingerprint {
            return Err(ThresholdError::OtherVerification {
                party,
                epoch: theirs.epoch,
            }
            .into());
        }
        Ok(())
    }
}

/// SHA-256 of a public key's modulus (minimal big-endian).
pub fn modulus_hash(public: &PublicKey) -> [u8; 32] {
    Sha256::digest(public.n().to_digits::<u8>(Order::Msf)).into()
}

/// The identity of a cluster: SHA-256 of `"hourglass dkg cluster v1\0"`, the name's length
/// (u64) and bytes, the generation session, `N` (minimal big-endian) and `e` (u64).
pub fn cluster_id(name: &str, session: &[u8; 16], public: &PublicKey) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(b"hourglass dkg cluster v1\0");
    h.update((name.len() as u64).to_be_bytes());
    h.update(name.as_bytes());
    h.update(session);
    h.update(public.n().to_digits::<u8>(Order::Msf));
    h.update(public.e().to_u64().unwrap_or(0).to_be_bytes());
    h.finalize().into()
}

impl ThresholdPublic {
    /// The sizes of this sharing.
    pub fn sizes(&self) -> Result<Sizes> {
        Sizes::new(self.public.bits(), self.members.len(), self.threshold)
    }

    /// The cluster's identity ([`cluster_id`]).
    pub fn cluster_id(&self) -> [u8; 32] {
        cluster_id(&self.cluster, &self.session, &self.public)
    }

    /// What this share's holder claims ([`Claim`]).
    pub fn claim(&self) -> Claim {
        Claim {
            cluster_id: self.cluster_id(),
            session: self.session,
            modulus: modulus_hash(&self.public),
            threshold: self.threshold,
            epoch: self.epoch,
            threshold_share: true,
            fingerprint: self.fingerprint(),
        }
    }

    /// The 1-based position of `party` among the members.
    pub fn position(&self, party: PartyId) -> Option<usize> {
        self.members.iter().position(|&m| m == party).map(|i| i + 1)
    }

    /// SHA-256 of everything public about this epoch (docs/FORMATS.md section 16.7): two
    /// shares sign together only when theirs are equal.
    pub fn fingerprint(&self) -> [u8; 32] {
        let mut h = Sha256::new();
        h.update(b"hourglass dkg threshold public v1\0");
        h.update(self.cluster_id());
        h.update((self.threshold as u64).to_be_bytes());
        for m in &self.members {
            h.update(m.to_be_bytes());
        }
        h.update(self.epoch.to_be_bytes());
        h.update(self.epoch_session);
        for v in std::iter::once(&self.base).chain(&self.keys) {
            let bytes = v.to_digits::<u8>(Order::Msf);
            h.update((bytes.len() as u32).to_be_bytes());
            h.update(bytes);
        }
        h.finalize().into()
    }

    /// Checks that `signers` can sign: at least `t + 1`, each a member, none twice.
    pub fn check_signers(&self, signers: &[PartyId]) -> Result<()> {
        let mut seen = Vec::with_capacity(signers.len());
        for &s in signers {
            if !self.members.contains(&s) {
                return Err(ThresholdError::UnknownSigner {
                    party: s,
                    members: self.members.clone(),
                }
                .into());
            }
            if seen.contains(&s) {
                return Err(ThresholdError::DuplicateSigner { party: s }.into());
            }
            seen.push(s);
        }
        if signers.len() < self.threshold + 1 {
            return Err(ThresholdError::TooFewSigners {
                threshold: self.threshold,
                needed: self.threshold + 1,
                got: signers.len(),
            }
            .into());
        }
        Ok(())
    }

    /// `x^(4 Delta)`, the base of the partial signatures' proofs.
    fn proof_base(&self, sizes: &Sizes, x: &Integer) -> Integer {
        let exp = Integer::from(&sizes.delta << 2u32);
        x.pow_mod_ref(&exp, self.public.n())
            .map(Integer::from)
            .unwrap_or_default()
    }

    /// The proof's challenge: SHA-256 of `"hourglass dkg partial proof v1\0"`, this epoch's
    /// fingerprint, the party, `x`, `sigma`, and the two commitments, cut to 128 bits.
    fn challenge(
        &self,
        party: PartyId,
        x: &Integer,
        sigma: &Integer,
        v_commit: &Integer,
        x_commit: &Integer,
    ) -> Integer {
        let mut h = Sha256::new();
        h.update(b"hourglass dkg partial proof v1\0");
        h.update(self.fingerprint());
        h.update(party.to_be_bytes());
        for v in [x, sigma, v_commit, x_commit] {
            let bytes = v.to_digits::<u8>(Order::Msf);
            h.update((bytes.len() as u32).to_be_bytes());
            h.update(bytes);
        }
        let digest = h.finalize();
        Integer::from_digits(&digest[..(CHALLENGE_BITS / 8) as usize], Order::Msf)
    }

    /// Whether `partial`'s proof of correctness verifies for `x` (public, variable time); a
    /// partial without its proof does not.
    pub fn verify_partial(&self, x: &Integer, partial: &PartialSignature) -> bool {
        let Some(proof) = &partial.proof else {
            return false;
        };
        let n = self.public.n();
        let (Ok(sizes), Some(position)) = (self.sizes(), self.position(partial.party)) else {
            return false;
        };
        let key = &self.keys[position - 1];
        let x_tilde = self.proof_base(&sizes, x);
        let sigma_sq = Integer::from(partial.value.square_ref()) % n;
        let minus_c = Integer::from(-&proof.challenge);
        // Two exponentiations each (GMP's windowed ones; the long one by the response).
        let both = |b1: &Integer, b2: &Integer| -> Result<Integer> {
            Ok(pow_public(b1, &proof.response, n)? * pow_public(b2, &minus_c, n)? % n)
        };
        let (Ok(v_commit), Ok(x_commit)) = (both(&self.base, key), both(&x_tilde, &sigma_sq))
        else {
            return false;
        };
        self.challenge(partial.party, x, &partial.value, &v_commit, &x_commit) == proof.challenge
    }

    /// `w = prod sigma_j^(2 lambda_j)` over the given partials, with their integer Lagrange
    /// coefficients; `None` when a partial is not invertible.
    fn interpolate(
        &self,
        sizes: &Sizes,
        partials: &[&PartialSignature],
    ) -> Result<Option<Integer>> {
        let positions: Vec<usize> = partials
            .iter()
            .map(|p| self.position(p.party).unwrap_or(0))
            .collect();
        let mut exps = Vec::with_capacity(partials.len());
        for &j in &positions {
            exps.push(lagrange(&sizes.delta, &positions, j)? << 1u32);
        }
        let bases: Vec<Integer> = partials.iter().map(|p| p.value.clone()).collect();
        Ok(multi_pow(&bases, &exps, self.public.n()).ok())
    }

    /// Whether `t + 1` partials combine under `e`: `w^e == x^(4 Delta^3)` for their `w`
    /// (`target` is `x^(4 Delta^3)`). Raising to `e` is a permutation of `Z_N*`, so this holds
    /// exactly when their product of errors `prod (sigma'_j / sigma_j)^(2 lambda_j)` is 1.
    fn combines(
        &self,
        sizes: &Sizes,
        target: &Integer,
        partials: &[&PartialSignature],
    ) -> Result<bool> {
        let Some(w) = self.interpolate(sizes, partials)? else {
            return Ok(false);
        };
        Ok(pow_public(&w, self.public.e(), self.public.n())? == *target)
    }

    /// Combines partial signatures of `x` from the given parties with their integer Lagrange
    /// coefficients, then Bezout with `e`: the signature `y` with `y^e = x`, or `None` when
    /// they do not combine.
    fn combine_exactly(
        &self,
        sizes: &Sizes,
        x: &Integer,
        partials: &[&PartialSignature],
    ) -> Result<Option<Integer>> {
        let n = self.public.n();
        let Some(w) = self.interpolate(sizes, partials)? else {
            return Ok(None);
        };
        let e_prime = sizes.delta.clone().pow(3) << 2u32;
        let e = self.public.e();
        let (g, a, b) = e_prime.extended_gcd(e.clone(), Integer::new());
        if g != 1 {
            return Err(ParamError::Lagrange.into());
        }
        let y = pow_public(&w, &a, n)? * pow_public(x, &b, n)? % n;
        let check = self.public.public_op(&y).map_err(SignatureError::Check)?;
        Ok((check == *x).then_some(y))
    }

    /// The cheap check of every partial, without proofs: with the `m` partials sorted by
    /// party, the first `t + 1` are combined, and for every other partial `j`, the first `t`
    /// with `j`; each of these `m - t` combinations is checked under `e` (`combines`).
    /// Returns the signature (from the first `t + 1`) when every combination holds; otherwise
    /// `None`, and the proofs decide ([`Self::combine`]). Proofs are not looked at.
    ///
    /// What it shows: the `m - t` combinations are independent constraints on the partials'
    /// errors `delta_j = sigma'_j / sigma_j`, and all of them hold exactly when the errors are
    /// `g^(h(j))` for one polynomial `h` of degree at most `t` with `h(0) = 0` (up to elements
    /// of small order, as for the proofs), zero at every honest signer. A single wrong partial,
    /// or any that do not conspire, always fails a combination, wherever it is in the order.
    /// With at least `t` honest signers (so whenever `m >= 2t`, as at most `t` parties lie:
    /// `t + 1` colluders hold the key outright), `h` has `t + 1` roots and is zero: no partial
    /// is wrong. With fewer signers, two or more colluding liars can shape their errors to
    /// cancel in every combination; they then go unnamed, but change nothing: the signature is
    /// the one `y` with `y^e = x`.
    pub fn try_combine(
        &self,
        x: &Integer,
        partials: &[PartialSignature],
    ) -> Result<Option<Combined>> {
        let sizes = self.sizes()?;
        let mut sorted: Vec<&PartialSignature> = partials.iter().collect();
        sorted.sort_by_key(|p| p.party);
        let signers: Vec<PartyId> = sorted.iter().map(|p| p.party).collect();
        self.check_signers(&signers)?;
        let need = self.threshold + 1;
        let Some(y) = self.combine_exactly(&sizes, x, &sorted[..need])? else {
            return Ok(None);
        };
        let target = pow_public(x, &(sizes.delta.clone().pow(3) << 2u32), self.public.n())?;
        let mut set: Vec<&PartialSignature> = sorted[..self.threshold].to_vec();
        for other in &sorted[need..] {
            set.push(other);
            if !self.combines(&sizes, &target, &set)? {
                return Ok(None);
            }
            set.pop();
        }
        Ok(Some(Combined {
            signature: y,
            used: signers[..need].to_vec(),
            excluded: Vec::new(),
        }))
    }

    /// Combines the partial signatures of `x` (the encoded message) from at least `t + 1`
    /// distinct signers: the standard RSA signature `y` (`y^e = x`, checked before it is
    /// returned), and **every** partial that was wrong, named and left out.
    ///
    /// The cheap check first ([`Self::try_combine`]: combinations under `e`, for every partial
    /// at once); when a combination fails, the proof of every partial is
    /// verified, the parties whose proofs fail (or are missing) are excluded and `t + 1` of the
    /// others combined. Fewer than `t + 1` valid partials is an error naming the wrong ones
    /// ([`ThresholdError::WrongPartials`]); valid proofs that still do not combine, an error
    /// naming the parties among which one is wrong ([`ThresholdError::DoNotCombine`]).
    pub fn combine(&self, x: &Integer, partials: &[PartialSignature]) -> Result<Combined> {
        if let Some(combined) = self.try_combine(x, partials)? {
            return Ok(combined);
        }
        let sizes = self.sizes()?;
        let need = self.threshold + 1;
        let mut sorted: Vec<&PartialSignature> = partials.iter().collect();
        sorted.sort_by_key(|p| p.party);
        let (valid, wrong): (Vec<&PartialSignature>, Vec<&PartialSignature>) =
            sorted.iter().partition(|p| self.verify_partial(x, p));
        let wrong: Vec<PartyId> = wrong.iter().map(|p| p.party).collect();
        if valid.len() < need {
            return Err(ThresholdError::WrongPartials {
                wrong,
                valid: valid.len(),
                needed: need,
            }
            .into());
        }
        match self.combine_exactly(&sizes, x, &valid[..need])? {
            Some(y) => Ok(Combined {
                signature: y,
                used: valid[..need].iter().map(|p| p.party).collect(),
                excluded: wrong,
            }),
            None => Err(ThresholdError::DoNotCombine {
                parties: valid.iter().map(|p| p.party).collect(),
            }
            .into()),
        }
    }
}

/// One signer's partial signature `x^(2 Delta s_j)`, with its proof of correctness once the
/// signer sent it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartialSignature {
    /// The signer.
    pub party: PartyId,
    /// `sigma_j = x^(2 Delta s_j) mod N`.
    pub value: Integer,
    /// The proof that `log_v v_j = log_(x^(4 Delta)) sigma_j^2`.
    pub proof: Option<Proof>,
}

/// A proof of correctness of a partial signature (Shoup's, made non-interactive).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proof {
    /// The challenge `c` (128 bits).
    pub challenge: Integer,
    /// The response `z = r + c s_j`.
    pub response: Integer,
}

/// A combined signature.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Combined {
    /// `y` with `y^e = x mod N`.
    pub signature: Integer,
    /// The `t + 1` parties whose partials made it.
    pub used: Vec<PartyId>,
    /// Every party whose partial was wrong (its proof did not verify), left out.
    pub excluded: Vec<PartyId>,
}

/// A party's share of a `t`-of-`k` sharing: the public data and its secret `s_j`.
pub struct ThresholdShare {
    /// The public data, the same at every member.
    pub public: ThresholdPublic,
    /// This party.
    pub party: PartyId,
    share: SecretInt,
}

impl std::fmt::Debug for ThresholdShare {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ThresholdShare")
            .field("cluster", &self.public.cluster)
            .field("party", &self.party)
            .field("threshold", &self.public.threshold)
            .field("epoch", &self.public.epoch)
            .finish_non_exhaustive()
    }
}

impl ThresholdShare {
    /// A share (from a reshare or a refresh, or a file).
    pub fn new(public: ThresholdPublic, party: PartyId, share: SecretInt) -> Self {
        ThresholdShare {
            public,
            party,
            share,
        }
    }

    /// The secret share `s_j`.
    pub fn share(&self) -> &Integer {
        self.share.expose()
    }

    /// This party's 1-based position among the members.
    pub fn position(&self) -> usize {
        self.public.position(self.party).unwrap_or(0)
    }

    /// This party's partial signature of `x`: `x^(2 Delta s_j)`, in constant time, without its
    /// proof (sent only when a combination fails: [`Self::prove`]).
    pub fn partial(&self, x: &Integer) -> Result<PartialSignature> {
        let sizes = self.public.sizes()?;
        let n = self.public.public.n();
        if Integer::from(x.gcd_ref(n)) != 1 {
            return Err(SignatureError::NotInvertible.into());
        }
        let exponent = SecretInt::new(Integer::from(self.share() * &sizes.delta) << 1u32);
        let value = pow_secret(x, exponent.expose(), n, sizes.partial_exponent_bits())?;
        Ok(PartialSignature {
            party: self.party,
            value,
            proof: None,
        })
    }

    /// The proof of correctness of this party's partial `sigma` of `x`: for a secret `r` below
    /// `2^nonce_bits`, `c = H(.., v^r, (x^(4 Delta))^r)` and `z = r + c s_j` (the two
    /// exponentiations by `r` in constant time, interleaved).
    pub fn prove(
        &self,
        x: &Integer,
        sigma: &Integer,
        entropy: &mut dyn EntropySource,
    ) -> Result<Proof> {
        let sizes = self.public.sizes()?;
        let n = self.public.public.n();
        let mut rng = Drbg::new(entropy)?;
        let nonce = SecretInt::new(rng.below(&(Integer::from(1) << sizes.nonce_bits())));
        let x_tilde = self.public.proof_base(&sizes, x);
        let [v_commit, x_commit] = CtPair::new([n, n])?.pow(
            [&self.public.base, &x_tilde],
            [nonce.expose(), nonce.expose()],
            sizes.nonce_bits(),
        )?;
        let challenge = self
            .public
            .challenge(self.party, x, sigma, &v_commit, &x_commit);
        let response = nonce.expose() + Integer::from(&challenge * self.share());
        Ok(Proof {
            challenge,
            response,
        })
    }

    /// [`Self::partial`] with its proof, for a combiner that checks every partial.
    pub fn partial_sign(
        &self,
        x: &Integer,
        entropy: &mut dyn EntropySource,
    ) -> Result<PartialSignature> {
        let mut partial = self.partial(x)?;
        partial.proof = Some(self.prove(x, &partial.value, entropy)?);
        Ok(partial)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lagrange_coefficients_are_integers_and_interpolate() {
        // f(x) = 7 + 3x + 5x^2 at positions 1..=6; any 3 recover Delta f(0).
        let k = 6;
        let delta = factorial(k);
        let f = |x: i64| Integer::from(7 + 3 * x + 5 * x * x);
        for a in 1..=k {
            for b in a + 1..=k {
                for c in b + 1..=k {
                    let s = [a, b, c];
                    let sum: Integer = s
                        .iter()
                        .map(|&j| lagrange(&delta, &s, j).unwrap() * f(j as i64))
                        .sum();
                    assert_eq!(sum, Integer::from(&delta * 7u32));
                }
            }
        }
    }

    #[test]
    fn sizes_follow_the_bound() {
        let s = Sizes::new(2048, 5, 2).unwrap();
        assert_eq!(s.delta, 120);
        assert_eq!(s.dealt_bits, 2048 + 128 + 2 * 3 + 2);
        assert_eq!(s.coefficient_bits, s.dealt_bits + 1 + 2 + 7 + 3 + 128);
        assert!(s.share_bits > s.coefficient_bits && s.share_bits < s.coefficient_bits + 12);
        assert!(Sizes::new(2048, 5, 3).is_err());
        assert!(Sizes::new(2048, 5, 0).is_err());
        // The refreshed shares fit the dealt bound: (k + 1) 2^low_bits < 2^dealt_bits.
        let refreshed = Integer::from(6u32) << s.low_bits;
        assert!(refreshed.significant_bits() < s.dealt_bits);
    }

    #[test]
    fn simultaneous_powers_match_separate_ones() {
        let n = Integer::from(1_000_003u64 * 999_983);
        let bases = [
            Integer::from(12345),
            Integer::from(777),
            Integer::from(31337),
        ];
        let exps = [Integer::from(1000), Integer::from(-77), Integer::from(0)];
        let expect = bases
            .iter()
            .zip(&exps)
            .fold(Integer::from(1), |acc, (b, e)| {
                acc * Integer::from(b.pow_mod_ref(e, &n).unwrap()) % &n
            });
        assert_eq!(multi_pow(&bases, &exps, &n).unwrap(), expect);
    }
}
