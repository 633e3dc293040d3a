//! A committee's modulus, anchored in what the verifier pins: the committee's signed transcript
//! (hourglass-dkg's format, docs/FORMATS.md section 16.6) and the certificates of its members the
//! verifier trusts. The set's own word (`origin: dkg`) is never enough.

use hourglass_arith::Integer;
use hourglass_dkg::transcript::SignedTranscript;

use crate::public::CommitteePins;
use crate::verdict::Trust;
use crate::{Result, TrustError};

/// Whom a verdict on a set with modulus `n`, naming transcript `named`, trusts under `pins`:
/// every member signed the transcript under a pinned certificate, and the transcript is the
/// one the set names and records the set's modulus.
pub(crate) fn anchor(n: &Integer, named: &str, pins: &CommitteePins) -> Result<Trust> {
    let transcript =
        SignedTranscript::from_json(&pins.transcript).map_err(TrustError::Transcript)?;
    let committee = transcript
        .verify(&pins.certificates)
        .map_err(TrustError::Transcript)?;
    let pinned = hex::encode(committee.fingerprint);
    if pinned != named {
        return Err(TrustError::OtherTranscript {
            named: named.to_string(),
            pinned,
        }
        .into());
    }
    if committee.n != *n {
        return Err(TrustError::OtherModulus.into());
    }
    Ok(Trust::Committee {
        cluster: committee.cluster,
        members: committee.members,
        threshold: committee.threshold,
        transcript: pinned,
    })
}

/// Whether a transcript error refutes the set's claim (a signature that does not verify under
/// a pinned member's certificate, a member that did not sign), rather than a pin that is
/// missing or a file that cannot be used.
pub(crate) fn is_refutation(e: &hourglass_dkg::Error) -> bool {
    use hourglass_dkg::TrustError as Dkg;
    matches!(
        e,
        hourglass_dkg::Error::Untrusted(Dkg::BadSignature { .. } | Dkg::MissingSignatures { .. })
    )
}
