//! Why TLS could not be set up.

/// A step of making a cluster's TLS identities.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CertStep {
    /// Generating a key.
    GenerateKey,
    /// Setting the certificate's parameters.
    Parameters,
    /// Signing the certificate.
    Sign,
}

impl std::fmt::Display for CertStep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            CertStep::GenerateKey => "generating a key",
            CertStep::Parameters => "certificate parameters",
            CertStep::Sign => "signing a certificate",
        })
    }
}

/// Why TLS could not be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TlsError {
    /// Making a party's key or certificate failed.
    #[error("{step}: {source}")]
    Certificate {
        /// The step.
        step: CertStep,
        /// Why.
        #[source]
        source: rcgen::Error,
    },
    /// The TLS configuration could not be built.
    #[error("{0}")]
    Setup(#[source] rustls::Error),
    /// The network thread stopped during setup.
    #[error("the network thread stopped during setup")]
    ThreadStopped,
    /// A party key that can sign with none of the TLS 1.3 signature schemes.
    #[error(
        "the party key signs with none of the TLS 1.3 signature schemes (ECDSA, Ed25519, RSA-PSS)"
    )]
    NoSigningScheme,
    /// Signing the transcript with the party key failed.
    #[error("signing the transcript: {0}")]
    Sign(#[source] rustls::Error),
}

impl TlsError {
    /// Whether this is a negative verdict (exit status 1) rather than an error (2): never: TLS that
    /// cannot be set up is an error of the keys, the certificates or the machine.
    pub fn is_verdict(&self) -> bool {
        false
    }
}
