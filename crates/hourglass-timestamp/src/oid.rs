//! The object identifiers of RFC 3161, CMS and the signature algorithms authorities use.

use der::oid::ObjectIdentifier;

const fn oid(s: &str) -> ObjectIdentifier {
    ObjectIdentifier::new_unwrap(s)
}

/// SHA-256.
pub const ID_SHA256: ObjectIdentifier = oid("2.16.840.1.101.3.4.2.1");
/// SHA-384.
pub const ID_SHA384: ObjectIdentifier = oid("2.16.840.1.101.3.4.2.2");
/// SHA-512.
pub const ID_SHA512: ObjectIdentifier = oid("2.16.840.1.101.3.4.2.3");
/// SHA-1 (named to be refused).
pub const ID_SHA1: ObjectIdentifier = oid("1.3.14.3.2.26");
/// MD5 (named to be refused).
pub const ID_MD5: ObjectIdentifier = oid("1.2.840.113549.2.5");
/// `id-signedData` (RFC 5652).
pub const ID_SIGNED_DATA: ObjectIdentifier = oid("1.2.840.113549.1.7.2");
/// `id-ct-TSTInfo` (RFC 3161).
pub const ID_CT_TST_INFO: ObjectIdentifier = oid("1.2.840.113549.1.9.16.1.4");
/// `id-contentType` (RFC 5652).
pub const ID_CONTENT_TYPE: ObjectIdentifier = oid("1.2.840.113549.1.9.3");
/// `id-messageDigest` (RFC 5652).
pub const ID_MESSAGE_DIGEST: ObjectIdentifier = oid("1.2.840.113549.1.9.4");
/// `id-aa-signingCertificate` (RFC 2634).
pub const ID_SIGNING_CERTIFICATE: ObjectIdentifier = oid("1.2.840.113549.1.9.16.2.12");
/// `id-aa-signingCertificateV2` (RFC 5035).
pub const ID_SIGNING_CERTIFICATE_V2: ObjectIdentifier = oid("1.2.840.113549.1.9.16.2.47");
/// `rsaEncryption` (a key, or PKCS#1 v1.5 with the digest algorithm's hash).
pub const RSA_ENCRYPTION: ObjectIdentifier = oid("1.2.840.113549.1.1.1");
/// `sha256WithRSAEncryption`.
pub const SHA256_WITH_RSA: ObjectIdentifier = oid("1.2.840.113549.1.1.11");
/// `sha384WithRSAEncryption`.
pub const SHA384_WITH_RSA: ObjectIdentifier = oid("1.2.840.113549.1.1.12");
/// `sha512WithRSAEncryption`.
pub const SHA512_WITH_RSA: ObjectIdentifier = oid("1.2.840.113549.1.1.13");
/// `id-RSASSA-PSS` (RFC 4055, RFC 4056).
pub const ID_RSASSA_PSS: ObjectIdentifier = oid("1.2.840.113549.1.1.10");
/// `id-mgf1` (RFC 4055).
pub const ID_MGF1: ObjectIdentifier = oid("1.2.840.113549.1.1.8");
/// `id-ecPublicKey` (RFC 5480).
pub const ID_EC_PUBLIC_KEY: ObjectIdentifier = oid("1.2.840.10045.2.1");
/// `ecdsa-with-SHA256` (RFC 5758).
pub const ECDSA_WITH_SHA256: ObjectIdentifier = oid("1.2.840.10045.4.3.2");
/// `ecdsa-with-SHA384`.
pub const ECDSA_WITH_SHA384: ObjectIdentifier = oid("1.2.840.10045.4.3.3");
/// `ecdsa-with-SHA512`.
pub const ECDSA_WITH_SHA512: ObjectIdentifier = oid("1.2.840.10045.4.3.4");
/// `secp256r1` (P-256).
pub const SECP256R1: ObjectIdentifier = oid("1.2.840.10045.3.1.7");
/// `secp384r1` (P-384).
pub const SECP384R1: ObjectIdentifier = oid("1.3.132.0.34");
/// `secp521r1` (P-521).
pub const SECP521R1: ObjectIdentifier = oid("1.3.132.0.35");
/// `id-Ed25519` (RFC 8410).
pub const ID_ED25519: ObjectIdentifier = oid("1.3.101.112");
/// `id-kp-timeStamping` (RFC 3161 section 2.3).
pub const KP_TIME_STAMPING: ObjectIdentifier = oid("1.3.6.1.5.5.7.3.8");
/// `anyExtendedKeyUsage` (RFC 5280 section 4.2.1.12).
pub const ANY_EXTENDED_KEY_USAGE: ObjectIdentifier = oid("2.5.29.37.0");
