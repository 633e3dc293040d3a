//! Time-lock files: round trips across chunk boundaries, the committed known-answer vector,
//! stop and resume, and every kind of bad input (truncated, edited, wrong magic or version,
//! t = 0 or absurd, forged key, foreign checkpoint), each with a clear error.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use hourglass_arith::entropy::SeededEntropy;
use hourglass_arith::squaring::square_k_times;
use hourglass_timelock::tlock::{
    body_len, check_body, decrypt_body, open, seal, solve_key, KeyOutcome, OpenOutcome, SealParams,
    SealingKey, TlockError, TlockHeader, CHUNK_SIZE, MAGIC, TAG_SIZE, TRAILER_SIZE, VERSION,
};
use hourglass_timelock::{SolveOptions, SolveOutcome};
use sha2::{Digest, Sha256};

const KAT_SEED: &[u8] = b"hourglass tlock kat v1";

fn vector_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/vectors")
        .join(name)
}

fn vector(name: &str) -> Vec<u8> {
    let path = vector_path(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("missing vector {}: {e}", path.display()))
}

fn sealed(content: &[u8], t: u64, seed: &[u8], record_len: bool) -> Vec<u8> {
    let mut rng = SeededEntropy::new(seed);
    let mut params = SealParams::new(1024, t);
    params.content_len = record_len.then_some(content.len() as u64);
    let mut out = Vec::new();
    seal(&mut &content[..], &mut out, &params, &mut rng).unwrap();
    out
}

fn open_bytes(file: &[u8]) -> Result<Vec<u8>, TlockError> {
    let mut plain = Vec::new();
    match open(
        &mut &file[..],
        &mut plain,
        &SolveOptions::default(),
        &AtomicBool::new(false),
        &mut |_| {},
    )? {
        OpenOutcome::Opened { content_len, .. } => {
            assert_eq!(content_len, plain.len() as u64);
            Ok(plain)
        }
        OpenOutcome::Stopped { .. } => panic!("not stopped"),
    }
}

fn header_len(file: &[u8]) -> usize {
    TlockHeader::read_from(&mut &file[..])
        .unwrap()
        .as_bytes()
        .len()
}

/// Recomputes the header checksum after an edit, as a forger would.
fn rechecksum(file: &mut [u8]) {
    let h = header_len_unchecked(file);
    let digest = Sha256::digest(&file[..h - 32]);
    file[h - 32..h].copy_from_slice(&digest);
}

fn header_len_unchecked(file: &[u8]) -> usize {
    let k = usize::from(u16::from_be_bytes([file[26], file[27]]));
    28 + 3 * k + 19 + 32
}

fn content(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 % 251) as u8).collect()
}

#[test]
fn round_trips_across_chunk_boundaries() {
    for len in [
        0,
        1,
        CHUNK_SIZE - 1,
        CHUNK_SIZE,
        CHUNK_SIZE + 1,
        2 * CHUNK_SIZE,
        3 * CHUNK_SIZE + 5,
    ] {
        for record_len in [false, true] {
            let data = content(len);
            let file = sealed(&data, 300, format!("rt {len}").as_bytes(), record_len);
            let header = TlockHeader::read_from(&mut &file[..]).unwrap();
            assert_eq!(
                file.len() as u64,
                header.as_bytes().len() as u64 + body_len(len as u64) + TRAILER_SIZE as u64,
                "len {len}"
            );
            assert_eq!(
                header.expected_file_len(),
                record_len.then_some(file.len() as u64)
            );
            assert_eq!(header.t(), 300);
            assert_eq!(header.modulus_bits(), 1024);
            assert_eq!(open_bytes(&file).unwrap(), data, "len {len}");
        }
    }
}

#[test]
fn known_answer_vector_opens_and_reseals_byte_for_byte() {
    let file = vector("tlock-kat.tlock");
    let text = vector("tlock-kat.txt");
    assert_eq!(open_bytes(&file).unwrap(), text);
    let header = TlockHeader::read_from(&mut &file[..]).unwrap();
    assert_eq!(header.t(), 1000);
    assert_eq!(header.content_len(), Some(text.len() as u64));
    // The same seed, parameters and content give the same bytes: the format has not drifted.
    assert_eq!(sealed(&text, 1000, KAT_SEED, true), file);
    // A multi-chunk file, pinned by its hash rather than committed (66 KiB).
    let data = content(CHUNK_SIZE + 1000);
    let multi = sealed(&data, 1000, b"hourglass tlock kat v1 multi-chunk", true);
    assert_eq!(
        hex::encode(Sha256::digest(&multi)),
        "6452cf97cae7c7dad473384e56ef6a75ffaf590d264324c10f4ab49f6947c5c3",
        "the multi-chunk encoding changed"
    );
    assert_eq!(open_bytes(&multi).unwrap(), data);
}

#[test]
fn version_1_files_still_open() {
    let file = vector("tlock-kat-v1.tlock");
    let header = TlockHeader::read_from(&mut &file[..]).unwrap();
    assert_eq!(header.version(), 1);
    assert_eq!(header.expected_file_len(), Some(file.len() as u64));
    assert!(check_body(&header, &mut &file[header.as_bytes().len()..]).is_ok());
    assert_eq!(open_bytes(&file).unwrap(), vector("tlock-kat.txt"));
}

#[test]
fn the_trailer_finds_damage_before_the_squarings() {
    let data = content(CHUNK_SIZE + 500);
    let file = sealed(&data, 1000, b"trailer", true);
    let header = TlockHeader::read_from(&mut &file[..]).unwrap();
    assert_eq!(header.version(), VERSION);
    assert_eq!(header.expected_file_len(), Some(file.len() as u64));
    let body_at = header.as_bytes().len();
    assert!(check_body(&header, &mut &file[body_at..]).is_ok());
    // A flipped bit anywhere after the header: in the first chunk, the last one, the trailer.
    for pos in [body_at, body_at + CHUNK_SIZE + 20, file.len() - 1] {
        let mut bad = file.clone();
        bad[pos] ^= 0x10;
        assert!(
            matches!(
                check_body(&header, &mut &bad[body_at..]),
                Err(TlockError::Damaged)
            ),
            "byte {pos}"
        );
        // Opening it anyway fails too (the tags, or the trailer), and writes nothing usable.
        assert!(
            matches!(open_bytes(&bad), Err(TlockError::Authentication)),
            "byte {pos}"
        );
    }
    // A missing or cut trailer.
    let cut = &file[..file.len() - 5];
    assert!(check_body(&header, &mut &cut[body_at..]).is_err());
    assert!(open_bytes(cut).is_err());
    let mut longer = file.clone();
    longer.push(0);
    assert!(check_body(&header, &mut &longer[body_at..]).is_err());
    assert!(open_bytes(&longer).is_err());
}

#[test]
fn stop_and_resume_with_a_checkpoint_bound_to_the_file() {
    let data = content(1000);
    // More than one block of 16384 squarings, so the stop flag is honoured.
    let file = sealed(&data, 40_000, b"resume", true);
    let other = sealed(&data, 40_000, b"resume, another file", true);
    let dir = std::env::temp_dir().join(format!("hg-tlock-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ckpt = dir.join("open.ckpt");
    let options = SolveOptions {
        checkpoint: Some(hourglass_arith::checkpoint::CheckpointFile::new(
            &ckpt,
            hourglass_arith::checkpoint::CheckpointKey::from_bytes([1u8; 32]),
        )),
        checkpoint_every: Duration::ZERO,
        ..SolveOptions::default()
    };
    let header = TlockHeader::read_from(&mut &file[..]).unwrap();
    let stopped = solve_key(&header, &options, &AtomicBool::new(true), &mut |_| {}).unwrap();
    assert!(matches!(stopped, KeyOutcome::Stopped { done: 0 }));
    assert!(ckpt.exists());
    // Another file with the same t and modulus size: its checkpoint is refused.
    let mut plain = Vec::new();
    let err = open(
        &mut &other[..],
        &mut plain,
        &options,
        &AtomicBool::new(false),
        &mut |_| {},
    )
    .unwrap_err();
    assert!(err.to_string().contains("another"), "{err}");
    assert!(plain.is_empty());
    // The right file resumes and opens.
    let mut plain = Vec::new();
    let out = open(
        &mut &file[..],
        &mut plain,
        &options,
        &AtomicBool::new(false),
        &mut |_| {},
    )
    .unwrap();
    assert!(matches!(
        out,
        OpenOutcome::Opened {
            content_len: 1000,
            ..
        }
    ));
    assert_eq!(plain, data);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn wrong_magic_and_version_are_named() {
    let file = sealed(b"x", 10, b"magic", true);
    let mut bad = file.clone();
    bad[0] = b'X';
    assert!(matches!(open_bytes(&bad), Err(TlockError::NotTlock)));
    assert!(matches!(
        open_bytes(b"hello, this is not a time-lock file"),
        Err(TlockError::NotTlock)
    ));
    let mut v3 = file.clone();
    v3[8..10].copy_from_slice(&3u16.to_be_bytes());
    let err = open_bytes(&v3).unwrap_err();
    assert!(matches!(err, TlockError::UnsupportedVersion(3)), "{err}");
    assert!(err.to_string().contains("version 3"));
}

#[test]
fn every_truncation_is_an_error() {
    let data = content(CHUNK_SIZE + 100);
    let file = sealed(&data, 10, b"truncate", false);
    let h = header_len(&file);
    for len in 0..h {
        match TlockHeader::read_from(&mut &file[..len]) {
            Err(TlockError::Truncated(_)) => {}
            other => panic!("header cut at {len}: {other:?}"),
        }
    }
    // Cuts in the body: at chunk boundaries, inside tags, inside chunks.
    let unit = CHUNK_SIZE + TAG_SIZE;
    for len in [
        h,
        h + 1,
        h + 15,
        h + 16,
        h + unit - 1,
        h + unit,
        h + unit + 1,
        file.len() - 1,
    ] {
        let err = open_bytes(&file[..len]).unwrap_err();
        assert!(
            matches!(err, TlockError::Truncated(_) | TlockError::Authentication),
            "cut at {len}: {err}"
        );
    }
}

#[test]
fn every_header_bit_flip_is_caught_before_any_squaring() {
    let file = sealed(b"header", 10, b"flips", true);
    let h = header_len(&file);
    for bit in 0..h * 8 {
        let mut bad = file[..h].to_vec();
        bad[bit / 8] ^= 1 << (bit % 8);
        assert!(
            TlockHeader::read_from(&mut &bad[..]).is_err(),
            "flip of bit {bit} undetected"
        );
    }
}

#[test]
fn edited_or_extended_bodies_do_not_authenticate() {
    let data = content(CHUNK_SIZE + 300);
    let file = sealed(&data, 10, b"body edits", false);
    let header = TlockHeader::read_from(&mut &file[..]).unwrap();
    let h = header.as_bytes().len();
    let KeyOutcome::Recovered(key) = solve_key(
        &header,
        &SolveOptions::default(),
        &AtomicBool::new(false),
        &mut |_| {},
    )
    .unwrap() else {
        panic!("stopped")
    };
    let unit = CHUNK_SIZE + TAG_SIZE;
    for pos in [
        h,
        h + 1000,
        h + unit - 1,
        h + unit,
        file.len() - 17,
        file.len() - 1,
    ] {
        let mut bad = file.clone();
        bad[pos] ^= 0x20;
        let err = decrypt_body(&header, &key, &mut &bad[h..], &mut Vec::new()).unwrap_err();
        assert!(
            matches!(err, TlockError::Authentication),
            "byte {pos}: {err}"
        );
    }
    let mut longer = file.clone();
    longer.extend_from_slice(b"extra");
    assert!(matches!(
        decrypt_body(&header, &key, &mut &longer[h..], &mut Vec::new()),
        Err(TlockError::Authentication)
    ));
    // Chunks swapped or dropped: the counter and last-chunk flag catch it.
    let body = &file[h..];
    let swapped = [&body[unit..], &body[..unit]].concat();
    assert!(decrypt_body(&header, &key, &mut &swapped[..], &mut Vec::new()).is_err());
    assert!(decrypt_body(&header, &key, &mut &body[..unit], &mut Vec::new()).is_err());
    assert!(decrypt_body(&header, &key, &mut &body[unit..], &mut Vec::new()).is_err());
}

#[test]
fn forged_headers_with_valid_checksums_are_refused() {
    let file = sealed(b"forged", 10, b"forge", true);
    // t = 0 and t absurd: refused with a reason, before any squaring.
    for (t, why) in [
        (0u64, "at least 1"),
        (1 << 61, "absurd"),
        (u64::MAX, "absurd"),
    ] {
        let mut bad = file.clone();
        bad[10..18].copy_from_slice(&t.to_be_bytes());
        rechecksum(&mut bad);
        let err = TlockHeader::read_from(&mut &bad[..]).unwrap_err();
        assert!(
            matches!(err, TlockError::CorruptHeader(_)) && err.to_string().contains(why),
            "t = {t}: {err}"
        );
    }
    // A modulus length out of range.
    let mut bad = file.clone();
    bad[26..28].copy_from_slice(&64u16.to_be_bytes());
    assert!(matches!(
        TlockHeader::read_from(&mut &bad[..]),
        Err(TlockError::CorruptHeader(_))
    ));
    // An even modulus, a base of 1, a hidden key above n.
    let k = 128;
    for (pos, value) in [
        (28 + k - 1, 0x00u8),
        (28 + 2 * k - 1, 0x01),
        (28 + 2 * k, 0xff),
    ] {
        let mut bad = file.clone();
        if pos == 28 + 2 * k - 1 {
            bad[28 + k..28 + 2 * k].fill(0);
        }
        if pos == 28 + 2 * k {
            bad[28 + 2 * k..28 + 3 * k].fill(0xff);
        }
        bad[pos] = value;
        rechecksum(&mut bad);
        assert!(
            matches!(
                TlockHeader::read_from(&mut &bad[..]),
                Err(TlockError::CorruptHeader(_))
            ),
            "edit at {pos}"
        );
    }
    // A different hidden key (still below n) parses, costs the squarings, then fails to
    // authenticate: the header is associated data of every chunk.
    let mut bad = file.clone();
    bad[28 + 2 * k + 5] ^= 1;
    rechecksum(&mut bad);
    assert!(matches!(open_bytes(&bad), Err(TlockError::Authentication)));
    // So does a changed content length.
    let mut bad = file.clone();
    bad[25] ^= 1;
    rechecksum(&mut bad);
    assert!(open_bytes(&bad).is_err());
}

#[test]
fn bad_seal_parameters_are_refused() {
    let mut rng = SeededEntropy::new(b"bad params");
    let mut out = Vec::new();
    for params in [
        SealParams::new(1024, 0),
        SealParams::new(1024, (1 << 60) + 1),
        SealParams::new(512, 10),
        SealParams::new(20000, 10),
    ] {
        assert!(
            seal(&mut &b"x"[..], &mut out, &params, &mut rng).is_err(),
            "{params:?}"
        );
    }
    // A content length that does not match what is read.
    let mut params = SealParams::new(1024, 10);
    params.content_len = Some(5);
    let err = seal(&mut &b"abc"[..], &mut out, &params, &mut rng).unwrap_err();
    assert!(err.to_string().contains("changed"), "{err}");
}

#[test]
fn the_sealed_key_is_what_sequential_squaring_finds() {
    let mut rng = SeededEntropy::new(b"independent");
    let key = SealingKey::generate(1024, &mut rng).unwrap();
    let mut file = Vec::new();
    let header = key
        .seal(777, None, &mut &b"payload"[..], &mut file, &mut rng)
        .unwrap();
    // Plain repeated squaring (no checks, no blocks), independent of the engine.
    let mut w = header.base().clone();
    for _ in 0..777 {
        w.square_mut();
        w %= header.n();
    }
    assert_eq!(w, square_k_times(header.base(), 777, header.n()));
    let solved = hourglass_timelock::rsw::solve_rsw(
        &header.puzzle(),
        &SolveOptions::default(),
        &AtomicBool::new(false),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(solved, SolveOutcome::Solved(w.clone()));
    let content_key = header.recover_key(&w).unwrap();
    let mut plain = Vec::new();
    let h = header.as_bytes().len();
    decrypt_body(&header, &content_key, &mut &file[h..], &mut plain).unwrap();
    assert_eq!(plain, b"payload");
    assert_eq!(&file[..8], MAGIC);
}
