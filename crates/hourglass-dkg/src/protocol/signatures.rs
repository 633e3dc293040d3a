//! The rounds that end a published generation: every member signs the transcript and sends
//! its signature to every other member (round 0); then echoes the fingerprint and the digest
//! of every member's signature as it holds them (round 1,
//! [`crate::wire::step::TRANSCRIPT_ECHO`]); then shows its full set to each member whose
//! digest differs from its own, and nothing to the others (round 2,
//! [`crate::wire::step::TRANSCRIPT_SETS`]). A member finishes only when every other member's
//! echo arrived and names exactly its own set (in canonical form,
//! [`TranscriptSignature::canonical`]) and every member's round 2 came, so whenever one honest
//! member finishes, every honest member holds that same full set; otherwise all stop. Each
//! member sends and receives `O(k)` bytes in the echo when nobody deviates (a digest per
//! member), where echoing the sets was `O(k^2)`.
//!
//! Named, with a negative verdict: a member whose signature does not verify or signs another
//! transcript (round 0); a member that withholds its signature from some member but echoes
//! (`Withheld`: a link delivers in order, so the echo arriving first shows the skip); a member
//! that sends different valid signatures to different members (`Equivocated`: the members it
//! split have different digests, show each other their sets, and find a second signature that
//! verifies under its certificate, which nobody else can make); a member whose shown set holds
//! a signature that does not verify (`FalseEcho`), or that echoes a digest and then does not
//! show a set with that digest to a member whose own differs (`UnshownEcho`). A member that
//! sends nothing is named after the timeout (`PartyFailed`, an error). The stop is announced
//! with a fatal frame naming the member, so the others stop too.
//!
//! What no fixed number of rounds gives: a member that withholds its echo or its round 2 from
//! some members makes those stop (naming it) while the others, holding the same full set,
//! finish; and a member can always keep the others' signatures while sending none, and write a
//! transcript of a key whose honest members kept no share.

use std::collections::BTreeMap;

use crate::keyshare::KeyShare;
use crate::session::{Collected, Session};
use crate::transcript::{
    verify_signature, SignedTranscript, SigningScheme, TranscriptSignature, TranscriptSigner,
};
use crate::transport::PartyId;
use crate::wire::{Reader, Writer, MAX_SIGNATURE_BYTES};
use crate::{ConfigError, Error, Failure, MessageProblem, Result, SignatureFault, WireError};
use sha2::{Digest, Sha256};

/// The rounds of transcript signatures; a failure is announced to the other members, naming
/// the member at fault where there is one.
pub(super) fn sign_transcript(
    session: &mut Session<'_>,
    share: &KeyShare,
    threshold: usize,
    signer: &TranscriptSigner,
) -> Result<SignedTranscript> {
    // A link found closed (most often on a send) may be a member that stopped on another's
    // announcement, still waiting in this party's inbox: that announcement names the member at
    // fault, where the closed link would name an honest one.
    let outcome = exchange_transcript_signatures(session, share, threshold, signer)
        .map_err(|e| session.explain(e));
    if let Err(e) = &outcome {
        match e {
            Error::TranscriptSignature { party, .. }
            | Error::BadMessage { sender: party, .. }
            | Error::PartyFailed { party, .. } => session.announce_fatal(&[*party], &e.to_string()),
            Error::Reported { .. } => {}
            _ => session.announce_fatal(&[], &e.to_string()),
        }
    }
    outcome
}

/// A signature's scheme from its two-byte code on the wire.
fn scheme_of(code: &[u8]) -> std::result::Result<SigningScheme, SignatureFault> {
    <[u8; 2]>::try_from(code)
        .ok()
        .and_then(|c| SigningScheme::from_code(u16::from_be_bytes(c)))
        .ok_or_else(|| SignatureFault::UnsupportedScheme {
            scheme: format!("0x{}", hex::encode(code)),
        })
}

/// Signs the transcript of `share`, sends the signature to every other member and checks
/// theirs (round 0: the fingerprint signed, the scheme (`u16be`) and the signature, each
/// length-prefixed), then echoes them all and checks every other member's echo (round 1).
fn exchange_transcript_signatures(
    session: &mut Session<'_>,
    share: &KeyShare,
    threshold: usize,
    signer: &TranscriptSigner,
) -> Result<SignedTranscript> {
    let transcript = signer.transcript(share, threshold)?;
    let fingerprint = transcript.fingerprint();
    let message = transcript.signed_message();
    let mine = signer.sign(&transcript)?.canonical();
    let certificate_of = |party: PartyId| {
        signer
            .certificates()
            .get(&party)
            .ok_or(ConfigError::NoCertificate { party })
    };
    // A key that does not match the certificate the others pin is found here, not by them.
    verify_signature(certificate_of(mine.member)?, &message, &mine).map_err(|fault| {
        Error::TranscriptSignature {
            party: mine.member,
            fault,
        }
    })?;
    let mut w = Writer::new();
    w.bytes(&fingerprint)
        .bytes(&mine.scheme.code().to_be_bytes())
        .bytes(&mine.signature);
    let replies = session.exchange_signatures(w.finish()).map_err(|halt| {
        match halt.into_error(Failure::WhileSigningTranscript) {
            Error::BadMessage {
                sender,
                reason: MessageProblem::Skipped { .. },
            } => Error::TranscriptSignature {
                party: sender,
                fault: SignatureFault::Withheld,
            },
            other => other,
        }
    })?;
    let mut held = BTreeMap::from([(mine.member, mine)]);
    for (&from, payload) in &replies {
        let malformed = |e: WireError| Error::BadMessage {
            sender: from,
            reason: e.into(),
        };
        let fault = |fault: SignatureFault| Error::TranscriptSignature { party: from, fault };
        let mut r = Reader::new(payload);
        let signed = r.bytes().map_err(malformed)?;
        let code = r.bytes().map_err(malformed)?;
        let signature = r.bytes().map_err(malformed)?;
        r.end().map_err(malformed)?;
        if signed != fingerprint {
            return Err(fault(SignatureFault::OtherTranscript {
                signed: hex::encode(signed),
                ours: hex::encode(fingerprint),
            }));
        }
        let scheme = scheme_of(code).map_err(fault)?;
        if signature.len() > MAX_SIGNATURE_BYTES {
            return Err(fault(SignatureFault::TooLong {
                len: signature.len(),
                max: MAX_SIGNATURE_BYTES,
            }));
        }
        let theirs = TranscriptSignature {
            member: from,
            scheme,
            signature: signature.to_vec(),
        };
        verify_signature(certificate_of(from)?, &message, &theirs).map_err(fault)?;
        held.insert(from, theirs.canonical());
    }
    // Round 1: the digest of every member's signature, in member order.
    let set = full_set(&fingerprint, &held);
    let digest = set_digest(&set);
    let mut w = Writer::new();
    w.bytes(&fingerprint).bytes(&digest);
    let Collected {
        payloads: echoes,
        reported,
    } = session
        .exchange_echoes(w.finish())
        .map_err(|halt| halt.into_error(Failure::WhileSigningTranscript))?;
    // What this party can see itself decides before another member's announced stop.
    let mut digests = BTreeMap::new();
    for (&from, payload) in &echoes {
        digests.insert(from, echoed_digest(from, payload, &fingerprint)?);
    }
    if let Some(reported) = reported {
        return Err(reported);
    }
    // Round 2: the full set to each member whose digest differs, nothing to the others.
    let outgoing = digests
        .iter()
        .map(|(&to, theirs)| {
            let mut w = Writer::new();
            w.bytes(if *theirs == digest { &[] } else { &set[..] });
            (to, w.finish())
        })
        .collect();
    let Collected {
        payloads: shown,
        reported,
    } = session
        .exchange_sets(outgoing)
        .map_err(|halt| halt.into_error(Failure::WhileSigningTranscript))?;
    for (&from, payload) in &shown {
        let malformed = |e: WireError| Error::BadMessage {
            sender: from,
            reason: e.into(),
        };
        let mut r = Reader::new(payload);
        let theirs = r.bytes().map_err(malformed)?;
        r.end().map_err(malformed)?;
        let echoed = digests.get(&from).copied();
        let unshown = Error::TranscriptSignature {
            party: from,
            fault: SignatureFault::UnshownEcho,
        };
        if theirs.is_empty() {
            if echoed != Some(digest) {
                return Err(unshown);
            }
            continue;
        }
        if echoed != Some(set_digest(theirs)) {
            return Err(unshown);
        }
        check_echo(from, theirs, &fingerprint, &message, &held, &certificate_of)?;
    }
    if let Some(reported) = reported {
        return Err(reported);
    }
    SignedTranscript::new(transcript, held.into_values().collect())
}

/// The set of signatures as this party holds them, as shown in round 2: the fingerprint, then
/// for every member in order its id, scheme and signature, each length-prefixed.
fn full_set(fingerprint: &[u8; 32], held: &BTreeMap<PartyId, TranscriptSignature>) -> Vec<u8> {
    let mut w = Writer::new();
    w.bytes(fingerprint);
    for s in held.values() {
        w.bytes(&s.member.to_be_bytes())
            .bytes(&s.scheme.code().to_be_bytes())
            .bytes(&s.signature);
    }
    w.finish()
}

/// What round 1 echoes of a set: its SHA-256, in a context of its own.
fn set_digest(set: &[u8]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(ECHO_CONTEXT);
    h.update(set);
    h.finalize().into()
}

/// The context of [`set_digest`].
const ECHO_CONTEXT: &[u8] = b"hourglass-dkg-transcript-echo-v1\0";

/// The digest `from` echoed, once its fingerprint is this party's.
fn echoed_digest(from: PartyId, payload: &[u8], fingerprint: &[u8; 32]) -> Result<[u8; 32]> {
    let malformed = |e: WireError| Error::BadMessage {
        sender: from,
        reason: e.into(),
    };
    let mut r = Reader::new(payload);
    let echoed = r.bytes().map_err(malformed)?;
    let digest = r.bytes().map_err(malformed)?;
    r.end().map_err(malformed)?;
    same_fingerprint(from, echoed, fingerprint)?;
    <[u8; 32]>::try_from(digest).map_err(|_| Error::BadMessage {
        sender: from,
        reason: MessageProblem::EchoDigest,
    })
}

/// `from`'s echo or set names the transcript this party's does (`OtherTranscript` if not).
fn same_fingerprint(from: PartyId, echoed: &[u8], fingerprint: &[u8; 32]) -> Result<()> {
    if echoed == fingerprint {
        return Ok(());
    }
    Err(Error::TranscriptSignature {
        party: from,
        fault: SignatureFault::OtherTranscript {
            signed: hex::encode(echoed),
            ours: hex::encode(fingerprint),
        },
    })
}

/// Checks the set `from` showed against the signatures this party holds: the same
/// fingerprint, one entry per member in order, and each signature the same as this party's.
/// A different one that verifies under the member's certificate shows that the member signed
/// twice (`Equivocated`); one that does not verify, that `from` misreports it (`FalseEcho`).
fn check_echo<'c>(
    from: PartyId,
    payload: &[u8],
    fingerprint: &[u8; 32],
    message: &[u8],
    held: &BTreeMap<PartyId, TranscriptSignature>,
    certificate_of: &dyn Fn(PartyId) -> std::result::Result<&'c Vec<u8>, ConfigError>,
) -> Result<()> {
    let malformed = |e: WireError| Error::BadMessage {
        sender: from,
        reason: e.into(),
    };
    let mut r = Reader::new(payload);
    let echoed = r.bytes().map_err(malformed)?;
    same_fingerprint(from, echoed, fingerprint)?;
    for (&member, ours) in held {
        let id = r.bytes().map_err(malformed)?;
        let code = r.bytes().map_err(malformed)?;
        let signature = r.bytes().map_err(malformed)?;
        if id != member.to_be_bytes() {
            return Err(Error::BadMessage {
                sender: from,
                reason: MessageProblem::EchoOrder,
            });
        }
        let false_echo = Error::TranscriptSignature {
            party: from,
            fault: SignatureFault::FalseEcho { member },
        };
        let Ok(scheme) = scheme_of(code) else {
            return Err(false_echo);
        };
        let theirs = TranscriptSignature {
            member,
            scheme,
            signature: signature.to_vec(),
        }
        .canonical();
        if theirs == *ours {
            continue;
        }
        return match verify_signature(certificate_of(member)?, message, &theirs) {
            Ok(()) => Err(Error::TranscriptSignature {
                party: member,
                fault: SignatureFault::Equivocated { seen_by: from },
            }),
            Err(_) => Err(false_echo),
        };
    }
    r.end().map_err(malformed)?;
    Ok(())
}
