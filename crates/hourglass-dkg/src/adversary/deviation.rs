//! The ways a party can be told to deviate from the protocol, by name.

/// How a party deviates from the protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deviation {
    /// Accuses every other party in every abort frame, and asks for a restart early on.
    FalseAbort,
    /// Replaces its protocol messages with bytes that are not frames.
    Garbage,
    /// Stops sending anything after its first few messages (its links stay open).
    Silent,
    /// Sends a wrong, well-formed value for its share of `d` in the final test.
    WrongShare,
    /// Sends a damaged signature of the transcript (its last byte changed).
    WrongSignature,
    /// Sends wrong, well-formed partial signatures (a threshold signature's, the generation's
    /// final test).
    WrongPartial,
    /// Withholds its signature of the transcript from every other member but the lowest, and
    /// goes on to the echo round.
    WithholdTranscriptSignature,
    /// Sends its signature of the transcript to the lowest other member, and a second valid
    /// signature (signed afresh: ECDSA draws a new nonce) to the others; without its key
    /// ([`crate::adversary::Deviant::with_signer`]), or with a deterministic scheme, a damaged one.
    EquivocateTranscriptSignature,
}

impl Deviation {
    /// Every behaviour, with its name on the command line.
    pub const ALL: [(Deviation, &'static str); 8] = [
        (Deviation::FalseAbort, "false-abort"),
        (Deviation::Garbage, "garbage"),
        (Deviation::Silent, "silent"),
        (Deviation::WrongShare, "wrong-share"),
        (Deviation::WrongSignature, "wrong-signature"),
        (Deviation::WrongPartial, "wrong-partial"),
        (
            Deviation::WithholdTranscriptSignature,
            "withhold-transcript-signature",
        ),
        (
            Deviation::EquivocateTranscriptSignature,
            "equivocate-transcript-signature",
        ),
    ];

    /// Parses a command-line name.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().find(|(_, n)| *n == name).map(|(d, _)| *d)
    }

    /// The command-line name.
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(d, _)| *d == self)
            .map_or("?", |(_, n)| n)
    }
}
