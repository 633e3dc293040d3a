//! Sequential modular squaring in Montgomery form: the kernel behind time-lock puzzles and VDF
//! evaluation, faster than GMP's `mpz_powm`.
//!
//! A [`MontContext`] holds everything precomputed for one odd modulus `n` (512 to 8192 bits are
//! the intended sizes; any odd `n > 1` up to 8192 bits is accepted): the limb count `L`, the
//! Montgomery radix `R = 2^(64 L)`, `n' = -n^-1 mod 2^64`, `R^2 mod n` and `R - n`.
//! [`MontContext::square_k_times`] converts `x` into Montgomery form once, performs the `k`
//! squarings there and converts back once; the value it returns equals GMP's `powm` with
//! exponent `2^k` (the `squaring` module, one level up, builds its runs on this one).
//!
//! Three kernels do the squarings ([`Kernel`]):
//!
//! - [`Kernel::X86Ifma`]: AVX-512 IFMA in radix 2^52 ([`ifma`]), eight 52-bit products per
//!   instruction; chosen from [`IFMA_MIN_BITS`] bits up on CPUs that have it (below that its
//!   word-serial dependency chain makes it slower than MULX).
//! - [`Kernel::X86Adx`]: x86-64 assembly using MULX and the two carry chains of ADCX/ADOX,
//!   generated for 8, 16, 24, .., 64 limbs (512 to 4096 bits; smaller moduli are padded up to
//!   the next multiple of 8 limbs) and chosen at run time when the CPU has BMI2 and ADX. The
//!   whole chain of squarings runs inside one asm block on stack-resident arrays, with values
//!   kept "almost reduced" (below `R`, corrected only when a result carries out) and reduced
//!   once at the end. See `codegen.rs` for the algorithm.
//! - [`Kernel::Portable`]: plain Rust with `u128` arithmetic for any size, the fallback on other
//!   CPUs and for moduli above 4096 bits. When the modulus leaves room (`4n < R`) it keeps the
//!   values lazily below `2n` and corrects once at the end.
//!
//! Squaring here is variable-time, like everything else on public values (puzzle solving, VDF
//! evaluation); do not use it with secret operands.
//!
//! ```
//! use hourglass_arith::mont::MontContext;
//! use hourglass_arith::Integer;
//!
//! let n = Integer::from(Integer::from(1) << 1023) + 1155u32; // odd, 1024 bits
//! let ctx = MontContext::new(&n).unwrap();
//! let x = Integer::from(12345u32);
//! let y = ctx.square_k_times(&x, 1000);
//! assert_eq!(y, hourglass_arith::squaring::square_k_times(&x, 1000, &n));
//! ```

#[cfg(all(test, target_arch = "x86_64"))]
mod codegen;
#[cfg(target_arch = "x86_64")]
pub mod ifma;
pub(crate) mod inverse;
pub(crate) mod kernel;
#[cfg(target_arch = "x86_64")]
pub mod peak;
mod portable;
#[cfg(target_arch = "x86_64")]
mod x86_adx;

use std::time::Instant;

use rug::integer::Order;
use rug::Integer;

use crate::{Error, Result};

pub use kernel::Kernel;

/// Largest modulus accepted, in bits.
pub const MAX_BITS: u32 = 8192;
/// Smallest modulus for which [`MontContext::new`] prefers the IFMA kernel. Measured on a Xeon
/// with IFMA (`hourglass bench squaring`): at 512 bits MULX wins (63 against 84 ns); from 576
/// bits the MULX kernels pad to 16 limbs and IFMA wins (118 against 229 ns at 640 bits, 145
/// against 233 at 1024, 328 against 936 at 2048).
pub const IFMA_MIN_BITS: u32 = 513;

/// Precomputed Montgomery arithmetic for one odd modulus.
#[derive(Clone)]
pub struct MontContext {
    n: Integer,
    /// Limb count `L` of the representation (`R = 2^(64 L)`).
    limbs: usize,
    /// `[n', n_0, .., n_{L-1}]`: the kernels find `n'` just below `n`.
    n_ext: Vec<u64>,
    /// `R - n`, `L` limbs.
    r_minus_n: Vec<u64>,
    /// `R^2 mod n`.
    r2: Integer,
    /// `R^-1 mod n`.
    r_inv: Integer,
    /// `4n < R`: the portable kernel may keep values below `2n`.
    lazy: bool,
    /// The fastest kernel available for this modulus on this CPU.
    best: Kernel,
    /// The IFMA context, when the CPU has IFMA and the size fits.
    #[cfg(target_arch = "x86_64")]
    ifma: Option<ifma::IfmaContext>,
}

impl std::fmt::Debug for MontContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MontContext")
            .field("bits", &self.n.significant_bits())
            .field("limbs", &self.limbs)
            .field("kernel", &self.best)
            .finish_non_exhaustive()
    }
}

/// Whether the CPU can run [`Kernel::X86Adx`].
fn adx_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        x86_adx::available()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// The limb count of the assembly kernel for a `limbs`-limb modulus, if there is one.
fn adx_limbs(limbs: usize) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    {
        let padded = limbs.div_ceil(8) * 8;
        x86_adx::KERNEL_LIMBS.contains(&padded).then_some(padded)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = limbs;
        None
    }
}

impl MontContext {
    /// Precomputes the Montgomery arithmetic modulo `n` (odd, `1 < n`, at most [`MAX_BITS`]
    /// bits), choosing the fastest kernel this CPU can run for that size.
    pub fn new(n: &Integer) -> Result<Self> {
        let limbs = (n.significant_bits() as usize).div_ceil(64);
        let padded = if adx_available() {
            adx_limbs(limbs)
        } else {
            None
        };
        Self::build(n, padded.unwrap_or(limbs), padded.is_some(), true)
    }

    /// Like [`MontContext::new`] but never selects an assembly or IFMA kernel (and never pads
    /// the limb count for one): the configuration of a CPU without BMI2/ADX or IFMA.
    pub fn new_portable(n: &Integer) -> Result<Self> {
        let limbs = (n.significant_bits() as usize).div_ceil(64);
        Self::build(n, limbs, false, false)
    }

    fn build(n: &Integer, limbs: usize, use_adx: bool, use_ifma: bool) -> Result<Self> {
        if *n <= 1 || n.is_even() {
            return Err(Error::UnsuitableModulus(
                "Montgomery arithmetic needs an odd modulus greater than 1",
            ));
        }
        if n.significant_bits() > MAX_BITS {
            return Err(Error::ModulusTooLarge {
                bits: n.significant_bits(),
                max: MAX_BITS,
            });
        }
        let word = Integer::from(1) << 64;
        let inv = Integer::from(n.invert_ref(&word).ok_or(Error::NotInvertible)?);
        let n0 = (&word - inv).to_u64().unwrap_or(0);
        let mut n_ext = Vec::with_capacity(limbs + 1);
        n_ext.push(n0);
        n_ext.extend(to_limbs(n, limbs));
        let bits = u32::try_from(64 * limbs).map_err(|_| Error::ModulusTooLarge {
            bits: u32::MAX,
            max: MAX_BITS,
        })?;
        let r = Integer::from(1) << bits;
        let r_minus_n = to_limbs(&Integer::from(&r - n), limbs);
        let r2 = Integer::from(&r * &r) % n;
        let r_inv = Integer::from(r.invert_ref(n).ok_or(Error::NotInvertible)?);
        let lazy = Integer::from(n << 2u32) < r;
        #[cfg(target_arch = "x86_64")]
        let ifma = if use_ifma {
            ifma::IfmaContext::new(n)
        } else {
            None
        };
        #[cfg(not(target_arch = "x86_64"))]
        let _ = use_ifma;
        #[cfg(target_arch = "x86_64")]
        let prefer_ifma = ifma.is_some() && n.significant_bits() >= IFMA_MIN_BITS;
        #[cfg(not(target_arch = "x86_64"))]
        let prefer_ifma = false;
        Ok(Self {
            n: n.clone(),
            limbs,
            n_ext,
            r_minus_n,
            r2,
            r_inv,
            lazy,
            best: if prefer_ifma {
                Kernel::X86Ifma
            } else if use_adx {
                Kernel::X86Adx
            } else {
                Kernel::Portable
            },
            #[cfg(target_arch = "x86_64")]
            ifma,
        })
    }

    /// The modulus.
    pub fn modulus(&self) -> &Integer {
        &self.n
    }

    /// The limb count `L` of the representation (`R = 2^(64 L)`).
    pub fn limbs(&self) -> usize {
        self.limbs
    }

    /// `n' = -n^-1 mod 2^64`.
    pub fn n_prime(&self) -> u64 {
        self.n_ext[0]
    }

    /// `R^2 mod n`.
    pub fn r_squared(&self) -> &Integer {
        &self.r2
    }

    /// The kernel [`MontContext::square_k_times`] uses.
    pub fn kernel(&self) -> Kernel {
        self.best
    }

    /// Whether `kernel` can run for this context on this CPU.
    pub fn supports(&self, kernel: Kernel) -> bool {
        match kernel {
            Kernel::Portable => true,
            Kernel::X86Adx => adx_available() && adx_limbs(self.limbs) == Some(self.limbs),
            Kernel::X86Ifma => {
                #[cfg(target_arch = "x86_64")]
                {
                    self.ifma.is_some()
                }
                #[cfg(not(target_arch = "x86_64"))]
                {
                    false
                }
            }
        }
    }

    /// The IFMA context, if this CPU has IFMA and the modulus fits it.
    #[cfg(target_arch = "x86_64")]
    pub fn ifma(&self) -> Option<&ifma::IfmaContext> {
        self.ifma.as_ref()
    }

    /// `x R mod n` as `L` little-endian limbs (`x` is reduced modulo `n` first).
    pub fn to_montgomery(&self, x: &Integer) -> Vec<u64> {
        let xr = Integer::from(x.modulo_ref(&self.n)) << (64 * self.limbs as u32);
        to_limbs(&(xr % &self.n), self.limbs)
    }

    /// The integer `a R^-1 mod n` for a Montgomery-form value `a` of `L` limbs.
    pub fn from_montgomery(&self, a: &[u64]) -> Integer {
        let x = Integer::from_digits(a, Order::Lsf);
        (x * &self.r_inv) % &self.n
    }

    /// `k` Montgomery squarings of `a` in place: `a <- a^(2^k) R^(1 - 2^k) mod n`. `a` must
    /// hold `L` limbs and be reduced (`a < n`); it is reduced on return.
    pub fn square_in_place(&self, a: &mut [u64], k: u64, kernel: Kernel) -> Result<()> {
        if a.len() != self.limbs {
            return Err(Error::OperandSize {
                got: a.len(),
                want: self.limbs,
            });
        }
        if !portable::less_than(a, &self.n_ext[1..]) {
            return Err(Error::OperandNotReduced);
        }
        match kernel {
            Kernel::Portable => {
                portable::square_chain(a, &self.n_ext[1..], self.n_ext[0], self.lazy, k);
                Ok(())
            }
            Kernel::X86Adx => {
                #[cfg(target_arch = "x86_64")]
                if self.supports(Kernel::X86Adx)
                    && x86_adx::square_chain(a, &self.n_ext, &self.r_minus_n, k)
                {
                    self.reduce_in_place(a);
                    return Ok(());
                }
                Err(Error::KernelUnavailable(kernel))
            }
            #[cfg(target_arch = "x86_64")]
            Kernel::X86Ifma => {
                // IFMA works in its own radix-2^52 form: convert out and back.
                let x = self.from_montgomery(a);
                let y = self.square_k_times_with(&x, k, Kernel::X86Ifma)?;
                a.copy_from_slice(&self.to_montgomery(&y));
                Ok(())
            }
            #[cfg(not(target_arch = "x86_64"))]
            Kernel::X86Ifma => Err(Error::KernelUnavailable(kernel)),
        }
    }

    /// Brings an `L`-limb value below `n` (the assembly kernel leaves values below `R` only).
    #[cfg(target_arch = "x86_64")]
    fn reduce_in_place(&self, a: &mut [u64]) {
        if portable::less_than(a, &self.n_ext[1..]) {
            return;
        }
        let x = Integer::from_digits(a, Order::Lsf) % &self.n;
        a.copy_from_slice(&to_limbs(&x, self.limbs));
    }

    /// `x^(2^k) mod n` by `k` sequential squarings with the context's kernel; equal to GMP's
    /// `powm` with exponent `2^k`.
    pub fn square_k_times(&self, x: &Integer, k: u64) -> Integer {
        self.square_k_times_with(x, k, self.best)
            .unwrap_or_else(|_| unreachable!("the context's own kernel is always supported"))
    }

    /// [`MontContext::square_k_times`] with a chosen kernel (for tests and benchmarks).
    pub fn square_k_times_with(&self, x: &Integer, k: u64, kernel: Kernel) -> Result<Integer> {
        #[cfg(target_arch = "x86_64")]
        if kernel == Kernel::X86Ifma {
            let ctx = self.ifma().ok_or(Error::KernelUnavailable(kernel))?;
            return Ok(ctx.square_k_times(x, k));
        }
        let mut a = self.to_montgomery(x);
        self.square_in_place(&mut a, k, kernel)?;
        Ok(self.from_montgomery(&a))
    }

    /// Nanoseconds per squaring of one chain of `k` squarings with `kernel` (conversions
    /// excluded). A single measurement: take the best of several, interleaved with whatever
    /// it is compared to, on a busy machine.
    pub fn measure_ns_per_squaring(&self, kernel: Kernel, k: u64) -> Result<f64> {
        let k = k.max(1);
        #[cfg(target_arch = "x86_64")]
        if kernel == Kernel::X86Ifma {
            let ctx = self.ifma().ok_or(Error::KernelUnavailable(kernel))?;
            let mut a = ctx.to_montgomery(&Integer::from(&self.n / 3u32));
            let start = Instant::now();
            ctx.square_in_place(&mut a, k);
            return Ok(start.elapsed().as_secs_f64() * 1e9 / k as f64);
        }
        let mut a = self.to_montgomery(&Integer::from(&self.n / 3u32));
        let start = Instant::now();
        self.square_in_place(&mut a, k, kernel)?;
        Ok(start.elapsed().as_secs_f64() * 1e9 / k as f64)
    }
}

/// `x` as exactly `limbs` little-endian limbs (`x` must fit).
fn to_limbs(x: &Integer, limbs: usize) -> Vec<u64> {
    let mut v: Vec<u64> = x.to_digits(Order::Lsf);
    v.resize(limbs, 0);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn modulus(bits: u32, seed: u64) -> Integer {
        // A deterministic odd modulus of exactly `bits` bits.
        let mut x = Integer::from(seed | 1);
        while x.significant_bits() < bits {
            x = x * 0x9E37_79B9_7F4A_7C15u64 + 0x6A09_E667u64;
        }
        x.keep_bits_mut(bits);
        x.set_bit(bits - 1, true);
        x.set_bit(0, true);
        x
    }

    #[test]
    fn precomputations_are_consistent() {
        for bits in [64u32, 100, 512, 1000, 2048, 4096, 5000] {
            let n = modulus(bits, 7);
            let ctx = MontContext::new(&n).unwrap();
            let r = Integer::from(1) << (64 * ctx.limbs() as u32);
            let check = Integer::from(&n * ctx.n_prime()) + 1u32;
            assert!(check.is_divisible_2pow(64), "n n' = -1 mod 2^64");
            assert_eq!(*ctx.r_squared(), Integer::from(&r * &r) % &n);
            let x = Integer::from(&n - 5u32);
            assert_eq!(ctx.from_montgomery(&ctx.to_montgomery(&x)), x);
        }
    }

    #[test]
    fn rejects_bad_moduli() {
        assert!(MontContext::new(&Integer::from(1)).is_err());
        assert!(MontContext::new(&Integer::from(100)).is_err());
        assert!(MontContext::new(&Integer::from(-7)).is_err());
        let big = (Integer::from(1) << MAX_BITS) + 1u32;
        assert!(MontContext::new(&big).is_err());
        let ctx = MontContext::new(&Integer::from(97)).unwrap();
        let mut wrong = vec![0u64; ctx.limbs() + 1];
        assert!(ctx
            .square_in_place(&mut wrong, 1, Kernel::Portable)
            .is_err());
        let mut unreduced = vec![97u64; ctx.limbs()];
        assert!(ctx
            .square_in_place(&mut unreduced, 1, Kernel::Portable)
            .is_err());
    }

    #[test]
    fn kernel_choice_follows_size_and_cpu() {
        let ctx = MontContext::new(&modulus(2048, 3)).unwrap();
        if ctx.supports(Kernel::X86Ifma) {
            assert_eq!(ctx.kernel(), Kernel::X86Ifma);
        } else if adx_available() {
            assert_eq!(ctx.kernel(), Kernel::X86Adx);
            assert_eq!(ctx.limbs(), 32);
        } else {
            assert_eq!(ctx.kernel(), Kernel::Portable);
        }
        // Below IFMA_MIN_BITS the MULX kernel stays the choice.
        let ctx = MontContext::new(&modulus(512, 3)).unwrap();
        if adx_available() {
            assert_eq!(ctx.kernel(), Kernel::X86Adx);
        }
        // Above 4096 bits only the portable kernel exists.
        let ctx = MontContext::new(&modulus(6000, 3)).unwrap();
        assert_eq!(ctx.kernel(), Kernel::Portable);
        assert!(!ctx.supports(Kernel::X86Adx));
        // Padding: a 1000-bit modulus uses the 16-limb kernel when it exists.
        let ctx = MontContext::new(&modulus(1000, 3)).unwrap();
        if adx_available() {
            assert_eq!(ctx.limbs(), 16);
        }
        let ctx = MontContext::new_portable(&modulus(1000, 3)).unwrap();
        assert_eq!((ctx.limbs(), ctx.kernel()), (16, Kernel::Portable));
    }

    /// The oracle: GMP's `powm` with exponent `2^k`.
    fn gmp_square_k_times(x: &Integer, k: u64, n: &Integer) -> Integer {
        let e = Integer::from(1) << u32::try_from(k).unwrap();
        x.clone().pow_mod(&e, n).unwrap()
    }

    #[test]
    fn both_kernels_match_gmp_on_small_cases() {
        for bits in [512u32, 960, 1024, 1536, 2048, 2500, 3072, 4096] {
            let n = modulus(bits, u64::from(bits));
            let ctx = MontContext::new(&n).unwrap();
            let x = Integer::from(&n - 12345u32);
            for k in [0u64, 1, 2, 3, 17] {
                let want = gmp_square_k_times(&x, k, &n);
                assert_eq!(
                    ctx.square_k_times_with(&x, k, Kernel::Portable).unwrap(),
                    want,
                    "portable, {bits} bits, k = {k}"
                );
                if ctx.supports(Kernel::X86Adx) {
                    assert_eq!(
                        ctx.square_k_times_with(&x, k, Kernel::X86Adx).unwrap(),
                        want,
                        "adx, {bits} bits, k = {k}"
                    );
                }
            }
        }
    }

    #[test]
    fn lazy_portable_mode_is_used_and_correct() {
        // A 2000-bit modulus in 32 limbs leaves room: 4n < R.
        let n = modulus(2000, 11);
        let ctx = MontContext::new_portable(&n).unwrap();
        assert!(ctx.lazy);
        let x = Integer::from(&n - 1u32);
        assert_eq!(
            ctx.square_k_times_with(&x, 300, Kernel::Portable).unwrap(),
            gmp_square_k_times(&x, 300, &n)
        );
        let full = MontContext::new_portable(&modulus(2048, 11)).unwrap();
        assert!(!full.lazy);
    }
}
