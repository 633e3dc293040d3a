//! Keys in certificates: RSA SubjectPublicKeyInfo, key identifiers, serial numbers.

use der::asn1::{BitString, UintRef};
use der::{Decode, Encode};
use hourglass_arith::entropy::EntropySource;
use hourglass_arith::Integer;
use rug::integer::Order;
use sha1::{Digest, Sha1};
use spki::{AlgorithmIdentifierOwned, SubjectPublicKeyInfoOwned};
use x509_cert::serial_number::SerialNumber;

use crate::certificate::null;
use crate::error::{encoding, malformed, EncodedItem, Malformation, Result};
use crate::oid::RSA_ENCRYPTION;

/// Largest modulus accepted in a certificate, in bytes (a 32768-bit modulus).
const MAX_MODULUS_BYTES: usize = 4096;

/// The unsigned big-endian bytes of a non-negative integer.
pub fn be_bytes(x: &Integer) -> Vec<u8> {
    x.to_digits::<u8>(Order::Msf)
}

/// `SubjectPublicKeyInfo` for an `rsaEncryption` key `(n, e)`.
pub fn rsa_spki(n: &Integer, e: &Integer) -> Result<SubjectPublicKeyInfoOwned> {
    let (n, e) = (be_bytes(n), be_bytes(e));
    let inner = pkcs1::RsaPublicKey {
        modulus: UintRef::new(&n).map_err(encoding(EncodedItem::Modulus))?,
        public_exponent: UintRef::new(&e).map_err(encoding(EncodedItem::Exponent))?,
    }
    .to_der()
    .map_err(encoding(EncodedItem::RsaPublicKey))?;
    Ok(SubjectPublicKeyInfoOwned {
        algorithm: AlgorithmIdentifierOwned {
            oid: RSA_ENCRYPTION,
            parameters: Some(null()),
        },
        subject_public_key: BitString::from_bytes(&inner)
            .map_err(encoding(EncodedItem::PublicKey))?,
    })
}

/// `(n, e)` from an `rsaEncryption` SubjectPublicKeyInfo, with size limits.
pub fn rsa_components(spki: &SubjectPublicKeyInfoOwned) -> Result<(Integer, Integer)> {
    if spki.algorithm.oid != RSA_ENCRYPTION {
        return Err(malformed(Malformation::NotRsa {
            oid: spki.algorithm.oid,
        }));
    }
    let bits = spki
        .subject_public_key
        .as_bytes()
        .ok_or(malformed(Malformation::UnusedBits))?;
    rsa_public_key(bits)
}

/// `(n, e)` from the DER of an `RSAPublicKey` (PKCS#1), with size limits.
pub fn rsa_public_key(der: &[u8]) -> Result<(Integer, Integer)> {
    let key =
        pkcs1::RsaPublicKey::from_der(der).map_err(|e| malformed(Malformation::RsaPublicKey(e)))?;
    let (n, e) = (key.modulus.as_bytes(), key.public_exponent.as_bytes());
    if n.len() > MAX_MODULUS_BYTES || e.len() > 2 * MAX_MODULUS_BYTES + 16 {
        return Err(malformed(Malformation::IntegerTooLarge {
            max: MAX_MODULUS_BYTES,
        }));
    }
    Ok((
        Integer::from_digits(n, Order::Msf),
        Integer::from_digits(e, Order::Msf),
    ))
}

/// RFC 5280 key identifier (method 1): SHA-1 of the subjectPublicKey bits.
pub fn key_identifier(spki: &SubjectPublicKeyInfoOwned) -> Vec<u8> {
    Sha1::digest(spki.subject_public_key.raw_bytes()).to_vec()
}

/// A random positive 128-bit serial number: 16 bytes, the first in `0x40..=0x7f`, so the DER
/// INTEGER is always exactly 16 bytes long.
pub fn random_serial(rng: &mut dyn EntropySource) -> Result<SerialNumber> {
    let mut bytes = [0u8; 16];
    rng.fill(&mut bytes).map_err(hourglass_rsa::Error::from)?;
    bytes[0] = (bytes[0] & 0x3f) | 0x40;
    SerialNumber::new(&bytes).map_err(encoding(EncodedItem::SerialNumber))
}
