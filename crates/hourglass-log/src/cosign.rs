//! The log's half of C2SP tlog-witness: the witnesses a log asks, their pinned keys, and what a
//! witness's answer to `add-checkpoint` means (its cosignature line under its pinned key, the
//! size it knows when it answers 409). The HTTP exchange is in `http` (feature `http`,
//! `WitnessClient::cosign`); the witness's own half is in [`crate::witness`].

use crate::checkpoint::{check_witnesses, LogPins, SignedCheckpoint};
use crate::error::{LogError, Result};
use crate::keys::VerifierKey;

/// How many times one cosigning is tried again after a 409 (the witness knows another size
/// than the log believed): once is the normal case, a witness that keeps changing its answer
/// is given up on.
pub const MAX_CONFLICTS: usize = 3;

/// A witness a log asks for cosignatures (`--witness URL=KEYFILE`).
#[derive(Debug, Clone)]
pub struct WitnessEndpoint {
    /// Its submission prefix (`POST <url>/add-checkpoint`).
    pub url: String,
    /// Its cosigning key.
    pub key: VerifierKey,
}

/// The witnesses a log asks, and how many of them must cosign before a checkpoint is
/// published: each a witness key, none given twice, at most
/// [`MAX_WITNESSES`](crate::checkpoint::MAX_WITNESSES), the quorum at
/// most their number.
#[derive(Debug, Clone)]
pub struct WitnessQuorum {
    witnesses: Vec<WitnessEndpoint>,
    quorum: usize,
}

impl WitnessQuorum {
    /// Checks `witnesses` and `quorum` (by the rules of [`LogPins::new`]).
    pub fn new(witnesses: Vec<WitnessEndpoint>, quorum: usize) -> Result<Self> {
        check_witnesses(
            &witnesses.iter().map(|w| w.key.clone()).collect::<Vec<_>>(),
            quorum,
        )?;
        Ok(Self { witnesses, quorum })
    }

    /// The witnesses.
    pub fn witnesses(&self) -> &[WitnessEndpoint] {
        &self.witnesses
    }

    /// How many must cosign.
    pub fn quorum(&self) -> usize {
        self.quorum
    }
}

/// Refuses to ask a witness that cosigned a larger tree (`known`) than `checkpoint`'s: the log
/// lost entries it had published, or another log signs with its key.
pub fn check_known_size(known: u64, checkpoint: &SignedCheckpoint) -> Result<()> {
    let size = checkpoint.size();
    if known > size {
        return Err(LogError::WitnessRefused(format!(
            "the witness cosigned a checkpoint of size {known}, larger than this log's {size}: \
             the log lost entries it had published, or another log signs with its key"
        )));
    }
    Ok(())
}

/// The line of `witness` in its answer `body` that is a valid cosignature of `checkpoint`
/// (signed by `log`) by the witness's pinned key; other lines are ignored, as the spec says.
pub fn own_cosignature(
    checkpoint: &SignedCheckpoint,
    log: &VerifierKey,
    witness: &VerifierKey,
    body: &[u8],
) -> Result<Vec<u8>> {
    let prefix = format!("— {} ", witness.name());
    let pins = LogPins::new(log.clone(), vec![witness.clone()], 1)?;
    for line in body.split_inclusive(|&b| b == b'\n') {
        if !line.starts_with(prefix.as_bytes()) || !line.ends_with(b"\n") {
            continue;
        }
        if let Ok(c) = checkpoint.with_signature_lines(line) {
            if c.verify(&pins).is_ok() {
                return Ok(line.to_vec());
            }
        }
    }
    Err(LogError::WitnessRefused(
        "the witness answered without a valid cosignature by its pinned key".into(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::{KeyRole, SigningKey};
    use crate::tree::{append, leaf_hash, root, HashMemo};
    use hourglass_arith::entropy::SeededEntropy;

    fn keys() -> (SigningKey, SigningKey, SigningKey) {
        let key = |name: &str, role| {
            SigningKey::generate(name, role, &mut SeededEntropy::new(name.as_bytes())).unwrap()
        };
        (
            key("log.example/log", KeyRole::Log),
            key("w1.example", KeyRole::Witness),
            key("w2.example", KeyRole::Witness),
        )
    }

    fn checkpoint(log: &SigningKey, size: u64) -> SignedCheckpoint {
        let mut memo = HashMemo::new();
        let leaves: Vec<_> = (0..size).map(|i| leaf_hash(&i.to_be_bytes())).collect();
        append(&mut memo, 0, &leaves).unwrap();
        SignedCheckpoint::sign(log.name(), size, root(&memo, size).unwrap(), log).unwrap()
    }

    #[test]
    fn only_the_pinned_witness_s_valid_line_is_taken() {
        let (log, w1, w2) = keys();
        let c = checkpoint(&log, 3);
        let mine = c.cosignature_line(&w1, 100).unwrap();
        let theirs = c.cosignature_line(&w2, 100).unwrap();
        let mut body = theirs.clone();
        body.extend_from_slice(&mine);
        let line = own_cosignature(&c, &log.verifier(), &w1.verifier(), &body).unwrap();
        assert_eq!(line, mine);
        // Another witness's line alone, or a line over another checkpoint, is no cosignature.
        assert!(own_cosignature(&c, &log.verifier(), &w1.verifier(), &theirs).is_err());
        let other = checkpoint(&log, 4).cosignature_line(&w1, 100).unwrap();
        assert!(own_cosignature(&c, &log.verifier(), &w1.verifier(), &other).is_err());
        // A line cut short of its newline is not taken.
        let cut = &mine[..mine.len() - 1];
        assert!(own_cosignature(&c, &log.verifier(), &w1.verifier(), cut).is_err());
    }

    #[test]
    fn a_witness_ahead_of_the_log_is_not_asked() {
        let (log, _, _) = keys();
        let c = checkpoint(&log, 3);
        assert!(check_known_size(3, &c).is_ok());
        assert!(check_known_size(0, &c).is_ok());
        let e = check_known_size(4, &c).unwrap_err();
        assert!(e.to_string().contains("larger than this log's 3"), "{e}");
    }

    #[test]
    fn the_witnesses_and_quorum_are_checked() {
        let (log, w1, w2) = keys();
        let at = |k: &SigningKey| WitnessEndpoint {
            url: "http://w.example".into(),
            key: k.verifier(),
        };
        assert_eq!(
            WitnessQuorum::new(vec![at(&w1), at(&w2)], 2)
                .unwrap()
                .quorum(),
            2
        );
        assert!(WitnessQuorum::new(vec![at(&w1)], 2).is_err());
        assert!(WitnessQuorum::new(vec![at(&w1), at(&w1)], 1).is_err());
        assert!(WitnessQuorum::new(vec![at(&log)], 1).is_err());
    }
}
