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
//! So the bound grows with the committee: `2^16` for up to 3 members, then `2^16 * ceil(k / 3)`
//! up to `2^22`, which keeps each member's slice no longer than the one product of every prime
//! below `2^16` that each member divided by before (about 94,000 bits), while the share of
//! moduli that reach the biprimality test falls as `(ln 2^16 / ln B)^2`: 35% at `2^16`, 22% at
//! `2^20` for 1024-bit primes sieved to a few hundred.

use hourglass_arith::prime::{odd_primes_below, product_of};
use rug::Integer;

/// The largest trial bound, whatever the committee (a sieve over its odd numbers takes half
/// as many bytes while a session starts).
pub const MAX_TRIAL_BOUND: u32 = 1 << 22;

/// The trial bound for a committee of `members`: `2^16` up to 3 members, `2^16 * ceil(k / 3)`
/// above, at most [`MAX_TRIAL_BOUND`] (see the [module documentation](self)).
pub fn trial_bound(members: usize) -> u32 {
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
        let rest = Integer::from(&self.product % n);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bound_grows_with_the_committee_up_to_its_cap() {
        assert_eq!(trial_bound(3), 1 << 16);
        assert_eq!(trial_bound(2), 1 << 16);
        assert_eq!(trial_bound(4), 1 << 17);
        assert_eq!(trial_bound(50), 17 << 16);
        assert_eq!(trial_bound(1000), MAX_TRIAL_BOUND);
    }

    #[test]
    fn the_slices_partition_the_primes_in_balanced_runs() {
        for members in [1usize, 3, 7, 50] {
            let bound = trial_bound(members);
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
