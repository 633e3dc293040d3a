//! OpenSSL, timed in the same process as the comparison baseline.
//!
//! This is a benchmark baseline only: hourglass's arithmetic is GMP; OpenSSL is linked here so
//! that its figures come from the same machine, the same run and the same keys.

use hourglass_rsa::PrivateKey;
use openssl::bn::BigNum;
use openssl::rsa::{Padding, Rsa};
use rug::integer::Order;

use crate::cli_error::CliError;

fn ossl(e: openssl::error::ErrorStack) -> CliError {
    CliError::new(format!("OpenSSL: {e}"))
}

fn bn(x: &rug::Integer) -> Result<BigNum, CliError> {
    BigNum::from_slice(&x.to_digits::<u8>(Order::Msf)).map_err(ossl)
}

/// The linked OpenSSL's version string.
pub fn version() -> &'static str {
    openssl::version::version()
}

/// Times `count` OpenSSL key generations (`RSA_generate_key_ex`, what `openssl genrsa` runs),
/// in milliseconds.
pub fn keygen_ms(bits: u32, count: usize) -> Result<Vec<f64>, CliError> {
    let mut out = Vec::with_capacity(count);
    for _ in 0..count {
        let t = std::time::Instant::now();
        let k = Rsa::generate(bits).map_err(ossl)?;
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
    pub fn import(key: &PrivateKey) -> Result<Self, CliError> {
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
        )
        .map_err(ossl)?;
        Ok(Self {
            rsa,
            size: key.size(),
        })
    }

    /// One raw private operation (`RSA_private_decrypt` with no padding: OpenSSL's CRT,
    /// blinding and its check of the result).
    pub fn private_op(&self, input: &[u8]) -> Result<(), CliError> {
        let mut out = vec![0u8; self.size];
        self.rsa
            .private_decrypt(input, &mut out, Padding::NONE)
            .map_err(ossl)?;
        Ok(())
    }

    /// One raw public operation.
    pub fn public_op(&self, input: &[u8]) -> Result<(), CliError> {
        let mut out = vec![0u8; self.size];
        self.rsa
            .public_encrypt(input, &mut out, Padding::NONE)
            .map_err(ossl)?;
        Ok(())
    }
}
