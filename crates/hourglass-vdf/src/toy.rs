//! A small group for unit tests.

use rug::Integer;

use crate::group::RsaGroup;

/// A group for unit tests: 512 bits with its order known (insecure on purpose: fast, and the
/// trapdoor lets tests reach any `T`).
pub(crate) fn toy_group() -> (RsaGroup, Integer) {
    let p = (Integer::from(1) << 255u32).next_prime();
    let q = (Integer::from(3) << 254u32).next_prime();
    let order = Integer::from(&p - 1u32) * Integer::from(&q - 1u32);
    (RsaGroup::new_insecure(p * q).unwrap(), order)
}
