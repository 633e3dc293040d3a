//! OpenSSL, timed in the same process as the comparison baseline.
//!
//! This is a benchmark baseline only: hourglass's arithmetic is GMP; OpenSSL is linked here so
//! that its figures come from the same machine, the same run and the same keys.

use hourglass_rsa::PrivateKey;
use openssl::bn::BigNum;
use openssl::rsa::{Padding, Rsa};
use rug::integer::Order;

use crate::{Error, Result};

fn bn(x: &rug::Integer) -> Result<BigNum> {
    Ok(BigNum::from_slice(&x.to_digits::<u8>(Order::Msf))?)
}

/// The linked OpenSSL's version string.
pub fn version() -> &'static str {
    openssl::version::version()
}

/// Times `count` OpenSSL key generations (`RSA_generate_key_ex`, what `openssl genrsa` runs),
/// in milliseconds.
pub fn keygen_ms(bits: u32, count: usize) -> Result<Vec<f64>> {
    let mut out = Vec::with_capacity(count);
    for _ in 0..count {
        let t = std::time::Instant::now();
        let k = Rsa::generate(bits)?;
        out.push(t.elapsed().as_secs_f64() * 1e3);
        drop(k);
    }
    Ok(out)
}

/// An OpenSSL copy of one of our keys.
pub struct OpensslKey {
    rsa: Rsa<openssl::pkey::Private>,
    size: usize,
}

impl OpensslKey {
    /// Imports our key (all CRT fields) into OpenSSL.
    pub fn import(key: &PrivateKey) -> Result<Self> {
        let p = key.public();
        let [d, pp, q, dp, dq, qinv] = key.secret_components();
        let rsa = Rsa::from_private_components(
            bn(p.n())?,
            bn(p.e())?,
            bn(d.expose())?,
            bn(pp.expose())?,
            bn(q.expose())?,
            bn(dp.expose())?,
            bn(dq.expose())?,
            bn(qinv.expose())?,
        )?;
        Ok(Self {
            rsa,
            size: key.size(),
        })
    }

    /// One raw private operation (`RSA_private_decrypt` with no padding: OpenSSL's CRT,
    /// blinding and its check of the result).
    pub fn private_op(&self, input: &[u8]) -> Result<()> {
        let mut out = vec![0u8; self.size];
        self.rsa.private_decrypt(input, &mut out, Padding::NONE)?;
        Ok(())
    }

    /// One raw public operation.
    pub fn public_op(&self, input: &[u8]) -> Result<()> {
        let mut out = vec![0u8; self.size];
        self.rsa.public_encrypt(input, &mut out, Padding::NONE)?;
        Ok(())
    }
}

/// OpenSSL's `BN_mod_mul_montgomery`, which its `bn` API does not wrap.
mod mont_ffi {
    use std::os::raw::c_int;

    /// Opaque `BN_MONT_CTX`.
    #[repr(C)]
    pub struct BnMontCtx {
        _private: [u8; 0],
    }

    extern "C" {
        pub fn BN_MONT_CTX_new() -> *mut BnMontCtx;
        pub fn BN_MONT_CTX_free(mont: *mut BnMontCtx);
        pub fn BN_MONT_CTX_set(
            mont: *mut BnMontCtx,
            m: *const openssl_sys::BIGNUM,
            ctx: *mut openssl_sys::BN_CTX,
        ) -> c_int;
        pub fn BN_to_montgomery(
            r: *mut openssl_sys::BIGNUM,
            a: *const openssl_sys::BIGNUM,
            mont: *mut BnMontCtx,
            ctx: *mut openssl_sys::BN_CTX,
        ) -> c_int;
        pub fn BN_from_montgomery(
            r: *mut openssl_sys::BIGNUM,
            a: *const openssl_sys::BIGNUM,
            mont: *mut BnMontCtx,
            ctx: *mut openssl_sys::BN_CTX,
        ) -> c_int;
        pub fn BN_mod_mul_montgomery(
            r: *mut openssl_sys::BIGNUM,
            a: *const openssl_sys::BIGNUM,
            b: *const openssl_sys::BIGNUM,
            mont: *mut BnMontCtx,
            ctx: *mut openssl_sys::BN_CTX,
        ) -> c_int;
    }
}

/// `x^(2^k) mod n` by `k` calls of OpenSSL's `BN_mod_mul_montgomery` (a squaring loop in the
/// Montgomery domain), returning the result and the seconds the loop took.
pub fn montgomery_squarings(
    n: &rug::Integer,
    x: &rug::Integer,
    k: u64,
) -> Result<(rug::Integer, f64)> {
    use foreign_types::ForeignType;
    use openssl::bn::BigNumContext;
    let fail = || Error::OpensslMontgomery;
    let nb = bn(n)?;
    let xb = bn(x)?;
    let ctx = BigNumContext::new()?;
    let mut a = BigNum::new()?;
    let mut b = BigNum::new()?;
    // SAFETY: every pointer comes from a live openssl object owned here (or the context made
    // and freed here); OpenSSL functions only read/write those objects for the call's duration.
    unsafe {
        let mont = mont_ffi::BN_MONT_CTX_new();
        if mont.is_null() {
            return Err(fail());
        }
        let ok = mont_ffi::BN_MONT_CTX_set(mont, nb.as_ptr(), ctx.as_ptr()) == 1
            && mont_ffi::BN_to_montgomery(a.as_ptr(), xb.as_ptr(), mont, ctx.as_ptr()) == 1;
        if !ok {
            mont_ffi::BN_MONT_CTX_free(mont);
            return Err(fail());
        }
        // One squaring `r = a^2` in the Montgomery domain; true on success.
        let square = |r: &BigNum, a: &BigNum| {
            mont_ffi::BN_mod_mul_montgomery(r.as_ptr(), a.as_ptr(), a.as_ptr(), mont, ctx.as_ptr())
                == 1
        };
        let start = std::time::Instant::now();
        let mut good = true;
        for _ in 0..k / 2 {
            good &= square(&b, &a);
            good &= square(&a, &b);
        }
        if k % 2 == 1 {
            good &= square(&b, &a);
            std::mem::swap(&mut a, &mut b);
        }
        let secs = start.elapsed().as_secs_f64();
        good &= mont_ffi::BN_from_montgomery(b.as_ptr(), a.as_ptr(), mont, ctx.as_ptr()) == 1;
        mont_ffi::BN_MONT_CTX_free(mont);
        if !good {
            return Err(fail());
        }
        let result = rug::Integer::from_digits(&b.to_vec(), Order::Msf);
        Ok((result, secs))
    }
}
