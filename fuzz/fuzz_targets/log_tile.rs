//! The transparency log's binary parsers and its verifying client on arbitrary input: tile
//! paths, entry bundles and hash tiles, proofs, and a small honest log (the fixed one of
//! `log_fixture`) with one of its resources replaced by the input. Nothing may panic; what
//! parses re-encodes to the input; the client accepts the log only if the input is the honest
//! resource (or changes nothing it reads).
#![no_main]

use hourglass_fuzz::log_fixture;
use hourglass_log::client::verify_log;
use hourglass_log::tiles::{decode_bundle, decode_hash_tile, encode_bundle, parse_path, Resource};
use hourglass_log::tree::{verify_consistency, Hash, InclusionProof};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(Resource::Tile(t)) = parse_path(text) {
            assert_eq!(t.path(), text);
        }
    }
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let width = u32::from(first) + 1;
    if let Ok(entries) = decode_bundle(rest, width.min(256)) {
        assert_eq!(encode_bundle(entries).unwrap(), rest);
    }
    let _ = decode_hash_tile(rest, width.min(256));
    // Proofs of arbitrary shape: refused or accepted, never a panic.
    let hashes: Vec<Hash> = rest
        .chunks_exact(32)
        .map(|c| Hash(c.try_into().unwrap()))
        .collect();
    let size = u64::from_le_bytes(rest.get(..8).and_then(|b| b.try_into().ok()).unwrap_or([0; 8]));
    let index = u64::from(first);
    let root = hashes.first().copied().unwrap_or_default();
    let _ = InclusionProof { index, size, path: hashes.clone() }.verify(rest, &root);
    let _ = verify_consistency(index, &root, size, &root, &hashes);
    // The fixed log with one resource replaced by the input.
    let fixture = log_fixture();
    let names: Vec<&String> = fixture.log.files().keys().collect();
    let name = names[first as usize % names.len()].clone();
    let honest = fixture.log.files()[&name].clone();
    let mut source = fixture.log.clone();
    source.files_mut().insert(name.clone(), rest.to_vec());
    let verified = verify_log(&source, &fixture.pins, None, &mut |_, _| Ok(()));
    if rest != honest.as_slice() && name != "checkpoint" {
        // A changed resource the client reads makes it refuse; one it does not read (a hash
        // tile, when reading from scratch) changes nothing.
        if name.starts_with("tile/entries/") {
            assert!(verified.is_err(), "a changed entry bundle {name} was accepted");
        }
    }
    if let Ok(v) = verified {
        assert_eq!(v.checkpoint.root, fixture.log.root());
    }
    let previous = fixture.known.clone();
    let _ = verify_log(&source, &fixture.pins, Some(&previous), &mut |_, _| Ok(()));
});
