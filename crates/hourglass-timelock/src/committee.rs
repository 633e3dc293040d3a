//! A committee's modulus, anchored in what the verifier pins: the committee's signed transcript
//! (hourglass-dkg's format, docs/FORMATS.md section 16.6) and the certificates of its members the
//! verifier trusts. The set's own word (`origin: dkg`) is never enough.

use hourglass_arith::Integer;
use hourglass_dkg::transcript::SignedTranscript;

use crate::error::{Result, TrustError};
use crate::pins::CommitteePins;
use crate::trust::Trust;

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
