//! The names hourglass's key files carry.

/// The JSON `type` of a private key file.
pub(crate) const PRIVATE_TYPE: &str = "hourglass-rsa-private-key";
/// The JSON `type` of a public key file.
pub(crate) const PUBLIC_TYPE: &str = "hourglass-rsa-public-key";
