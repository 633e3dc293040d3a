//! A log verified from its served resources, and every way a lying or broken log is caught:
//! tiles that do not hash to the checkpoint, an entry changed, a truncated or oversized tile,
//! a checkpoint signed by an unknown key, a fork against the saved state, a log that shrank.
//! The log is served from memory in the exact C2SP layout (the server's own tiles are tested
//! over HTTP in the command line's tests).

use hourglass_arith::entropy::SeededEntropy;
use hourglass_log::checkpoint::LogPins;
use hourglass_log::client::verify_log;
use hourglass_log::keys::{KeyRole, SigningKey};
use hourglass_log::memory::MemoryLog;
use hourglass_log::tiles::encode_bundle;
use hourglass_log::tree::leaf_hash;
use hourglass_log::witness::KnownCheckpoint;
use hourglass_log::LogError;

fn key() -> SigningKey {
    SigningKey::generate(
        "mem.example/log",
        KeyRole::Log,
        &mut SeededEntropy::new(b"log"),
    )
    .unwrap()
}

/// A log of `entries`, laid out as tiles, with a checkpoint signed by `key`.
fn serve(entries: &[Vec<u8>], key: &SigningKey) -> MemoryLog {
    MemoryLog::new(entries, key).unwrap()
}

fn entries(n: usize, tag: &str) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| format!("{tag} entry {i}").into_bytes())
        .collect()
}

fn verify(
    s: &MemoryLog,
    pins: &LogPins,
    previous: Option<&KnownCheckpoint>,
) -> hourglass_log::Result<(u64, Vec<Vec<u8>>)> {
    let mut seen = Vec::new();
    let v = verify_log(s, pins, previous, &mut |i, e| {
        assert_eq!(
            i as usize,
            seen.len() + previous.map_or(0, |p| p.size as usize)
        );
        seen.push(e.to_vec());
        Ok(())
    })?;
    Ok((v.checkpoint.size, seen))
}

#[test]
fn a_log_verifies_from_scratch_and_then_incrementally() {
    let k = key();
    let pins = LogPins::log_only(k.verifier()).unwrap();
    let all = entries(600, "e");
    let first = serve(&all[..300], &k);
    let (size, seen) = verify(&first, &pins, None).unwrap();
    assert_eq!((size, seen.as_slice()), (300, &all[..300]));
    let state =
        KnownCheckpoint::of(&hourglass_log::client::fetch_checkpoint(&first, &pins).unwrap());
    let grown = serve(&all, &k);
    let (size, seen) = verify(&grown, &pins, Some(&state)).unwrap();
    assert_eq!((size, seen.as_slice()), (600, &all[300..]));
    // The empty log, and a log of one entry.
    verify(&serve(&[], &k), &pins, None).unwrap();
    verify(&serve(&all[..1], &k), &pins, None).unwrap();
}

#[test]
fn a_lying_log_is_a_negative_verdict() {
    let k = key();
    let pins = LogPins::log_only(k.verifier()).unwrap();
    let all = entries(700, "e");
    let verdict = |s: &MemoryLog| {
        let e = verify(s, &pins, None).unwrap_err();
        assert!(e.is_verdict(), "{e}");
        e
    };
    // An entry changed in its bundle.
    let mut s = serve(&all, &k);
    s.files_mut().get_mut("tile/entries/001").unwrap()[5] ^= 1;
    assert!(matches!(
        verdict(&s),
        LogError::EntriesMismatch { size: 700 }
    ));
    // A hash changed in a tile that an auditor who saw the first 300 entries reads.
    let first = serve(&all[..300], &k);
    let seen =
        KnownCheckpoint::of(&hourglass_log::client::fetch_checkpoint(&first, &pins).unwrap());
    for path in ["tile/0/001", "tile/1/000.p/2"] {
        let mut s = serve(&all, &k);
        s.files_mut().get_mut(path).unwrap()[20] ^= 1;
        let e = verify(&s, &pins, Some(&seen)).unwrap_err();
        assert!(matches!(e, LogError::Inconsistent { .. }), "{path}: {e}");
    }
    // An entry and its leaf hash changed together: the leaf's tile no longer hashes to the
    // tree's root. (tlog_tiles' authenticating tile reader let this one through: when the
    // tree's right edge falls in one tile it skips some tiles' check against their parents.)
    let mut s = serve(&all, &k);
    let mut forged_entries = all[..256].to_vec();
    forged_entries[5] = b"a forged receipt".to_vec();
    let bundle = encode_bundle(forged_entries.iter().map(Vec::as_slice)).unwrap();
    s.files_mut().insert("tile/entries/000".into(), bundle);
    s.files_mut().get_mut("tile/0/000").unwrap()[5 * 32..6 * 32]
        .copy_from_slice(&leaf_hash(b"a forged receipt").0);
    verdict(&s);
    // The whole log replaced by another, with the checkpoint left as it was.
    let s = serve(&all, &k);
    let mut other = serve(&entries(700, "forged"), &k);
    let checkpoint = s.files()["checkpoint"].clone();
    other.files_mut().insert("checkpoint".into(), checkpoint);
    verdict(&other);
    // Signed by another key of the same name, or by nobody the verifier pins.
    let impostor = SigningKey::generate(
        "mem.example/log",
        KeyRole::Log,
        &mut SeededEntropy::new(b"other"),
    )
    .unwrap();
    assert!(matches!(
        verdict(&serve(&all, &impostor)),
        LogError::NotSignedByLog { .. }
    ));
}

#[test]
fn a_broken_log_is_an_error() {
    let k = key();
    let pins = LogPins::log_only(k.verifier()).unwrap();
    let all = entries(300, "e");
    let error = |s: &MemoryLog| {
        let e = verify(s, &pins, None).unwrap_err();
        assert!(!e.is_verdict(), "{e}");
        e
    };
    // A missing, truncated or padded tile (read by an auditor who saw 100 entries); a bundle
    // with bytes after its entries; a checkpoint that is not one.
    let seen = KnownCheckpoint::of(
        &hourglass_log::client::fetch_checkpoint(&serve(&all[..100], &k), &pins).unwrap(),
    );
    let incremental = |s: &MemoryLog| {
        let e = verify(s, &pins, Some(&seen)).unwrap_err();
        assert!(!e.is_verdict(), "{e}");
        e
    };
    let mut s = serve(&all, &k);
    s.files_mut().remove("tile/0/000");
    assert!(matches!(incremental(&s), LogError::Missing { .. }));
    let mut s = serve(&all, &k);
    s.files_mut().get_mut("tile/0/000").unwrap().pop();
    incremental(&s);
    let mut s = serve(&all, &k);
    s.files_mut().get_mut("tile/0/000").unwrap().push(0);
    incremental(&s);
    let mut s = serve(&all, &k);
    s.files_mut().remove("tile/entries/001.p/44");
    assert!(matches!(error(&s), LogError::Missing { .. }));
    let mut s = serve(&all, &k);
    s.files_mut()
        .get_mut("tile/entries/001.p/44")
        .unwrap()
        .push(0);
    error(&s);
    for bad in [
        &b""[..],
        b"garbage\n\n\xe2\x80\x94 x AAAA\n",
        &vec![b'a'; 40_000],
    ] {
        let mut s = serve(&all, &k);
        s.files_mut().insert("checkpoint".into(), bad.to_vec());
        error(&s);
    }
}

#[test]
fn a_fork_or_a_shrink_against_the_saved_state_is_caught() {
    let k = key();
    let pins = LogPins::log_only(k.verifier()).unwrap();
    let honest = serve(&entries(500, "e"), &k);
    let state =
        KnownCheckpoint::of(&hourglass_log::client::fetch_checkpoint(&honest, &pins).unwrap());
    // The same log with entry 7 rewritten, grown to 800: its own tiles are consistent, the
    // history is not the one seen before.
    let mut forked = entries(800, "e");
    forked[7] = b"rewritten".to_vec();
    let e = verify(&serve(&forked, &k), &pins, Some(&state)).unwrap_err();
    assert!(
        matches!(
            e,
            LogError::Inconsistent {
                old_size: 500,
                new_size: 800,
                ..
            }
        ),
        "{e}"
    );
    // The same size, another root.
    let mut same = entries(500, "e");
    same[499] = b"rewritten".to_vec();
    let e = verify(&serve(&same, &k), &pins, Some(&state)).unwrap_err();
    assert!(matches!(e, LogError::Inconsistent { .. }), "{e}");
    // Fewer entries than seen before.
    let e = verify(&serve(&entries(400, "e"), &k), &pins, Some(&state)).unwrap_err();
    assert!(
        matches!(
            e,
            LogError::Shrank {
                old_size: 500,
                new_size: 400
            }
        ),
        "{e}"
    );
}

#[test]
fn an_old_entry_rewritten_in_place_in_a_partial_bundle_is_named() {
    let k = key();
    let pins = LogPins::log_only(k.verifier()).unwrap();
    let all = entries(310, "e");
    // The auditor saw 300 entries: the second bundle was partial (256..300).
    let seen = serve(&all[..300], &k);
    let state =
        KnownCheckpoint::of(&hourglass_log::client::fetch_checkpoint(&seen, &pins).unwrap());
    // The log grows to 310 honestly, except that entry 260, in the bundle the auditor reads
    // again, is rewritten in the bundle only: the hash tiles and the checkpoint are those of
    // the honest tree, so the new entries and the tree's root all check.
    let mut grown = serve(&all, &k);
    let mut bundle: Vec<&[u8]> = all[256..310].iter().map(Vec::as_slice).collect();
    bundle[4] = b"e entry 260, with another verdict";
    let forged = encode_bundle(bundle).unwrap();
    let path = "tile/entries/001.p/54";
    assert!(grown.files().contains_key(path));
    grown.files_mut().insert(path.into(), forged);
    let e = verify(&grown, &pins, Some(&state)).unwrap_err();
    assert!(
        matches!(
            e,
            LogError::EntryRewritten {
                index: 260,
                size: 300
            }
        ),
        "{e}"
    );
    assert!(e.is_verdict());
    assert!(e.to_string().contains("entry 260"), "{e}");
    // The honest log passes from the same state, without the first bundle (full before, so
    // not read again).
    let mut honest = serve(&all, &k);
    assert!(honest.files_mut().remove("tile/entries/000").is_some());
    let (size, new) = verify(&honest, &pins, Some(&state)).unwrap();
    assert_eq!((size, new.as_slice()), (310, &all[300..]));
}
