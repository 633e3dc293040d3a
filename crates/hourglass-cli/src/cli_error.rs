//! Command-line errors: what went wrong, and what to do next.

use hourglass_rsa::Error as RsaError;

/// Exit status of an error: bad usage, an unreadable file, malformed input, a failed
/// computation.
pub const EXIT_ERROR: u8 = 2;
/// Exit status of a negative verdict: an invalid signature, bundle, proof, solution or
/// certificate.
pub const EXIT_INVALID: u8 = 1;

/// What every command's `--help` says about exit codes.
pub const EXIT_CODES_HELP: &str = "Exit status: 0 success or valid, 1 a negative verdict (invalid signature, bundle, proof, solution or certificate), 2 an error (bad usage, unreadable file, malformed input).";

/// An error to show the user: `hourglass: error: ...` then `hourglass: hint: ...`.
#[derive(Debug)]
pub struct CliError {
    /// What went wrong.
    pub message: String,
    /// What to do about it.
    pub hint: Option<String>,
    /// Process exit status: [`EXIT_ERROR`] or [`EXIT_INVALID`].
    pub code: u8,
}

impl CliError {
    /// An error (exit status 2).
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            hint: None,
            code: EXIT_ERROR,
        }
    }

    /// A negative verdict (exit status 1): the input is well formed and was checked, and it is
    /// not valid.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            hint: None,
            code: EXIT_INVALID,
        }
    }

    /// Adds a hint.
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// Prefixes the message with context (`reading key.pem: ...`).
    pub fn context(mut self, context: impl std::fmt::Display) -> Self {
        self.message = format!("{context}: {}", self.message);
        self
    }

    /// Prints to standard error: `hourglass: error: ...` for an error; a negative verdict's
    /// message (which says what is invalid) without the `error:` label.
    pub fn print(&self) {
        if self.code == EXIT_INVALID {
            eprintln!("hourglass: {}", self.message);
        } else {
            eprintln!("hourglass: error: {}", self.message);
        }
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
        let err = match e {
            RsaError::Verification => CliError::invalid("invalid signature"),
            _ => CliError::new(message),
        };
        match e {
            RsaError::Insecure(_) => err.hint("these sizes are broken by published attacks; pass --allow-insecure only to reproduce papers or for tests"),
            RsaError::Parse(_) => err.hint("keys can be PEM (PKCS#8 or PKCS#1), DER, hourglass hex or JSON; see docs/FORMATS.md"),
            RsaError::InvalidKey(_) => err.hint("the key file is inconsistent (edited or corrupted); regenerate it or check it with `openssl pkey -check`"),
            RsaError::Decryption => err.hint("wrong key, corrupted ciphertext, or a different --hash/--label than at encryption"),
            RsaError::Verification => err.hint("the file, the signature or the key differs from what was signed (or the padding/--hash differs)"),
            RsaError::MessageTooLong { .. } => err.hint("RSA encrypts short secrets (such as a symmetric key); encrypt large files with a symmetric cipher"),
            RsaError::InputOutOfRange { .. } => err.hint("the input must be exactly as long as the modulus and smaller than it: is it for this key?"),
            RsaError::PassphraseRequired => err.hint("pass --passphrase-file FILE, or run on a terminal to be asked"),
            RsaError::WrongPassphrase => err.hint("the passphrase is the first line of --passphrase-file (or what you type at the prompt); passphrases are case-sensitive"),
            RsaError::UnsupportedEncryption(_) => err.hint("hourglass reads PBES2 keys (PBKDF2 or scrypt with AES-CBC): re-encrypt with `openssl pkey -aes256`"),
            RsaError::FaultDetected => err.hint("a computation fault was detected (hardware error or attack); the result was withheld. Try again; if it repeats, check the machine"),
            _ => err,
        }
    }
}

impl From<hourglass_bench::Error> for CliError {
    fn from(e: hourglass_bench::Error) -> Self {
        match e {
            hourglass_bench::Error::Arith(inner) => inner.into(),
            hourglass_bench::Error::Rsa(inner) => inner.into(),
            other => {
                let err = CliError::new(other.to_string());
                match other.hint() {
                    Some(h) => err.hint(h),
                    None => err,
                }
            }
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

impl From<hourglass_vdf::Error> for CliError {
    fn from(e: hourglass_vdf::Error) -> Self {
        use hourglass_vdf::{Error, InputError, ParamError};
        if let Error::Arith(inner) = e {
            return inner.into();
        }
        let hint = match &e {
            Error::InvalidModulus(_) => Some(
                "a VDF needs an RSA modulus of at least 1024 bits whose factors nobody knows",
            ),
            Error::Format(_) => Some("see docs/FORMATS.md, section 15, for the proof format"),
            Error::InvalidInput(InputError::TooLong { .. }) => Some(
                "VDF inputs are seeds and challenges: pass a digest of a large file, e.g. --input $(sha256sum FILE | cut -c1-64)",
            ),
            Error::InvalidParameters(ParamError::SecurityLevel { .. }) => {
                Some("pass --security 128 or --security 256")
            }
            Error::PowersFile { .. } => Some(
                "the powers file sits beside the checkpoint: check that its directory is writable and has free space",
            ),
            _ => None,
        };
        let err = CliError::new(e.to_string());
        match hint {
            Some(h) => err.hint(h),
            None => err,
        }
    }
}

/// Whether `e` refuses a checkpoint of another run (another puzzle, file or evaluation), which
/// the user resolves by choosing another `--checkpoint` or deleting the old one.
pub fn is_foreign_checkpoint(e: &hourglass_arith::Error) -> bool {
    matches!(
        e,
        hourglass_arith::Error::ForeignCheckpoint { .. }
            | hourglass_arith::Error::CheckpointShape { .. }
            | hourglass_arith::Error::StateMismatch
            | hourglass_arith::Error::StateInput
    )
}

impl From<hourglass_timelock::Error> for CliError {
    fn from(e: hourglass_timelock::Error) -> Self {
        use hourglass_timelock::{Error, ParamError, TrustError};
        let e = match e {
            Error::Arith(inner) => return inner.into(),
            Error::Rsa(inner) => return inner.into(),
            Error::Vdf(inner) => return inner.into(),
            other => other,
        };
        let hint = match &e {
            Error::InvalidParameters(ParamError::Recipient(_)) => Some(
                "an hourglass recipient is the age1hourglass1... string `hourglass timelock recipient` prints",
            ),
            Error::Insecure(_) => Some(
                "pass --allow-insecure only to reproduce the paper's figures or for tests, never for real deadlines",
            ),
            Error::UnverifiedProof { .. } => Some(
                "a hardware fault or a corrupt checkpoint: delete the checkpoint files and run again",
            ),
            // The set's claim is refuted by what the verifier pinned: a negative verdict.
            Error::Trust(t) if t.is_refutation() => {
                return CliError::invalid(format!("the set's origin does not verify: {t}")).hint(
                    "the set, or the transcript it names, is not the committee's: do not trust bundles on it",
                );
            }
            Error::Trust(TrustError::UnpinnedCommittee { .. }) => Some(
                "give the committee's transcript.json (--transcript) and the certificates of its members you trust (--committee-cert FILE, repeated, or a directory), from a source you trust, not from the set's issuer",
            ),
            Error::Trust(_) => Some(
                "--transcript and --committee-cert pin a committee; a set on RSA-2048 or the institution's own modulus needs neither",
            ),
            _ => None,
        };
        let err = CliError::new(e.to_string());
        match hint {
            Some(h) => err.hint(h),
            None => err,
        }
    }
}

impl From<hourglass_timelock::tlock::TlockError> for CliError {
    fn from(e: hourglass_timelock::tlock::TlockError) -> Self {
        use hourglass_timelock::tlock::TlockError;
        let hint = match e {
            TlockError::Timelock(inner) => return inner.into(),
            TlockError::NotTlock => Some("expected a .tlock file written by `hourglass timelock seal`"),
            TlockError::UnsupportedVersion(_) => {
                Some("the file was written by another version of hourglass: open it with that version")
            }
            TlockError::CorruptHeader(_) | TlockError::Truncated(_) | TlockError::Damaged => Some(
                "the file was damaged, cut short or edited: get an intact copy (nothing was computed or written)",
            ),
            TlockError::Authentication => Some(
                "the file was damaged or edited after sealing: get an intact copy; nothing was written",
            ),
            TlockError::FaultDetected => {
                Some("a hardware fault is likely: try again; if it repeats, check the machine")
            }
            TlockError::Io { .. } => Some("check the paths, permissions and free space"),
            _ => None,
        };
        let err = CliError::new(e.to_string());
        match hint {
            Some(h) => err.hint(h),
            None => err,
        }
    }
}

impl From<hourglass_timelock::certificate::CertificateError> for CliError {
    /// A certificate error with what to do about it; a well-formed certificate that fails its
    /// checks is a negative verdict (exit 1).
    fn from(e: hourglass_timelock::certificate::CertificateError) -> Self {
        use hourglass_timelock::certificate::CertificateError;
        let hint = match e {
            CertificateError::Rsa(inner) => return inner.into(),
            CertificateError::Key(inner) => return inner.into(),
            CertificateError::Malformed(_) => "expected a PEM or DER X.509 certificate",
            CertificateError::NotCa(_) => {
                "--ca and --ca-cert take the CA certificate (NAME.crt) written by `hourglass ca new`"
            }
            CertificateError::WrongIssuer { .. } => {
                "the certificate comes from another CA: check that --ca names the institution's CA certificate"
            }
            CertificateError::BadSignature { .. } => {
                "the certificate was altered, or signed by another key under the same CA name: get a fresh copy from the institution and check --ca"
            }
            CertificateError::UnsupportedAlgorithm(_) => {
                "hourglass checks RSA PKCS#1 v1.5 signatures with SHA-256, SHA-384 or SHA-512"
            }
            CertificateError::Expired { .. } => {
                "ask the institution for a renewed certificate (`hourglass puzzle certify ... --days N`), and check this machine's clock"
            }
            CertificateError::NotYetValid { .. } => "check this machine's clock (`date -u`)",
            CertificateError::NotTimeLock(_) => {
                "this is an ordinary X.509 certificate; pass the NAME.crt written by `hourglass puzzle certify`"
            }
            CertificateError::BadExponent(_) | CertificateError::BadParameters(_) => {
                "this is not a valid hourglass time-lock certificate (see docs/FORMATS.md)"
            }
            CertificateError::KeyMismatch => {
                "--ca-key and --ca-cert must be NAME.key and NAME.crt of the same `hourglass ca new`"
            }
            CertificateError::InvalidOptions(_) => {
                "a common name (--name) has 1 to 64 characters; --days must leave a valid period"
            }
            _ => return CliError::new(e.to_string()),
        };
        let verdict = matches!(
            e,
            CertificateError::WrongIssuer { .. }
                | CertificateError::BadSignature { .. }
                | CertificateError::Expired { .. }
                | CertificateError::NotYetValid { .. }
        );
        if verdict {
            CliError::invalid(format!("invalid certificate: {e}")).hint(hint)
        } else {
            CliError::new(e.to_string()).hint(hint)
        }
    }
}

impl From<hourglass_dkg::Error> for CliError {
    fn from(e: hourglass_dkg::Error) -> Self {
        use hourglass_dkg::Error as E;
        let hint = match e {
            E::Arith(inner) => return inner.into(),
            E::Rsa(inner) => return inner.into(),
            E::BadMessage { .. } => Some("the run was aborted; check that every party runs the same hourglass version and configuration"),
            E::TooFewParties { .. } => Some("start the missing parties (or lower min_parties in the [generation] table) and run again"),
            E::Config(hourglass_dkg::ConfigError::NotEmpty { .. }) => {
                Some("choose an empty or new directory for the cluster")
            }
            E::Config(_) => Some("check the cluster configuration (docs/FORMATS.md section 16)"),
            E::Tls(_) => Some("every party's certificate must be listed in every configuration"),
            E::Share(_) => Some("share files are written by `hourglass dkg party`; see docs/FORMATS.md section 16"),
            E::TranscriptSignature { .. } => Some("no key was kept: the named party's key does not match the certificate the others pin, or it deviated from the protocol"),
            E::Untrusted(_) => Some("check the transcript against the committee members' certificates (a cluster's certs/ directory); docs/FORMATS.md section 16.6"),
            E::Certificates { .. } => Some("give a PEM file of CERTIFICATE blocks, or a directory of *.pem / *.crt files"),
            _ => None,
        };
        let err = CliError::new(e.to_string());
        match hint {
            Some(h) => err.hint(h),
            None => err,
        }
    }
}
