//! Writes seed corpora for the fuzz targets: small insecure keys of every variant, private and
//! public, in every form hourglass writes (PKCS#8 / SPKI PEM, PKCS#1 PEM, DER, hex, JSON), plus
//! bare PKCS#1 DER (which the decoder accepts but never writes) and a few near-miss inputs;
//! and for the distributed key generation's parsers: wire frames of every kind, share files
//! and cluster configurations; and for the RFC 3161 targets: queries, and replies and tokens of
//! the fixed fuzz TSA and of OpenSSL's (`openssl ts`, skipped with a note when `openssl` is not
//! on PATH).
//!
//! Run from the repository root or from `fuzz/`:
//!
//! ```text
//! cargo run --manifest-path fuzz/Cargo.toml --example gen_corpus
//! ```
//!
//! The keys are deterministic (fixed seeds), so the corpus is the same on every run (except the
//! OpenSSL seeds, which carry fresh keys and the time they were made).

use std::path::{Path, PathBuf};

use hourglass_arith::entropy::SeededEntropy;
use hourglass_dkg::cluster::init_cluster;
use hourglass_dkg::keyshare::KeyShare;
use hourglass_dkg::params::Settings;
use hourglass_dkg::wire::{Frame, Kind, Tag, Writer};
use hourglass_dkg::Integer;
use hourglass_rsa::encoding::{encode_private_key, encode_public_key, KeyFormat};
use hourglass_rsa::{HashAlg, KeyGenOptions, Variant};

const TARGETS: [&str; 3] = ["decode_private_key", "decode_public_key", "decode_key"];

fn format_name(f: KeyFormat) -> &'static str {
    match f {
        KeyFormat::Pem => "pkcs8",
        KeyFormat::Pkcs1 => "pkcs1",
        KeyFormat::Der => "der",
        KeyFormat::Hex => "hex",
        KeyFormat::Json => "json",
    }
}

/// Writes `seeds` into `corpus/target/seed-NAME`.
fn write_seeds(root: &Path, target: &str, seeds: &[(String, Vec<u8>)]) {
    let dir = root.join(target);
    std::fs::create_dir_all(&dir).expect("create corpus directory");
    for (name, bytes) in seeds {
        std::fs::write(dir.join(format!("seed-{name}")), bytes).expect("write seed");
    }
    println!("wrote {} seeds into {}", seeds.len(), dir.display());
}

/// The transparency log's text seeds: the fixed log's checkpoint, its key, a witness request,
/// a state file; and its binary seeds: every resource of the fixed log, each prefixed with the
/// byte that makes `log_tile` replace that resource.
fn log_seeds() -> (Vec<(String, Vec<u8>)>, Vec<(String, Vec<u8>)>) {
    use hourglass_log::checkpoint::SignedCheckpoint;
    use hourglass_log::witness::AddCheckpoint;
    let f = hourglass_fuzz::log_fixture();
    let cp = f.log.files()["checkpoint"].clone();
    let parsed = SignedCheckpoint::parse(&cp).expect("the fixture's checkpoint");
    let mut notes = vec![
        ("checkpoint".to_string(), cp.clone()),
        ("key".to_string(), format!("{}\n", f.pins.log().encode()).into_bytes()),
        ("state".to_string(), f.known.to_json().into_bytes()),
        ("request".to_string(), AddCheckpoint::encode(0, &[], &parsed)),
    ];
    notes.push(("request-proof".to_string(), {
        let mut b = b"old 100\n".to_vec();
        b.extend_from_slice(b"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n\n");
        b.extend_from_slice(&cp);
        b
    }));
    let names: Vec<&String> = f.log.files().keys().collect();
    let tiles = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let mut b = vec![i as u8];
            b.extend_from_slice(&f.log.files()[*name]);
            (format!("{i}-{}", name.replace('/', "_")), b)
        })
        .collect();
    (notes, tiles)
}

/// Frames of every kind, with integer, byte-string and empty payloads.
fn dkg_frames() -> Vec<(String, Vec<u8>)> {
    let frame = |kind, round, step, payload| Frame {
        kind,
        session: *b"hourglass seeds!",
        tag: Tag {
            epoch: 0,
            round,
            step,
        },
        sender: 2,
        payload,
    };
    let mut ints = Writer::new();
    ints.int(&Integer::from(65537))
        .int(&Integer::ZERO)
        .int(&((Integer::from(1) << 512) - 569u32));
    let mut hello = Writer::new();
    hello
        .bytes(&[0x5a; 32])
        .bytes(b"\x00\x00\x00\x01\x00\x00\x00\x02\x00\x00\x00\x03");
    let mut abort = Writer::new();
    abort.int(&Integer::from(3));
    let mut fatal = Writer::new();
    fatal
        .bytes(b"bad message from party 3")
        .bytes(&3u32.to_be_bytes());
    vec![
        (
            "hello".into(),
            frame(Kind::Hello, 0, 0, hello.finish()).encode(),
        ),
        (
            "data-ints".into(),
            frame(Kind::Data, 7, 2, ints.finish()).encode(),
        ),
        (
            "data-empty".into(),
            frame(Kind::Data, 1, 1, Vec::new()).encode(),
        ),
        (
            "abort".into(),
            frame(Kind::Abort, u64::MAX, 0, abort.finish()).encode(),
        ),
        (
            "fatal".into(),
            frame(Kind::Fatal, u64::MAX, u16::MAX - 1, fatal.finish()).encode(),
        ),
    ]
}

/// Share files of a three-party cluster over a 512-bit modulus (the parser does not check
/// the shares against each other, so the exponent shares are made up).
fn dkg_shares() -> Vec<(String, Vec<u8>)> {
    let mut rng = SeededEntropy::new(b"hourglass fuzz corpus dkg share");
    let key = KeyGenOptions::new(512, Variant::Standard)
        .allow_insecure(true)
        .generate(&mut rng)
        .expect("a 512-bit key");
    (1..=3u32)
        .map(|party| {
            let d = Integer::from(key.public().n() >> (3 + party));
            let d = if party == 1 { d } else { -d };
            let share = KeyShare::new(
                "fuzz-cluster".into(),
                *b"hourglass seeds!",
                party,
                vec![1, 2, 3],
                key.public_key(),
                d.into(),
            );
            (
                format!("share-{party}"),
                share.to_json().as_bytes().to_vec(),
            )
        })
        .collect()
}

/// The configurations `init_cluster` writes (the certificates and keys are not part of the
/// seeds; `dkg_cluster` makes its own), with default and with explicit settings.
fn dkg_clusters() -> Vec<(String, Vec<u8>)> {
    let tmp = std::env::temp_dir().join(format!("hourglass-gen-corpus-{}", std::process::id()));
    let mut seeds = Vec::new();
    let mut explicit = Settings::new(1024);
    explicit.sieve_bound = Some(3000);
    explicit.batch = 4;
    for (name, settings) in [("default", Settings::new(512)), ("explicit", explicit)] {
        let dir = tmp.join(name);
        let paths = init_cluster(&dir, 3, &settings, 7101, "fuzz-cluster").expect("init_cluster");
        for (i, path) in paths.iter().enumerate() {
            let text = std::fs::read(path).expect("read the configuration");
            seeds.push((format!("cluster-{name}-party-{}", i + 1), text));
        }
    }
    std::fs::remove_dir_all(&tmp).expect("remove the temporary cluster");
    seeds
}

/// The committed time-lock vectors whose names pass `keep`.
fn timelock_vectors(keep: impl Fn(&str) -> bool) -> Vec<(String, Vec<u8>)> {
    let base =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates/hourglass-timelock/tests/vectors");
    let mut seeds = Vec::new();
    for dir in [base.clone(), base.join("v1")] {
        let mut names: Vec<_> = std::fs::read_dir(&dir)
            .expect("the time-lock vectors")
            .filter_map(|e| e.ok())
            .filter(|e| e.path().is_file())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| keep(n))
            .collect();
        names.sort();
        let prefix = if dir == base { "" } else { "v1-" };
        for name in names {
            let bytes = std::fs::read(dir.join(&name)).expect("read a vector");
            seeds.push((format!("{prefix}{name}"), bytes));
        }
    }
    seeds
}

/// Checkpoint seeds: whole files under the target's key, and bodies (what the target
/// authenticates itself).
fn checkpoints() -> Vec<(String, Vec<u8>)> {
    use hourglass_arith::checkpoint::{Checkpoint, CheckpointKey};
    use hourglass_arith::squaring::SquaringState;
    let key = CheckpointKey::from_bytes(hourglass_fuzz::CHECKPOINT_KEY);
    let mut seeds = Vec::new();
    for (name, aux) in [("plain", Vec::new()), ("aux", vec![7u8; 32])] {
        let file = Checkpoint {
            context: b"hourglass-puzzle-solve-v1\0fingerprint and input".to_vec(),
            block: 16384,
            total: 1 << 20,
            state: SquaringState {
                done: 16384,
                x: rug::Integer::from(0x1234_5678u32) << 1000u32,
                check: rug::Integer::from(99u32),
            },
            aux,
        }
        .to_bytes(&key);
        seeds.push((format!("{name}-body"), file[..file.len() - 32].to_vec()));
        seeds.push((format!("{name}-file"), file));
    }
    seeds
}

/// Queries for the `timestamp_query` target (and the fixed TSA's replies to them, for
/// `timestamp_token`): every accepted hash, with and without a nonce, the TSA's policy and
/// another, and a nonce with its top bit set.
fn timestamp_queries() -> Vec<(String, Vec<u8>)> {
    use hourglass_timestamp::{PolicyId, Query};
    let mut rng = SeededEntropy::new(b"hourglass fuzz corpus timestamp queries");
    let other = PolicyId::parse("1.2.3.4.1").expect("a policy");
    let mut seeds = Vec::new();
    for (name, hash) in [
        ("sha256", HashAlg::Sha256),
        ("sha384", HashAlg::Sha384),
        ("sha512", HashAlg::Sha512),
    ] {
        for (nonce, policy, label) in [
            (true, None, "nonce"),
            (false, None, "plain"),
            (true, Some(PolicyId::hourglass()), "policy"),
            (false, Some(other.clone()), "other-policy"),
        ] {
            let q = Query::for_data(hash, b"a bundle", nonce, policy, &mut rng).expect("a query");
            seeds.push((format!("query-{name}-{label}"), q.to_der().to_vec()));
        }
    }
    let q =
        Query::for_digest(HashAlg::Sha256, &[7; 32], Some(vec![0xff; 8]), None).expect("a query");
    seeds.push(("query-high-nonce".into(), q.to_der().to_vec()));
    seeds
}

/// The fixed TSA's replies to `queries` (granted, with and without its certificates, and
/// rejections) and the bare tokens inside the granted ones.
fn fixed_tsa_tokens(queries: &[(String, Vec<u8>)]) -> Vec<(String, Vec<u8>)> {
    use hourglass_timestamp::token_of;
    let fixed = hourglass_fuzz::fuzz_tsa();
    let mut rng = SeededEntropy::new(b"hourglass fuzz corpus timestamp tokens");
    let mut seeds = Vec::new();
    for (name, query) in queries {
        for (kind, tsa) in [("rsa", &fixed.tsa), ("ec", &fixed.ec_tsa)] {
            let reply = tsa.reply(query, &[1], hourglass_fuzz::tsa_time(), &mut rng);
            if let Ok(token) = token_of(&reply) {
                seeds.push((format!("fixed-{kind}-token-{name}"), token));
            }
            seeds.push((format!("fixed-{kind}-reply-{name}"), reply));
        }
    }
    // The real authorities' tokens and replies (ECDSA P-384 and RSA).
    let real = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../crates/hourglass-timestamp/tests/data/tsa");
    if let Ok(dirs) = std::fs::read_dir(&real) {
        for dir in dirs.flatten() {
            for file in ["token.der", "reply.tsr"] {
                if let Ok(bytes) = std::fs::read(dir.path().join(file)) {
                    let name = dir.file_name().to_string_lossy().into_owned();
                    seeds.push((format!("real-{name}-{file}"), bytes));
                }
            }
        }
    }
    seeds
}

/// Runs `openssl ARGS` in `dir`; false (with a note) when it cannot run or fails.
fn openssl(dir: &Path, args: &[&str]) -> bool {
    match std::process::Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
    {
        Ok(out) if out.status.success() => true,
        Ok(out) => {
            eprintln!(
                "openssl {}: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            );
            false
        }
        Err(e) => {
            eprintln!("openssl: {e}: skipping the OpenSSL timestamp seeds");
            false
        }
    }
}

/// OpenSSL's TSA configuration: ESS v1 (SHA-1 certificate hash, OpenSSL's default), and ESS
/// v2 with a fractional genTime, an accuracy in three units, ordering and the TSA's name.
const OPENSSL_TSA_CONFIG: &str = "\
[ tsa ]
default_tsa = ess_v1

[ ess_v1 ]
serial = ./serial
crypto_device = builtin
signer_digest = sha256
default_policy = 1.2.3.4.1
other_policies = 2.25.306263111566275780816363928834165067171.2
digests = sha1, sha256, sha384, sha512
accuracy = secs:1
ordering = no
tsa_name = no
ess_cert_id_chain = no
ess_cert_id_alg = sha1

[ ess_v2 ]
serial = ./serial
crypto_device = builtin
signer_digest = sha512
default_policy = 1.2.3.4.1
digests = sha256, sha384, sha512
accuracy = secs:1, millisecs:500, microsecs:100
clock_precision_digits = 3
ordering = yes
tsa_name = yes
ess_cert_id_chain = yes
ess_cert_id_alg = sha256

[ tsa_cert ]
basicConstraints = CA:FALSE
keyUsage = critical, digitalSignature, nonRepudiation
extendedKeyUsage = critical, timeStamping
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
";

/// Named seeds.
type Seeds = Vec<(String, Vec<u8>)>;

/// Queries made by `openssl ts -query` and OpenSSL's replies and tokens, signed by a TSA key
/// that OpenSSL certifies with the fixed fuzz CA (so they verify against the targets' anchor):
/// ESS v1 and v2, with and without the chain, granted and refused (a SHA-1 query is refused by
/// the ESS v2 section, which does not list SHA-1). Returns (queries, tokens and replies).
fn openssl_timestamps() -> (Seeds, Seeds) {
    let fixed = hourglass_fuzz::fuzz_tsa();
    let dir = std::env::temp_dir().join(format!("hourglass-gen-corpus-tsa-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let write = |name: &str, bytes: &[u8]| std::fs::write(dir.join(name), bytes).expect("write");
    write("tsa.cnf", OPENSSL_TSA_CONFIG.as_bytes());
    write("serial", b"2a\n");
    write("ca.pem", fixed.ca.to_pem().as_bytes());
    write(
        "ca.key",
        &encode_private_key(&fixed.ca_key, KeyFormat::Pem).expect("the CA key as PEM"),
    );
    write("bundle", b"a bundle sealed for the fuzz corpus\n");
    let (mut queries, mut tokens) = (Vec::new(), Vec::new());
    let made = openssl(
        &dir,
        &[
            "req",
            "-new",
            "-newkey",
            "rsa:1024",
            "-nodes",
            "-keyout",
            "tsa.key",
            "-subj",
            "/CN=OpenSSL fuzz TSA",
            "-out",
            "tsa.csr",
        ],
    ) && openssl(
        &dir,
        &[
            "x509",
            "-req",
            "-in",
            "tsa.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-set_serial",
            "7",
            "-days",
            "3000",
            "-sha256",
            "-extfile",
            "tsa.cnf",
            "-extensions",
            "tsa_cert",
            "-out",
            "tsa.pem",
        ],
    );
    if !made {
        let _ = std::fs::remove_dir_all(&dir);
        return (queries, tokens);
    }
    for (name, args) in [
        ("sha256-cert", &["-sha256", "-cert"][..]),
        (
            "sha512-policy",
            &["-sha512", "-cert", "-tspolicy", "1.2.3.4.1"],
        ),
        ("sha384-no-cert-no-nonce", &["-sha384", "-no_nonce"]),
        ("sha1", &["-sha1", "-cert"]),
    ] {
        let file = format!("{name}.tsq");
        let mut query = vec!["ts", "-query", "-data", "bundle", "-out", &file];
        query.extend_from_slice(args);
        if !openssl(&dir, &query) {
            continue;
        }
        queries.push((
            format!("openssl-query-{name}"),
            std::fs::read(dir.join(&file)).expect("read a query"),
        ));
        for section in ["ess_v1", "ess_v2"] {
            for (form, extra) in [
                ("reply", &["-chain", "ca.pem"][..]),
                ("reply-no-chain", &[]),
                ("token", &["-chain", "ca.pem", "-token_out"]),
            ] {
                // A refused query has no token to write.
                if name == "sha1" && section == "ess_v2" && form == "token" {
                    continue;
                }
                let out = format!("{name}-{section}-{form}.tsr");
                let mut reply = vec![
                    "ts",
                    "-reply",
                    "-config",
                    "tsa.cnf",
                    "-section",
                    section,
                    "-queryfile",
                    &file,
                    "-inkey",
                    "tsa.key",
                    "-signer",
                    "tsa.pem",
                    "-out",
                    &out,
                ];
                reply.extend_from_slice(extra);
                if openssl(&dir, &reply) {
                    tokens.push((
                        format!("openssl-{name}-{section}-{form}"),
                        std::fs::read(dir.join(&out)).expect("read a reply"),
                    ));
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    (queries, tokens)
}

fn main() {
    let root: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    let mut queries = timestamp_queries();
    let mut tokens = fixed_tsa_tokens(&queries);
    let (openssl_queries, openssl_tokens) = openssl_timestamps();
    tokens.extend(fixed_tsa_tokens(&openssl_queries));
    tokens.extend(openssl_tokens);
    queries.extend(openssl_queries);
    write_seeds(&root, "timestamp_query", &queries);
    write_seeds(&root, "timestamp_token", &tokens);
    write_seeds(
        &root,
        "puzzle_files",
        &timelock_vectors(|n| {
            [".pub", ".key", ".sol", ".bundle", ".json"]
                .iter()
                .any(|e| n.ends_with(e))
        }),
    );
    write_seeds(
        &root,
        "certificates",
        &timelock_vectors(|n| n.ends_with(".crt")),
    );
    write_seeds(
        &root,
        "tlock_header",
        &timelock_vectors(|n| n.ends_with(".tlock")),
    );
    write_seeds(&root, "checkpoint", &checkpoints());
    let vdf = Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates/hourglass-vdf/tests/vectors");
    let mut proofs: Vec<(String, Vec<u8>)> = std::fs::read_dir(&vdf)
        .expect("the VDF vectors")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| {
            let name = p
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            (name, std::fs::read(&p).expect("read a VDF vector"))
        })
        .collect();
    proofs.sort();
    write_seeds(&root, "vdf_proof", &proofs);
    let (notes, tiles) = log_seeds();
    write_seeds(&root, "log_note", &notes);
    write_seeds(&root, "log_tile", &tiles);
    write_seeds(&root, "dkg_frame", &dkg_frames());
    write_seeds(&root, "dkg_share", &dkg_shares());
    write_seeds(&root, "dkg_cluster", &dkg_clusters());
    let mut seeds: Vec<(String, Vec<u8>)> = Vec::new();
    for variant in Variant::ALL {
        let mut rng = SeededEntropy::new(format!("hourglass fuzz corpus {variant}").as_bytes());
        let key = match KeyGenOptions::new(512, variant)
            .allow_insecure(true)
            .generate(&mut rng)
        {
            Ok(k) => k,
            Err(e) => panic!("cannot generate a 512-bit {variant} key: {e}"),
        };
        for format in hourglass_fuzz::FORMATS {
            let private = encode_private_key(&key, format).expect("encode private");
            let public = encode_public_key(key.public(), format).expect("encode public");
            seeds.push((
                format!("{variant}-{}-private", format_name(format)),
                private.to_vec(),
            ));
            seeds.push((
                format!("{variant}-{}-public", format_name(format)),
                public.clone(),
            ));
            if format == KeyFormat::Pkcs1 {
                let (_, der) = pem_rfc7468::decode_vec(&private).expect("PKCS#1 PEM");
                seeds.push((format!("{variant}-pkcs1der-private"), der));
                let (_, der) = pem_rfc7468::decode_vec(&public).expect("PKCS#1 PEM");
                seeds.push((format!("{variant}-pkcs1der-public"), der));
            }
        }
    }
    // Near misses that exercise the error paths.
    for (name, bytes) in [
        ("empty", &b""[..]),
        (
            "encrypted",
            b"-----BEGIN ENCRYPTED PRIVATE KEY-----\nMAA=\n-----END ENCRYPTED PRIVATE KEY-----\n",
        ),
        (
            "certificate",
            b"-----BEGIN CERTIFICATE-----\nMAA=\n-----END CERTIFICATE-----\n",
        ),
        ("json-empty", b"{}"),
        ("hex-public-min", b"n = 10000000000000001\ne = 3\n"),
        ("hex-variant-only", b"variant = crt\n"),
    ] {
        seeds.push((name.to_string(), bytes.to_vec()));
    }
    for target in TARGETS {
        let dir = root.join(target);
        std::fs::create_dir_all(&dir).expect("create corpus directory");
        for (name, bytes) in &seeds {
            std::fs::write(dir.join(format!("seed-{name}")), bytes).expect("write seed");
        }
    }
    println!(
        "wrote {} seeds into each of {:?} under {}",
        seeds.len(),
        TARGETS,
        root.display()
    );
}
