//! Trial division of a batch's moduli, split among the members (step 3 of
//! [`crate::protocol`]).
//!
//! Every `N` is public once computed, and most have a small prime factor (the sieve removes
//! only the primes up to its bound from `p` and `q`, a few hundred at 1024-bit primes). Each
//! member divides every `N` of a batch by **its own slice** of the odd primes below
//! [`trial_bound`] (the slices partition them, each about `1 / k` of their product's length),
//! and broadcasts, for every `N`, either nothing found or a **witness**: a divisor `w` of `N`
//! with `1 < w < 2^64`. Every member checks every witness it receives ([`is_witness`]): a
//! member that claims a divisor that does not divide `N` is named. A witness proves that `N`
//! is not the product of two candidates, which are at least `3 * 2^(n - 2)` for `n`-bit primes,
//! so dropping that `N` loses nothing. A member that hides a divisor it found only sends that
//! `N` to the biprimality test, which a modulus with a third prime factor fails (for all but a
//! `2^-rounds` share of its bases): the split costs the committee nothing in soundness, and
//! each member's work is a `k`-th of a full trial division.
//!
//! The bound is where the division costs about what the biprimality tests it saves do. For
//! 1024-bit moduli it grows with the committee: `2^16` for up to 3 members, then `2^16 *
//! ceil(k / 3)` up to `2^22`, which keeps each member's slice no longer than the product of
//! every prime below `2^16` (about 94,000 bits), while the share of moduli that reach the
//! biprimality test falls as `(ln S / ln B)^2` (`S` the sieve's bound): 35% at `2^16`, 22% at
//! `2^20` for 1024-bit primes. From 2048-bit moduli on, where a test costs about eight times
//! as much, it is `2^22` whatever the committee: a member then divides by a slice of up to 2
//! million bits, once per batch by a remainder tree over the batch's moduli
//! ([`TrialSlice::witnesses`]: 14-18 ms per batch of 128 at 3 members on a Zen 3, against
//! 112-156 ms for a division per modulus), and 20% of the moduli reach the test.

use hourglass_arith::prime::{odd_primes_below, product_of, product_tree};
use rug::Integer;

/// The largest trial bound, whatever the committee (a sieve over its odd numbers takes half
/// as many bytes while a session starts).
pub const MAX_TRIAL_BOUND: u32 = 1 << 22;

/// The trial bound for a committee of `members` and moduli of `modulus_bits`: for moduli below
/// 2048 bits `2^16` up to 3 members, `2^16 * ceil(k / 3)` above, at most [`MAX_TRIAL_BOUND`];
/// [`MAX_TRIAL_BOUND`] from 2048 bits on (see the [module documentation](self)).
pub fn trial_bound(members: usize, modulus_bits: u32) -> u32 {
    if modulus_bits >= 2048 {
        return MAX_TRIAL_BOUND;
    }
    let factor = u32::try_from(members.div_ceil(3).max(1)).unwrap_or(u32::MAX);
    (1u32 << 16).saturating_mul(factor).min(MAX_TRIAL_BOUND)
}

/// Is `w` a witness that `n` has a small factor: `1 < w < 2^64` and `w` divides `n`?
pub fn is_witness(n: &Integer, w: &Integer) -> bool {
    *w > 1 && w.significant_bits() <= 64 && n.is_divisible(w)
}

/// One member's slice of the odd primes below the trial bound, and their product.
#[derive(Debug, Clone)]
pub struct TrialSlice {
    primes: Vec<u32>,
    product: Integer,
}

impl TrialSlice {
    /// The slice of the member at `position` (from 1) among `members`, for the odd primes
    /// below `bound`: the primes are cut into `members` runs of about equal product length
    /// (by the primes' bit lengths, so every member computes the same cut).
    pub fn new(bound: u32, position: usize, members: usize) -> Self {
        let all = odd_primes_below(bound);
        let weight = |p: u32| u64::from(u32::BITS - p.leading_zeros());
        let total: u64 = all.iter().map(|&p| weight(p)).sum();
        let members = members.max(1) as u64;
        let position = (position.max(1) as u64).min(members);
        let (from, to) = (total * (position - 1) / members, total * position / members);
        let mut at = 0u64;
        let primes: Vec<u32> = all
            .into_iter()
            .filter(|&p| {
                let start = at;
                at += weight(p);
                start >= from && start < to
            })
            .collect();
        let product = product_of(&primes);
        TrialSlice { primes, product }
    }

    /// The primes of this slice.
    pub fn primes(&self) -> &[u32] {
        &self.primes
    }

    /// A witness that one of this slice's primes divides `n` ([`is_witness`]), or `None`: the
    /// greatest common divisor of `n` and the slice's product when it is below `2^64`, else
    /// the least prime of the slice that divides `n`.
    pub fn witness(&self, n: &Integer) -> Option<Integer> {
        if *n <= 1 || self.primes.is_empty() {
            return None;
        }
        self.witness_from(n, Integer::from(&self.product % n))
    }

    /// [`TrialSlice::witness`] for every modulus of a batch (all `> 1`), by one remainder tree
    /// when the slice's product is at least a quarter as long as the moduli together (where the
    /// tree measured faster than a division per modulus): the product modulo the product of all
    /// the moduli, then modulo each half of them, and so on down to each modulus. The slice's
    /// long product is divided once per batch, not once per modulus.
    pub fn witnesses(&self, moduli: &[&Integer]) -> Vec<Option<Integer>> {
        let total: u64 = moduli.iter().map(|n| u64::from(n.significant_bits())).sum();
        if self.primes.is_empty()
            || moduli.len() < 2
            || u64::from(self.product.significant_bits()) < total / 4
            || moduli.iter().any(|n| **n <= 1)
        {
            return moduli.iter().map(|n| self.witness(n)).collect();
        }
        remainders(&self.product, moduli)
            .into_iter()
            .zip(moduli)
            .map(|(rest, n)| self.witness_from(n, rest))
            .collect()
    }

    /// The witness for `n > 1` from `rest`, the slice's product modulo `n`.
    fn witness_from(&self, n: &Integer, rest: Integer) -> Option<Integer> {
        let common = rest.gcd(n);
        if common == 1 {
            return None;
        }
        if common.significant_bits() <= 64 && common != *n {
            return Some(common);
        }
        self.primes
            .iter()
            .find(|&&p| n.is_divisible_u(p))
            .map(|&p| Integer::from(p))
    }
}

/// `x mod n` for every `n` of `moduli` (all `> 0`), by a product tree of the moduli walked down
/// from `x` modulo their whole product.
fn remainders(x: &Integer, moduli: &[&Integer]) -> Vec<Integer> {
    let mut levels = product_tree(moduli.iter().map(|&n| n.clone()).collect());
    let mut rests: Vec<Integer> = levels
        .pop()
        .unwrap_or_default()
        .iter()
        .map(|root| Integer::from(x % root))
        .collect();
    while let Some(level) = levels.pop() {
        rests = level
            .iter()
            .enumerate()
            .map(|(i, n)| Integer::from(&rests[i / 2] % n))
            .collect();
    }
    rests
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bound_grows_with_the_committee_up_to_its_cap() {
        assert_eq!(trial_bound(3, 1024), 1 << 16);
        assert_eq!(trial_bound(2, 1024), 1 << 16);
        assert_eq!(trial_bound(4, 1024), 1 << 17);
        assert_eq!(trial_bound(50, 1024), 17 << 16);
        assert_eq!(trial_bound(1000, 1024), MAX_TRIAL_BOUND);
        for members in [2, 3, 50, 1000] {
            assert_eq!(trial_bound(members, 2048), MAX_TRIAL_BOUND);
            assert_eq!(trial_bound(members, 4096), MAX_TRIAL_BOUND);
        }
    }

    #[test]
    fn the_slices_partition_the_primes_in_balanced_runs() {
        for members in [1usize, 3, 7, 50] {
            let bound = trial_bound(members, 1024);
            let all = odd_primes_below(bound);
            let slices: Vec<TrialSlice> = (1..=members)
                .map(|j| TrialSlice::new(bound, j, members))
                .collect();
            let joined: Vec<u32> = slices.iter().flat_map(|s| s.primes().to_vec()).collect();
            assert_eq!(joined, all, "{members} members");
            let lengths: Vec<u32> = slices
                .iter()
                .map(|s| s.product.significant_bits())
                .collect();
            let (lo, hi) = (lengths.iter().min().unwrap(), lengths.iter().max().unwrap());
            // Balanced by bit lengths, not logarithms: within 5%.
            assert!(20 * (hi - lo) <= *hi, "{members} members: {lengths:?}");
        }
    }

    #[test]
    fn a_witness_divides_and_is_found_only_in_its_slice() {
        let bound = 1 << 16;
        let slices: Vec<TrialSlice> = (1..=3).map(|j| TrialSlice::new(bound, j, 3)).collect();
        let big = (Integer::from(1) << 1024u32).next_prime();
        let other = (Integer::from(1) << 1023u32).next_prime();
        let biprime = Integer::from(&big * &other);
        for s in &slices {
            assert_eq!(s.witness(&biprime), None);
            // One factor from the slice, and a product of several larger than 2^64.
            let p = s.primes()[s.primes().len() / 2];
            let n = Integer::from(&big * p);
            let w = s.witness(&n).unwrap();
            assert!(is_witness(&n, &w));
            assert_eq!(w, p);
            let several = s.primes().iter().take(6).fold(big.clone(), |a, &q| a * q);
            let w = s.witness(&several).unwrap();
            assert!(is_witness(&several, &w));
            for other in slices.iter().filter(|o| o.primes() != s.primes()) {
                assert_eq!(other.witness(&n), None);
            }
        }
        // An n made of the slice's primes alone: the witness is one of them, not n.
        let s = &slices[0];
        let smooth = product_of(&s.primes()[..40]);
        let w = s.witness(&smooth).unwrap();
        assert!(is_witness(&smooth, &w) && w < smooth);
    }

    #[test]
    fn a_batch_by_the_remainder_tree_finds_what_each_division_finds() {
        let bound = 1 << 18;
        let slice = TrialSlice::new(bound, 2, 3);
        let big = (Integer::from(1) << 1024u32).next_prime();
        let mut moduli: Vec<Integer> = Vec::new();
        for (i, &p) in slice.primes().iter().step_by(997).enumerate() {
            // Moduli with a factor in the slice, outside it, and none (odd counts: the tree
            // carries a last one up).
            moduli.push(Integer::from(&big * p));
            moduli.push(Integer::from(&big + (2 * i + 1) as u32).next_prime() * 3u32);
            moduli.push(Integer::from(&big - (2 * i) as u32).next_prime());
        }
        moduli.push(slice.primes()[..30].iter().fold(big.clone(), |a, &q| a * q));
        let refs: Vec<&Integer> = moduli.iter().collect();
        assert!(slice.product.significant_bits() as usize > 2 * 1030 * refs.len());
        let each: Vec<Option<Integer>> = refs.iter().map(|n| slice.witness(n)).collect();
        assert_eq!(slice.witnesses(&refs), each);
        assert!(each.iter().filter(|w| w.is_some()).count() > refs.len() / 3);
        assert!(each.iter().filter(|w| w.is_none()).count() > refs.len() / 3);
        for (n, w) in refs.iter().zip(&each) {
            if let Some(w) = w {
                assert!(is_witness(n, w));
            }
        }
    }

    #[test]
    fn false_witnesses_are_refused() {
        let n = Integer::from(3 * 5 * 7) * (Integer::from(1) << 100u32).next_prime();
        assert!(is_witness(&n, &Integer::from(15)));
        for w in [0i64, 1, -3, 2, 11] {
            assert!(!is_witness(&n, &Integer::from(w)), "{w}");
        }
        // A divisor at or above 2^64 is not a witness (it could be a candidate prime).
        let large = (Integer::from(1) << 100u32).next_prime();
        assert!(n.is_divisible(&large));
        assert!(!is_witness(&n, &large));
    }
}
