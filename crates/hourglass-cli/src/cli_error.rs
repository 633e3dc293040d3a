//! Command-line errors: what went wrong, and what to do next.

use hourglass_rsa::Error as RsaError;

/// An error to show the user: `hourglass: error: ...` then `hourglass: hint: ...`.
#[derive(Debug)]
pub struct CliError {
    /// What went wrong.
    pub message: String,
    /// What to do about it.
    pub hint: Option<String>,
    /// Process exit status (1 for failures, 2 for bad usage).
    pub code: u8,
}

impl CliError {
    /// A failure with exit status 1.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            hint: None,
            code: 1,
        }
    }

    /// Adds a hint.
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// A usage error (exit status 2).
    pub fn usage(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            hint: None,
            code: 2,
        }
    }

    /// Prefixes the message with context (`reading key.pem: ...`).
    pub fn context(mut self, context: impl std::fmt::Display) -> Self {
        self.message = format!("{context}: {}", self.message);
        self
    }

    /// Prints to standard error.
    pub fn print(&self) {
        eprintln!("hourglass: error: {}", self.message);
        if let Some(hint) = &self.hint {
            eprintln!("hourglass: hint: {hint}");
        }
    }
}

impl From<RsaError> for CliError {
    fn from(e: RsaError) -> Self {
        // Keep the arithmetic core's hints (e.g. "the entropy file ran out").
        if let RsaError::Arith(inner) = e {
            return CliError::from(inner);
        }
        let message = e.to_string();
        let err = CliError::new(message);
        match e {
            RsaError::Insecure(_) => err.hint("these sizes are broken by published attacks; pass --allow-insecure only to reproduce papers or for tests"),
            RsaError::Parse(_) => err.hint("keys can be PEM (PKCS#8 or PKCS#1), DER, hourglass hex or JSON; see docs/FORMATS.md"),
            RsaError::InvalidKey(_) => err.hint("the key file is inconsistent (edited or corrupted); regenerate it or check it with `openssl pkey -check`"),
            RsaError::Decryption => err.hint("wrong key, corrupted ciphertext, or a different --hash/--label than at encryption"),
            RsaError::Verification => err.hint("the file, the signature or the key differs from what was signed (or the padding/--hash differs)"),
            RsaError::MessageTooLong { .. } => err.hint("RSA encrypts short secrets (such as a symmetric key); encrypt large files with a symmetric cipher"),
            RsaError::InputOutOfRange { .. } => err.hint("the input must be exactly as long as the modulus and smaller than it: is it for this key?"),
            RsaError::FaultDetected => err.hint("a computation fault was detected (hardware error or attack); the result was withheld. Try again; if it repeats, check the machine"),
            _ => err,
        }
    }
}

impl From<hourglass_arith::Error> for CliError {
    fn from(e: hourglass_arith::Error) -> Self {
        let hint = match &e {
            hourglass_arith::Error::EntropyExhausted { .. } => {
                Some("the entropy file ran out: supply a larger file or a device (e.g. /dev/hwrng); hourglass never falls back to another source")
            }
            _ => None,
        };
        let err = CliError::new(e.to_string());
        match hint {
            Some(h) => err.hint(h),
            None => err,
        }
    }
}
