//! Shamir sharing over `Z_m` with evaluation points `1..=k`, the arithmetic of BGW.
//!
//! The modulus need not be prime: it is enough that the differences of evaluation points
//! (`1..k-1`) are invertible, which holds for a prime `P > k`, for the sieving modulus (a
//! product of primes `>= k`) and for a candidate `N` without small factors.

use hourglass_arith::secret::{mod_ct_padded, SecretInt};
use rug::ops::RemRounding;
use rug::Integer;

use crate::rng::Drbg;
use crate::{ParamError, Result};

/// Sharing and interpolation among `k` parties modulo `m`.
#[derive(Debug, Clone)]
pub struct Shamir {
    modulus: Integer,
    lambda: Vec<Integer>,
    lambda_inv: Vec<Integer>,
}

impl Shamir {
    /// The context for `k` parties modulo `modulus` (above 1).
    pub fn new(modulus: Integer, k: usize) -> Result<Self> {
        if modulus <= 1 {
            return Err(ParamError::ShamirModulus { parties: k }.into());
        }
        let mut lambda = Vec::with_capacity(k);
        for j in 1..=k as i64 {
            let mut num = Integer::from(1);
            let mut den = Integer::from(1);
            for l in (1..=k as i64).filter(|&l| l != j) {
                num *= l;
                den *= l - j;
            }
            let inv = den
                .invert(&modulus)
                .map_err(|_| ParamError::ShamirModulus { parties: k })?;
            lambda.push((num * inv).rem_euc(&modulus));
        }
        let lambda_inv = lambda
            .iter()
            .map(|l| l.clone().invert(&modulus))
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|_| ParamError::Lagrange)?;
        Ok(Shamir {
            modulus,
            lambda,
            lambda_inv,
        })
    }

    /// The modulus.
    pub fn modulus(&self) -> &Integer {
        &self.modulus
    }

    /// Number of parties (evaluation points).
    pub fn parties(&self) -> usize {
        self.lambda.len()
    }

    /// The Lagrange coefficient of point `position` (1-based) for the value at zero, valid for
    /// polynomials of degree below `k`.
    pub fn lambda(&self, position: usize) -> &Integer {
        &self.lambda[position - 1]
    }

    /// Shares of `secret` on a random polynomial of `degree`: element `j - 1` is the value at
    /// point `j`. The polynomial's coefficients and the shares are secret: they are wiped when
    /// dropped.
    pub fn share(&self, secret: &Integer, degree: usize, rng: &mut Drbg) -> Vec<SecretInt> {
        // A public bound on every point before its reduction, in limbs: coefficients of `m`'s
        // limbs and two more (wide draws), times `(degree + 1) k^degree`. Padding the
        // constant-time division to it (not to twice `m`'s length, as for products) divides
        // only the limbs a point can have.
        let k = self.parties() as f64;
        let growth = (degree as f64 * k.log2() + ((degree + 1) as f64).log2()).ceil() as usize;
        let limbs = self.modulus.significant_digits::<u64>() + 2 + growth.div_ceil(64) + 1;
        let mut coeffs: Vec<SecretInt> = Vec::with_capacity(degree + 1);
        coeffs.push(SecretInt::new(self.reduce(secret)));
        // Coefficients are used modulo m only, and each share is reduced once: wide draws.
        coeffs.extend((0..degree).map(|_| rng.wide(&self.modulus)));
        (1..=self.parties() as u32)
            .map(|x| {
                // Horner with a small point: reduce once at the end.
                let mut acc = coeffs[degree].clone();
                for c in coeffs[..degree].iter().rev() {
                    *acc.expose_mut() *= x;
                    *acc.expose_mut() += c.expose();
                }
                SecretInt::new(
                    mod_ct_padded(acc.expose(), &self.modulus, limbs).unwrap_or_default(),
                )
            })
            .collect()
    }

    /// The dealer's own share of a sharing of zero whose other shares come from pairwise
    /// streams: the member at position `j` gets `streams[j-1].below(m)` (it draws the same
    /// value from its copy of the stream, so nothing is sent), and the dealer's share solves
    /// `sum_j lambda_j z_j = 0`. The shares are those of a random polynomial of degree `k - 1`
    /// with value 0 at 0, which hides a BGW product at least as well as degree `2t`.
    pub fn zero_from_streams(&self, position: usize, streams: &mut [Option<Drbg>]) -> Integer {
        let mut acc = Integer::new();
        for (j, stream) in streams.iter_mut().enumerate() {
            if j + 1 == position {
                continue;
            }
            if let Some(stream) = stream {
                // The receiver draws the same wide value; both use it modulo m only.
                let z = stream.wide(&self.modulus);
                acc += Integer::from(z.expose() * &self.lambda[j]);
            }
        }
        let acc = SecretInt::new(acc);
        let own = SecretInt::new(-self.reduce(acc.expose()) * &self.lambda_inv[position - 1]);
        self.reduce(own.expose())
    }

    /// `sum_j lambda_j * values[j-1] mod m`: the value at zero of the polynomial through the
    /// points, or the additive share `lambda_j * value` summed.
    pub fn interpolate(&self, values: &[Integer]) -> Integer {
        let mut acc = Integer::new();
        for (v, l) in values.iter().zip(&self.lambda) {
            acc += Integer::from(v * l);
        }
        let acc = SecretInt::new(acc);
        self.reduce(acc.expose())
    }

    /// `x mod m` in `[0, m)` for a secret `x` of any sign, in constant time
    /// ([`reduce_secret`]). The modulus is above 1 (checked by [`Shamir::new`]), the one case
    /// that refuses.
    fn reduce(&self, x: &Integer) -> Integer {
        reduce_secret(x, &self.modulus).unwrap_or_default()
    }
}

/// Extraction of random sharings from dealt ones (Damgard and Nielsen, "Scalable and
/// Unconditionally Secure Multiparty Computation", CRYPTO 2007): every member deals one random
/// sharing, and each member applies the same public `(k - t) x k` matrix `V[o][j] = j^o` to the
/// shares it received, which yields its shares of `k - t` random sharings of the same degree.
/// Any `k - t` columns of `V` form a Vandermonde matrix on distinct points whose differences
/// (below `k`) are units modulo `m`, so the outputs are an invertible image of the honest
/// members' sharings: uniformly random and unknown to any `t` colluders. Applied with the same
/// coefficients to a degree-`t` and a degree-`2t` sharing of each dealt value, it gives
/// **double sharings** `([r]_t, [r]_2t)` of random `r`, which turn a product of two degree-`t`
/// sharings into a degree-`t` sharing with one value opened: `xy + r`.
#[derive(Debug, Clone)]
pub struct Extractor {
    modulus: Integer,
    /// `powers[o][j - 1] = j^o mod m`.
    powers: Vec<Vec<Integer>>,
}

impl Extractor {
    /// The extractor for `parties` members tolerating `threshold` colluders modulo `modulus`
    /// (`threshold < parties`).
    pub fn new(modulus: &Integer, parties: usize, threshold: usize) -> Self {
        let outputs = parties.saturating_sub(threshold);
        let mut row: Vec<Integer> = vec![Integer::from(1); parties];
        let mut powers = Vec::with_capacity(outputs);
        for _ in 0..outputs {
            let next = row
                .iter()
                .enumerate()
                .map(|(j, p)| Integer::from(p * (j as u32 + 1)) % modulus)
                .collect();
            powers.push(std::mem::replace(&mut row, next));
        }
        Extractor {
            modulus: modulus.clone(),
            powers,
        }
    }

    /// Sharings obtained from one dealt sharing per member: `k - t`.
    pub fn outputs(&self) -> usize {
        self.powers.len()
    }

    /// This member's shares of the extracted sharings, from its shares `dealt[j - 1]` of the
    /// sharing member `j` dealt.
    pub fn extract(&self, dealt: &[SecretInt]) -> Vec<SecretInt> {
        self.powers
            .iter()
            .map(|row| {
                let mut acc = SecretInt::new(Integer::new());
                for (share, power) in dealt.iter().zip(row) {
                    *acc.expose_mut() += Integer::from(share.expose() * power);
                }
                SecretInt::new(reduce_secret(acc.expose(), &self.modulus).unwrap_or_default())
            })
            .collect()
    }
}

/// `x mod m` in `[0, m)` for a secret `x` of any sign made of shares (a product of two sums of
/// shares plus a third, a polynomial at a small point), in constant time: GMP's
/// `mpn_sec_div_r` on the dividend padded to twice `m`'s limbs and four more, so that the
/// work does not follow the dividend's length (GMP's division takes time that depends on the
/// values). An error for `m <= 0`.
pub(crate) fn reduce_secret(x: &Integer, m: &Integer) -> hourglass_arith::Result<Integer> {
    mod_ct_padded(x, m, 2 * m.significant_digits::<u64>() + 4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_modulus_below_2_is_refused() {
        for m in [0i32, 1, -7] {
            assert!(Shamir::new(Integer::from(m), 3).is_err());
        }
    }

    #[test]
    fn shares_interpolate_back_and_products_of_sharings_too() {
        let p = Integer::from(1_000_000_007u64);
        for k in 3..=9usize {
            let t = (k - 1) / 2;
            let sh = Shamir::new(p.clone(), k).unwrap();
            let mut rng = Drbg::from_key(&[k as u8; 32]);
            let a = Integer::from(123_456_789u64);
            let b = Integer::from(987_654_321u64);
            let exposed = |s: Vec<SecretInt>| -> Vec<Integer> {
                s.iter().map(SecretInt::expose_owned).collect()
            };
            let sa = exposed(sh.share(&a, t, &mut rng));
            let sb = exposed(sh.share(&b, t, &mut rng));
            let z = exposed(sh.share(&Integer::ZERO, 2 * t, &mut rng));
            assert_eq!(sh.interpolate(&sa), a);
            let prod: Vec<Integer> = (0..k)
                .map(|j| (Integer::from(&sa[j] * &sb[j]) + &z[j]).rem_euc(&p))
                .collect();
            // t shares alone do not pin the secret: another secret fits the same t shares.
            if t > 0 {
                assert_ne!(sa[0], a);
            }
            assert_eq!(sh.interpolate(&prod), (a * b).rem_euc(&p));
        }
    }

    #[test]
    fn zero_sharings_from_streams_interpolate_to_zero() {
        let p = Integer::from(1_000_000_007u64);
        let k = 5;
        let sh = Shamir::new(p.clone(), k).unwrap();
        for dealer in 1..=k {
            let key = |j: usize| [(dealer * 16 + j) as u8; 32];
            // The dealer's streams and the receivers' copies, from the same seeds.
            let mut dealer_streams: Vec<Option<Drbg>> = (1..=k)
                .map(|j| (j != dealer).then(|| Drbg::from_key(&key(j))))
                .collect();
            let mut receiver_streams: Vec<Option<Drbg>> = (1..=k)
                .map(|j| (j != dealer).then(|| Drbg::from_key(&key(j))))
                .collect();
            for _ in 0..3 {
                let own = sh.zero_from_streams(dealer, &mut dealer_streams);
                let shares: Vec<Integer> = (1..=k)
                    .map(|j| match receiver_streams[j - 1].as_mut() {
                        Some(s) => s.below(&p),
                        None => own.clone(),
                    })
                    .collect();
                assert_eq!(sh.interpolate(&shares), 0);
                assert!(shares.iter().any(|z| *z != 0));
            }
        }
    }

    #[test]
    fn extracted_double_sharings_multiply_with_one_opening() {
        let m = Integer::from(1_000_000_007u64);
        let (k, t) = (7usize, 3usize);
        let sh = Shamir::new(m.clone(), k).unwrap();
        let ex = Extractor::new(&m, k, t);
        assert_eq!(ex.outputs(), k - t);
        let mut rng = Drbg::from_key(&[9; 32]);
        let exposed =
            |s: &[SecretInt]| -> Vec<Integer> { s.iter().map(SecretInt::expose_owned).collect() };
        // Member j deals [rho_j]_t and [rho_j]_2t; low[j][i] is member i's share of member j's.
        let dealt: Vec<(Vec<SecretInt>, Vec<SecretInt>)> = (0..k)
            .map(|_| {
                let rho = rng.below(&m);
                (sh.share(&rho, t, &mut rng), sh.share(&rho, 2 * t, &mut rng))
            })
            .collect();
        let column = |i: usize, high: bool| -> Vec<SecretInt> {
            dealt
                .iter()
                .map(|(lo, hi)| if high { hi[i].clone() } else { lo[i].clone() })
                .collect()
        };
        // out[i][o]: member i's share of extracted sharing o.
        let low: Vec<Vec<SecretInt>> = (0..k).map(|i| ex.extract(&column(i, false))).collect();
        let high: Vec<Vec<SecretInt>> = (0..k).map(|i| ex.extract(&column(i, true))).collect();
        let x = Integer::from(123_456u32);
        let y = Integer::from(654_321u32);
        let sx = exposed(&sh.share(&x, t, &mut rng));
        let sy = exposed(&sh.share(&y, t, &mut rng));
        let mut secrets = Vec::new();
        for o in 0..k - t {
            let lo: Vec<Integer> = low.iter().map(|s| s[o].expose_owned()).collect();
            let hi: Vec<Integer> = high.iter().map(|s| s[o].expose_owned()).collect();
            // The same secret, and the low one of degree t: t + 1 of its shares determine it.
            let r = sh.interpolate(&lo);
            assert_eq!(sh.interpolate(&hi), r);
            let sub = Shamir::new(m.clone(), t + 1).unwrap();
            assert_eq!(sub.interpolate(&lo[..t + 1]), r);
            secrets.push(r.clone());
            // Multiply: open x_i y_i + r2t_i, then x y = opened - r, shared by opened - rt_i.
            let e: Vec<Integer> = (0..k)
                .map(|i| (Integer::from(&sx[i] * &sy[i]) + &hi[i]) % &m)
                .collect();
            let opened = sh.interpolate(&e);
            assert_eq!(opened, (Integer::from(&x * &y) + &r) % &m);
            let z: Vec<Integer> = lo
                .iter()
                .map(|rt| Integer::from(&opened - rt).rem_euc(&m))
                .collect();
            assert_eq!(sub.interpolate(&z[..t + 1]), Integer::from(&x * &y) % &m);
        }
        secrets.sort();
        secrets.dedup();
        assert_eq!(secrets.len(), k - t, "distinct random values");
    }

    #[test]
    fn refuses_a_modulus_with_a_small_factor() {
        assert!(Shamir::new(Integer::from(3u32 * 1_000_003), 5).is_err());
        assert!(Shamir::new(Integer::from(7u32 * 1_000_003), 5).is_ok());
    }
}
