//! `hourglass.rsa`: RSA keys and their operations.

use hourglass_arith::entropy::OsEntropy;
use hourglass_rsa::encoding::{
    decode_key_with_passphrase, encode_private_key, encode_private_key_encrypted,
    encode_public_key, KeyFormat,
};
use hourglass_rsa::padding::{Oaep, Pkcs1v15Sign, Pss};
use hourglass_rsa::{KeyGenOptions, Variant};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use zeroize::Zeroizing;

use crate::common::{entropy, err, hash_alg, int_to};

/// An RSA private key of any variant.
#[pyclass(module = "hourglass._native", frozen)]
struct PrivateKey(pub(crate) hourglass_rsa::PrivateKey);

/// An RSA public key.
#[pyclass(module = "hourglass._native", frozen)]
pub(crate) struct PublicKey(pub(crate) hourglass_rsa::PublicKey);

#[pymethods]
impl PrivateKey {
    /// Generates a key: `variant` is standard, crt, rebalanced, scheme-a or scheme-b.
    #[staticmethod]
    #[pyo3(signature = (bits, variant, seed=None))]
    fn generate(py: Python<'_>, bits: u32, variant: &str, seed: Option<&[u8]>) -> PyResult<Self> {
        let variant = Variant::from_name(variant)
            .ok_or_else(|| err(format!("unknown variant {variant:?}")))?;
        let options = KeyGenOptions::new(bits, variant);
        let mut rng = entropy(seed);
        py.allow_threads(|| options.generate(&mut *rng))
            .map(Self)
            .map_err(err)
    }

    /// Reads a key file's bytes (PEM, DER, hex or JSON; encrypted PKCS#8 with `passphrase`).
    #[staticmethod]
    #[pyo3(signature = (data, passphrase=None))]
    pub(crate) fn load(data: &[u8], passphrase: Option<&[u8]>) -> PyResult<Self> {
        match decode_key_with_passphrase(data, passphrase.unwrap_or_default()).map_err(err)? {
            Ok(key) => Ok(Self(key)),
            Err(_) => Err(err("this is a public key; a private key is needed")),
        }
    }

    /// PKCS#8 PEM, encrypted (PBES2, PBKDF2-HMAC-SHA-256, AES-256-CBC) with a passphrase.
    #[pyo3(signature = (passphrase=None))]
    fn to_pem(&self, py: Python<'_>, passphrase: Option<&[u8]>) -> PyResult<Py<PyBytes>> {
        let pem = match passphrase {
            Some(p) => encode_private_key_encrypted(&self.0, p, &mut OsEntropy),
            None => encode_private_key(&self.0, KeyFormat::Pem),
        }
        .map_err(err)?;
        Ok(PyBytes::new(py, &pem).unbind())
    }

    /// The public half.
    fn public_key(&self) -> PublicKey {
        PublicKey(self.0.public().clone())
    }

    /// OAEP decryption (constant-time, blinded, fault-checked).
    #[pyo3(signature = (ciphertext, hash="sha256", label=None))]
    fn decrypt_oaep(
        &self,
        py: Python<'_>,
        ciphertext: &[u8],
        hash: &str,
        label: Option<&[u8]>,
    ) -> PyResult<Py<PyBytes>> {
        let oaep = Oaep::new(hash_alg(hash)?).label(label.unwrap_or_default());
        let msg = Zeroizing::new(
            oaep.decrypt(&self.0, ciphertext, &mut OsEntropy)
                .map_err(err)?,
        );
        Ok(PyBytes::new(py, &msg).unbind())
    }

    /// A PSS signature of `message` (salt as long as the hash).
    #[pyo3(signature = (message, hash="sha256"))]
    fn sign_pss(&self, py: Python<'_>, message: &[u8], hash: &str) -> PyResult<Py<PyBytes>> {
        let hash = hash_alg(hash)?;
        let sig = Pss::new(hash)
            .sign_digest(&self.0, &hash.digest(message), &mut OsEntropy)
            .map_err(err)?;
        Ok(PyBytes::new(py, &sig).unbind())
    }

    /// A PKCS#1 v1.5 signature of `message`.
    #[pyo3(signature = (message, hash="sha256"))]
    fn sign_pkcs1v15(&self, py: Python<'_>, message: &[u8], hash: &str) -> PyResult<Py<PyBytes>> {
        let hash = hash_alg(hash)?;
        let sig = Pkcs1v15Sign::new(hash)
            .sign_digest(&self.0, &hash.digest(message), &mut OsEntropy)
            .map_err(err)?;
        Ok(PyBytes::new(py, &sig).unbind())
    }

    /// The key's shape and safety, as JSON (what `hourglass rsa inspect --json` prints).
    fn inspect(&self) -> PyResult<String> {
        serde_json::to_string(&hourglass_rsa::inspect::inspect_private(&self.0)).map_err(err)
    }

    /// Modulus size in bits.
    #[getter]
    fn bits(&self) -> u32 {
        self.0.public().bits()
    }

    fn __repr__(&self) -> String {
        format!("PrivateKey({} bits)", self.0.public().bits())
    }
}

#[pymethods]
impl PublicKey {
    /// Reads a key file's bytes (a private key file gives its public half).
    #[staticmethod]
    #[pyo3(signature = (data, passphrase=None))]
    pub(crate) fn load(data: &[u8], passphrase: Option<&[u8]>) -> PyResult<Self> {
        Ok(
            match decode_key_with_passphrase(data, passphrase.unwrap_or_default()).map_err(err)? {
                Ok(key) => Self(key.public().clone()),
                Err(public) => Self(public),
            },
        )
    }

    /// SubjectPublicKeyInfo PEM.
    fn to_pem(&self, py: Python<'_>) -> PyResult<Py<PyBytes>> {
        let pem = encode_public_key(&self.0, KeyFormat::Pem).map_err(err)?;
        Ok(PyBytes::new(py, &pem).unbind())
    }

    /// OAEP encryption.
    #[pyo3(signature = (message, hash="sha256", label=None))]
    fn encrypt_oaep(
        &self,
        py: Python<'_>,
        message: &[u8],
        hash: &str,
        label: Option<&[u8]>,
    ) -> PyResult<Py<PyBytes>> {
        let oaep = Oaep::new(hash_alg(hash)?).label(label.unwrap_or_default());
        let ct = oaep
            .encrypt(&self.0, message, &mut OsEntropy)
            .map_err(err)?;
        Ok(PyBytes::new(py, &ct).unbind())
    }

    /// Whether `signature` is a valid PSS signature of `message` (any salt length).
    #[pyo3(signature = (message, signature, hash="sha256"))]
    fn verify_pss(&self, message: &[u8], signature: &[u8], hash: &str) -> PyResult<bool> {
        let hash = hash_alg(hash)?;
        verdict(Pss::new(hash).verify_digest(&self.0, &hash.digest(message), signature))
    }

    /// Whether `signature` is a valid PKCS#1 v1.5 signature of `message`.
    #[pyo3(signature = (message, signature, hash="sha256"))]
    fn verify_pkcs1v15(&self, message: &[u8], signature: &[u8], hash: &str) -> PyResult<bool> {
        let hash = hash_alg(hash)?;
        verdict(Pkcs1v15Sign::new(hash).verify_digest(&self.0, &hash.digest(message), signature))
    }

    /// The key's shape and safety, as JSON.
    fn inspect(&self) -> PyResult<String> {
        serde_json::to_string(&hourglass_rsa::inspect::inspect_public(&self.0)).map_err(err)
    }

    /// The modulus `n` as big-endian bytes.
    #[getter]
    fn n(&self, py: Python<'_>) -> Py<PyBytes> {
        PyBytes::new(py, &int_to(self.0.n())).unbind()
    }

    /// The public exponent `e` as big-endian bytes.
    #[getter]
    fn e(&self, py: Python<'_>) -> Py<PyBytes> {
        PyBytes::new(py, &int_to(self.0.e())).unbind()
    }

    /// Modulus size in bits.
    #[getter]
    fn bits(&self) -> u32 {
        self.0.bits()
    }

    fn __repr__(&self) -> String {
        format!("PublicKey({} bits)", self.0.bits())
    }
}

/// A verification's result: `false` for an invalid signature, an exception for anything else.
pub(crate) fn verdict(result: hourglass_rsa::Result<()>) -> PyResult<bool> {
    match result {
        Ok(()) => Ok(true),
        Err(hourglass_rsa::Error::Verification | hourglass_rsa::Error::InputOutOfRange { .. }) => {
            Ok(false)
        }
        Err(e) => Err(err(e)),
    }
}

/// Adds this module's functions and classes to `hourglass._native`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PrivateKey>()?;
    m.add_class::<PublicKey>()?;
    Ok(())
}
