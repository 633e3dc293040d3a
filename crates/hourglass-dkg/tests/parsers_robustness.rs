//! The distributed key generation's parsers survive arbitrary damage to valid inputs (seeded,
//! so every run tries the same inputs): wire frames, share files and cluster configurations
//! never panic, and whatever still parses says exactly what its bytes say.
//!
//! - A frame that decodes re-encodes to exactly its bytes, and every truncation or extension
//!   of a valid frame is refused (the header carries the payload length).
//! - A share file that parses serialises and parses back to the same share, and its numbers
//!   are the ones written in the damaged JSON: a changed `n` or `d_share` is accepted only
//!   when the file really says so.
//! - A cluster configuration that loads holds the ids, addresses, name and settings written in
//!   the damaged TOML, the certificates of the files it names, and its own id is the party
//!   whose certificate belongs to the key file it names.
//!
//! - A transcript (v1, or v2 signed by every member) that parses has the original's fields,
//!   round-trips exactly, and (v2) verifies only with the original's signatures.
//!
//! The fuzz targets `dkg_frame`, `dkg_share` and `dkg_cluster` (in `fuzz/`) explore the same
//! parsers without a seed; a crash they find becomes a case here.

use std::cell::Cell;
use std::path::{Path, PathBuf};

use hourglass_arith::entropy::SeededEntropy;
use hourglass_dkg::cluster::{init_cluster, ClusterConfig};
use hourglass_dkg::keyshare::KeyShare;
use hourglass_dkg::params::Settings;
use hourglass_dkg::wire::{Frame, Kind, Reader, Tag, Writer};
use hourglass_dkg::Integer;
use hourglass_rsa::{KeyGenOptions, Variant};
use hourglass_testkit::{damage, mutation, Mutation};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;

/// A deterministic runner of `cases` cases (no regression file: the seed is fixed).
fn runner(cases: u32, seed: u8) -> TestRunner {
    let config = Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    };
    TestRunner::new_with_rng(
        config,
        TestRng::from_seed(RngAlgorithm::ChaCha, &[seed; 32]),
    )
}

/// One to three random mutations.
fn mutations() -> impl Strategy<Value = Vec<Mutation>> {
    proptest::collection::vec(mutation(), 1..4)
}

// ---------------------------------------------------------------------------------------------
// Wire frames

fn valid_frames() -> Vec<Vec<u8>> {
    let frame = |kind, step, payload| Frame {
        kind,
        session: *b"robustness tests",
        tag: Tag {
            epoch: 1,
            round: 42,
            step,
        },
        sender: 3,
        payload,
    };
    let mut ints = Writer::new();
    ints.int(&Integer::from(65537))
        .int(&Integer::ZERO)
        .int(&((Integer::from(1) << 512) - 569u32))
        .bytes(b"tail");
    let mut hello = Writer::new();
    hello
        .bytes(&[0x5a; 32])
        .bytes(&[0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3]);
    vec![
        frame(Kind::Data, 2, ints.finish()).encode(),
        frame(Kind::Hello, 0, hello.finish()).encode(),
        frame(Kind::Abort, 9, Vec::new()).encode(),
    ]
}

/// Reads a payload every way the protocol does; none may panic, and what is read is in range.
fn read_payload(payload: &[u8]) {
    // Byte strings read to the end re-encode to the payload. (A failed read may already have
    // consumed its length prefix, so `end()` after an error says nothing: the protocol stops
    // at the first error.)
    let mut r = Reader::new(payload);
    let mut w = Writer::new();
    loop {
        if r.end().is_ok() {
            assert_eq!(
                w.finish(),
                payload,
                "byte strings read to the end re-encode"
            );
            break;
        }
        match r.bytes() {
            Ok(b) => {
                w.bytes(b);
            }
            Err(_) => break,
        }
    }
    let bound = Integer::from(1) << 600;
    let mut r = Reader::new(payload);
    while let Ok(x) = r.int_below(&bound) {
        assert!(x >= 0 && x < bound);
    }
    let _ = r.end();
    let mut r = Reader::new(payload);
    while let Ok(xs) = r.ints_below(2, &Integer::from(1u32 << 20)) {
        assert_eq!(xs.len(), 2);
    }
    let _ = r.end();
}

#[test]
fn truncated_or_extended_frames_never_decode() {
    for bytes in valid_frames() {
        let frame = Frame::decode(&bytes).unwrap();
        assert_eq!(frame.encode(), bytes);
        read_payload(&frame.payload);
        for cut in 0..bytes.len() {
            assert!(
                Frame::decode(&bytes[..cut]).is_err(),
                "a frame cut to {cut} of {} bytes decoded",
                bytes.len()
            );
        }
        for extra in [&[0u8][..], &[0, 0, 0, 0], b"HGDK"] {
            let mut longer = bytes.clone();
            longer.extend_from_slice(extra);
            assert!(Frame::decode(&longer).is_err(), "trailing bytes accepted");
        }
    }
}

#[test]
fn damaged_frames_never_panic_and_decode_only_to_their_own_bytes() {
    let frames = valid_frames();
    let decoded = Cell::new(0usize);
    runner(3000, 11)
        .run(&(0..frames.len(), mutations()), |(which, muts)| {
            let data = damage(frames[which].clone(), &muts);
            read_payload(&data);
            if let Ok(frame) = Frame::decode(&data) {
                decoded.set(decoded.get() + 1);
                prop_assert_eq!(frame.encode(), data, "{:?}", muts);
                read_payload(&frame.payload);
            }
            Ok(())
        })
        .unwrap();
    // Flips and digit changes in the header fields and the payload keep frames decodable.
    assert!(
        decoded.get() > 300,
        "only {} damaged frames decoded",
        decoded.get()
    );
}

// ---------------------------------------------------------------------------------------------
// Share files

/// The three share files of a cluster over a 512-bit modulus. The parser does not check the
/// shares against each other, so the exponent shares are made up (and signed as real ones).
fn valid_shares() -> Vec<String> {
    let mut rng = SeededEntropy::new(b"hourglass dkg parser robustness");
    let key = KeyGenOptions::new(512, Variant::Standard)
        .allow_insecure(true)
        .generate(&mut rng)
        .unwrap();
    (1..=3u32)
        .map(|party| {
            let d = Integer::from(key.public().n() >> (2 + party));
            let d = if party == 1 { d } else { -d };
            let share = KeyShare::new(
                "robustness".into(),
                *b"robustness tests",
                party,
                vec![1, 2, 3],
                key.public_key(),
                hourglass_arith::secret::SecretInt::new(d),
            );
            share.to_json().to_string()
        })
        .collect()
}

/// A signed hex number exactly as the share format writes it: an optional `-`, then one or
/// more hex digits (either case), nothing else.
fn strict_hex(s: &str) -> Option<Integer> {
    let (neg, digits) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let v = Integer::from_str_radix(digits, 16).ok()?;
    Some(if neg { -v } else { v })
}

/// Whether `share` holds exactly what the JSON `text` says (read independently of the
/// parser, with `serde_json::Value`).
fn share_says_what_the_json_says(share: &KeyShare, text: &str) -> std::result::Result<(), String> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let field = |name: &str| v.get(name).ok_or(format!("no {name}"));
    let str_field = |name: &str| {
        field(name)?
            .as_str()
            .map(str::to_owned)
            .ok_or(format!("{name} is not a string"))
    };
    let n = strict_hex(&str_field("n")?).ok_or("n is not strict hex")?;
    let d = strict_hex(&str_field("d_share")?).ok_or("d_share is not strict hex")?;
    let members: Vec<u64> = field("members")?
        .as_array()
        .ok_or("members is not an array")?
        .iter()
        .map(|m| m.as_u64().ok_or("member is not an id"))
        .collect::<std::result::Result<_, _>>()?;
    let checks = [
        ("n", share.public.n() == &n),
        (
            "e",
            field("e")?.as_u64().map(Integer::from).as_ref() == Some(share.public.e()),
        ),
        ("d_share", share.d_share() == &d),
        (
            "party",
            field("party")?.as_u64() == Some(u64::from(share.party)),
        ),
        (
            "members",
            members
                == share
                    .members
                    .iter()
                    .map(|&m| u64::from(m))
                    .collect::<Vec<_>>(),
        ),
        ("cluster", str_field("cluster")? == share.cluster),
        (
            "session",
            str_field("session")?.to_lowercase() == hex::encode(share.session),
        ),
        (
            "format",
            str_field("format")? == hourglass_dkg::keyshare::SHARE_FORMAT,
        ),
    ];
    match checks.iter().find(|(_, ok)| !ok) {
        Some((name, _)) => Err(format!("{name} differs from the JSON")),
        None => Ok(()),
    }
}

fn same_share(a: &KeyShare, b: &KeyShare) -> bool {
    a.cluster == b.cluster
        && a.session == b.session
        && a.party == b.party
        && a.members == b.members
        && a.public.n() == b.public.n()
        && a.public.e() == b.public.e()
        && a.d_share() == b.d_share()
}

#[test]
fn valid_share_files_round_trip() {
    for text in valid_shares() {
        let share = KeyShare::from_json(&text).unwrap();
        share_says_what_the_json_says(&share, &text).unwrap();
        assert_eq!(*share.to_json(), text);
        for cut in 0..text.trim_end().len() {
            assert!(
                KeyShare::from_json(&text[..cut]).is_err(),
                "cut at {cut} parsed"
            );
        }
    }
}

#[test]
fn damaged_share_files_never_panic_and_say_what_the_json_says() {
    let files = valid_shares();
    let originals: Vec<KeyShare> = files
        .iter()
        .map(|t| KeyShare::from_json(t).unwrap())
        .collect();
    let parsed = Cell::new(0usize);
    let changed_numbers = Cell::new(0usize);
    runner(3000, 12)
        .run(&(0..files.len(), mutations()), |(which, muts)| {
            let data = damage(files[which].clone().into_bytes(), &muts);
            let Ok(text) = std::str::from_utf8(&data) else {
                // A share file is text; the loader reads it as UTF-8 and refuses anything else.
                return Ok(());
            };
            let Ok(share) = KeyShare::from_json(text) else {
                return Ok(());
            };
            parsed.set(parsed.get() + 1);
            let original = &originals[which];
            if share.public.n() != original.public.n() || share.d_share() != original.d_share() {
                changed_numbers.set(changed_numbers.get() + 1);
            }
            if let Err(why) = share_says_what_the_json_says(&share, text) {
                return Err(TestCaseError::fail(format!("{why}: {muts:?}\n{text}")));
            }
            let json = share.to_json();
            let again = KeyShare::from_json(&json)
                .map_err(|e| TestCaseError::fail(format!("to_json does not parse: {e}")))?;
            prop_assert!(same_share(&share, &again), "round trip changed the share");
            prop_assert_eq!(&*again.to_json(), &*json);
            Ok(())
        })
        .unwrap();
    // Digit changes keep the JSON well formed and usually keep the share parseable, with a
    // different modulus or exponent share: the case the oracle above is about.
    assert!(
        parsed.get() > 300,
        "only {} damaged shares parsed",
        parsed.get()
    );
    assert!(
        changed_numbers.get() > 100,
        "only {} parsed shares had a changed n or d_share",
        changed_numbers.get()
    );
}

// ---------------------------------------------------------------------------------------------
// Cluster configurations

/// A three-party cluster written by `init_cluster`, with the bytes of its key files.
struct Cluster {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
    configs: Vec<String>,
    keys: Vec<Vec<u8>>,
}

fn cluster() -> Cluster {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("cluster");
    let paths = init_cluster(&dir, 3, &Settings::new(512), 7101, "robustness").unwrap();
    let configs = paths
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    let keys = (1..=3)
        .map(|i| std::fs::read(dir.join(format!("keys/party-{i}.key.pem"))).unwrap())
        .collect();
    Cluster {
        _tmp: tmp,
        dir,
        configs,
        keys,
    }
}

/// Whether `config` holds what the TOML `text` says (read independently with `toml::Table`):
/// name, settings, ids and addresses in order, the certificates of the named files, and as
/// its own id the party whose certificate is that of the named key file's party.
fn config_says_what_the_toml_says(
    config: &ClusterConfig,
    text: &str,
    c: &Cluster,
) -> std::result::Result<(), String> {
    let table: toml::Table = toml::from_str(text).map_err(|e| format!("not TOML: {e}"))?;
    let name = table.get("name").and_then(|v| v.as_str());
    if name != Some(config.name.as_str()) {
        return Err(format!("name {:?} but the file says {name:?}", config.name));
    }
    let generation: Settings = table
        .get("generation")
        .cloned()
        .ok_or("no [generation]")?
        .try_into()
        .map_err(|e| format!("[generation]: {e}"))?;
    if generation != config.generation {
        return Err(format!(
            "{:?} but the file says {generation:?}",
            config.generation
        ));
    }
    let parties = table
        .get("party")
        .and_then(|v| v.as_array())
        .ok_or("no [[party]]")?;
    if parties.len() != config.parties.len() {
        return Err("a different number of parties".into());
    }
    for (p, entry) in parties.iter().zip(&config.parties) {
        let id = p.get("id").and_then(|v| v.as_integer());
        if id != Some(i64::from(entry.id)) {
            return Err(format!("id {} but the file says {id:?}", entry.id));
        }
        let address = p.get("address").and_then(|v| v.as_str());
        if address != Some(entry.address.as_str()) {
            return Err(format!(
                "address {} but the file says {address:?}",
                entry.address
            ));
        }
        let cert_path = p
            .get("certificate")
            .and_then(|v| v.as_str())
            .ok_or("no certificate")?;
        let der = CertificateDer::from_pem_file(c.dir.join(cert_path))
            .map_err(|e| format!("certificate {cert_path}: {e}"))?;
        if der.as_ref() != entry.certificate.as_slice() {
            return Err(format!(
                "party {} has not the certificate of {cert_path}",
                entry.id
            ));
        }
    }
    let key_path = table.get("key").and_then(|v| v.as_str()).ok_or("no key")?;
    let key = std::fs::read(c.dir.join(key_path)).map_err(|e| format!("key {key_path}: {e}"))?;
    let owner = c
        .keys
        .iter()
        .position(|k| *k == key)
        .ok_or("key is none of the cluster's")?
        + 1;
    let owner_cert =
        CertificateDer::from_pem_file(c.dir.join(format!("certs/party-{owner}.crt.pem")))
            .map_err(|e| e.to_string())?;
    let own = config.own_id().ok_or("no own id")?;
    let own_cert = &config
        .party(own)
        .ok_or("own id is not a party")?
        .certificate;
    if own_cert.as_slice() != owner_cert.as_ref() {
        return Err(format!(
            "own id {own} is not the party of key file {key_path}"
        ));
    }
    Ok(())
}

fn check_loaded(config: &ClusterConfig) {
    let ids = config.ids();
    assert!(ids.len() >= 3 && ids[0] != 0);
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "ids are distinct");
    config.generation.validate().unwrap();
}

#[test]
fn every_configuration_of_a_fresh_cluster_loads_as_its_party() {
    let c = cluster();
    for (i, text) in c.configs.iter().enumerate() {
        let path = c.dir.join(format!("party-{}.toml", i + 1));
        let config = ClusterConfig::load(&path).unwrap();
        check_loaded(&config);
        assert_eq!(config.own_id(), Some(i as u32 + 1));
        config_says_what_the_toml_says(&config, text, &c).unwrap();
    }
}

#[test]
fn damaged_cluster_configurations_never_panic_and_say_what_the_toml_says() {
    let c = cluster();
    let path: &Path = &c.dir.join("damaged.toml");
    let loaded = Cell::new(0usize);
    let changed = Cell::new(0usize);
    runner(2500, 13)
        .run(&(0..c.configs.len(), mutations()), |(which, muts)| {
            let data = damage(c.configs[which].clone().into_bytes(), &muts);
            std::fs::write(path, &data).unwrap();
            let Ok(config) = ClusterConfig::load(path) else {
                return Ok(());
            };
            loaded.set(loaded.get() + 1);
            check_loaded(&config);
            // Loaded from UTF-8 text, necessarily.
            let text = std::str::from_utf8(&data).unwrap();
            if text != c.configs[which] {
                changed.set(changed.get() + 1);
            }
            if let Err(why) = config_says_what_the_toml_says(&config, text, &c) {
                return Err(TestCaseError::fail(format!("{why}: {muts:?}\n{text}")));
            }
            Ok(())
        })
        .unwrap();
    assert!(
        loaded.get() > 100,
        "only {} damaged configurations loaded",
        loaded.get()
    );
    assert!(
        changed.get() > 50,
        "only {} loaded with changes",
        changed.get()
    );
}

/// Damaged transcript files never panic the parser, and one that still parses has a
/// fingerprint matching its fields (an edited field is caught) and round-trips exactly.
#[test]
fn damaged_transcripts_never_panic_and_never_pass_an_edit() {
    use hourglass_dkg::transcript::PublicTranscript;
    let original = PublicTranscript::of(&KeyShare::from_json(&valid_shares()[0]).unwrap());
    let text = original.to_json();
    let parsed = Cell::new(0usize);
    runner(3000, 13)
        .run(&mutations(), |muts| {
            let data = damage(text.clone().into_bytes(), &muts);
            let Ok(s) = std::str::from_utf8(&data) else {
                return Ok(());
            };
            let Ok(t) = PublicTranscript::from_json(s) else {
                return Ok(());
            };
            parsed.set(parsed.get() + 1);
            // Whatever still parses says the same as the original (whitespace damage only).
            prop_assert_eq!(&t, &original, "an edited transcript passed its fingerprint");
            prop_assert_eq!(PublicTranscript::from_json(&t.to_json()).unwrap(), t);
            Ok(())
        })
        .unwrap();
    assert!(
        parsed.get() > 0,
        "no damaged transcript parsed: the test cannot see a pass"
    );
}

/// Damaged signed (v2) transcripts never panic the parser; one that still parses has the
/// original's fields (the fingerprint covers them), round-trips exactly, and verifies against
/// the members' certificates only if its signatures are the original's (signatures are not
/// fingerprinted, so damage to them parses, and must then fail verification).
#[test]
fn damaged_signed_transcripts_never_panic_and_never_verify_an_edit() {
    use hourglass_dkg::transcript::{SignedTranscript, TranscriptSigner};
    use rustls::pki_types::PrivateKeyDer;
    use std::collections::BTreeMap;

    let share = KeyShare::from_json(&valid_shares()[0]).unwrap();
    let identities: Vec<(PrivateKeyDer<'static>, Vec<u8>)> = share
        .members
        .iter()
        .map(|m| {
            let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
            let cert = rcgen::CertificateParams::new(vec![format!("p{m}.hourglass.invalid")])
                .unwrap()
                .self_signed(&key)
                .unwrap();
            (
                PrivateKeyDer::Pkcs8(key.serialize_der().into()),
                cert.der().to_vec(),
            )
        })
        .collect();
    let certificates: BTreeMap<u32, Vec<u8>> = share
        .members
        .iter()
        .copied()
        .zip(identities.iter().map(|(_, c)| c.clone()))
        .collect();
    let pinned: Vec<Vec<u8>> = certificates.values().cloned().collect();
    let signers: Vec<TranscriptSigner> = share
        .members
        .iter()
        .zip(&identities)
        .map(|(&m, (key, _))| TranscriptSigner::new(m, key, certificates.clone()).unwrap())
        .collect();
    let transcript = signers[0].transcript(&share, 1).unwrap();
    let signatures = signers
        .iter()
        .map(|s| s.sign(&transcript).unwrap())
        .collect();
    let original = SignedTranscript::new(transcript, signatures).unwrap();
    original.verify(&pinned).unwrap();
    let text = original.to_json();
    let parsed = Cell::new(0usize);
    let resigned = Cell::new(0usize);
    runner(3000, 17)
        .run(&mutations(), |muts| {
            let data = damage(text.clone().into_bytes(), &muts);
            let Ok(s) = std::str::from_utf8(&data) else {
                return Ok(());
            };
            let Ok(t) = SignedTranscript::from_json(s) else {
                return Ok(());
            };
            parsed.set(parsed.get() + 1);
            prop_assert_eq!(
                t.transcript(),
                original.transcript(),
                "an edited transcript passed its fingerprint"
            );
            prop_assert_eq!(
                SignedTranscript::from_json(&t.to_json()).unwrap(),
                t.clone()
            );
            if t.signatures() == original.signatures() {
                prop_assert!(t.verify(&pinned).is_ok());
            } else {
                resigned.set(resigned.get() + 1);
                prop_assert!(t.verify(&pinned).is_err(), "damaged signatures verified");
            }
            Ok(())
        })
        .unwrap();
    assert!(
        parsed.get() > 0,
        "no damaged transcript parsed: the test cannot see a pass"
    );
    assert!(
        resigned.get() > 0,
        "no damaged signature parsed: the test cannot see a forged signature refused"
    );
}
