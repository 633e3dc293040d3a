//! Keeps `docs/FORMATS.md` honest: its test vectors must decode to one key (and its public
//! half), and encoding that key in each form must reproduce the documented block byte for byte.
//!
//! A test-vector block is a fenced code block whose info string carries `name=NAME`, for
//! example ```` ```text name=private-pkcs8 ````. Blocks named `*-der` hold the DER bytes as
//! lowercase hexadecimal, 32 bytes per line. To regenerate the vectors after a deliberate format
//! change:
//!
//! ```text
//! cargo test -p hourglass-rsa --test formats_doc -- --ignored --nocapture print_test_vectors
//! ```

use std::path::Path;

use hourglass_arith::entropy::SeededEntropy;
use hourglass_rsa::encoding::{
    decode_key, decode_private_key, encode_private_key, encode_public_key, KeyFormat,
};
use hourglass_rsa::{KeyGenOptions, PrivateKey, PublicKey, Variant};

/// The seed of the documented key (`KeyGenOptions::new(512, Variant::Rebalanced)`).
const SEED: &[u8] = b"hourglass docs/FORMATS.md test vector";

/// Block names, the form each one documents, and whether it holds a private key.
const BLOCKS: [(&str, KeyFormat, bool); 10] = [
    ("private-pkcs8", KeyFormat::Pem, true),
    ("private-pkcs1", KeyFormat::Pkcs1, true),
    ("private-der", KeyFormat::Der, true),
    ("private-hex", KeyFormat::Hex, true),
    ("private-json", KeyFormat::Json, true),
    ("public-spki", KeyFormat::Pem, false),
    ("public-pkcs1", KeyFormat::Pkcs1, false),
    ("public-der", KeyFormat::Der, false),
    ("public-hex", KeyFormat::Hex, false),
    ("public-json", KeyFormat::Json, false),
];

struct Block {
    name: String,
    info: String,
    /// The lines between the fences, each followed by `\n`.
    text: String,
}

/// Every fenced block whose info string has a `name=` attribute.
fn extract_blocks(markdown: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut lines = markdown.lines();
    while let Some(line) = lines.next() {
        let Some(info) = line.strip_prefix("```") else {
            continue;
        };
        let name = info
            .split_whitespace()
            .find_map(|word| word.strip_prefix("name="))
            .map(str::to_string);
        let mut text = String::new();
        let mut closed = false;
        for body in lines.by_ref() {
            if body.trim_end() == "```" {
                closed = true;
                break;
            }
            text.push_str(body);
            text.push('\n');
        }
        assert!(closed, "unterminated code block starting with {line:?}");
        if let Some(name) = name {
            blocks.push(Block {
                name,
                info: info.to_string(),
                text,
            });
        }
    }
    blocks
}

/// DER shown as lowercase hexadecimal, 32 bytes per line.
fn hex_lines(bytes: &[u8]) -> String {
    bytes
        .chunks(32)
        .map(|c| format!("{}\n", hex::encode(c)))
        .collect()
}

/// The bytes a block stands for.
fn block_bytes(block: &Block) -> Vec<u8> {
    if block.name.ends_with("-der") {
        let digits: String = block.text.split_whitespace().collect();
        hex::decode(digits).unwrap_or_else(|e| panic!("{}: not hexadecimal: {e}", block.name))
    } else {
        block.text.clone().into_bytes()
    }
}

/// How a key looks when documented in one form.
fn documented(key: &PrivateKey, name: &str, format: KeyFormat, private: bool) -> String {
    let bytes = if private {
        encode_private_key(key, format).unwrap().to_vec()
    } else {
        encode_public_key(key.public(), format).unwrap()
    };
    if name.ends_with("-der") {
        hex_lines(&bytes)
    } else {
        String::from_utf8(bytes).unwrap()
    }
}

fn same_private(a: &PrivateKey, b: &PrivateKey) -> bool {
    a.public() == b.public() && a.secret_components() == b.secret_components()
}

fn read_doc() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/FORMATS.md");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn documented_test_vectors_match_the_code() {
    let doc = read_doc();
    let blocks = extract_blocks(&doc);
    let names: Vec<&str> = blocks.iter().map(|b| b.name.as_str()).collect();
    let expected: Vec<&str> = BLOCKS.iter().map(|b| b.0).collect();
    assert_eq!(
        names, expected,
        "docs/FORMATS.md must have exactly these test-vector blocks, in this order"
    );

    // Decode every block; the private blocks must all be one key, the public ones its half.
    let mut private_keys: Vec<PrivateKey> = Vec::new();
    let mut public_keys: Vec<PublicKey> = Vec::new();
    for (block, &(name, _, private)) in blocks.iter().zip(BLOCKS.iter()) {
        match decode_key(&block_bytes(block)).unwrap_or_else(|e| panic!("{name}: {e}")) {
            Ok(key) => {
                assert!(
                    private,
                    "{name}: holds a private key, but its name says public"
                );
                private_keys.push(key);
            }
            Err(key) => {
                assert!(
                    !private,
                    "{name}: holds a public key, but its name says private"
                );
                public_keys.push(key);
            }
        }
    }
    assert_eq!((private_keys.len(), public_keys.len()), (5, 5));
    let key = &private_keys[3]; // From the hex block, which records the variant.
    assert_eq!(key.variant(), Some(Variant::Rebalanced));
    assert_eq!(
        private_keys[4].variant(),
        Some(Variant::Rebalanced),
        "JSON block variant"
    );
    for (i, other) in private_keys.iter().enumerate() {
        assert!(
            same_private(key, other),
            "{}: a different private key",
            BLOCKS[i].0
        );
    }
    for (i, public) in public_keys.iter().enumerate() {
        assert_eq!(
            public,
            key.public(),
            "{}: not the documented key's public half",
            BLOCKS[5 + i].0
        );
    }

    // Encoding the key reproduces every block byte for byte.
    for (block, &(name, format, private)) in blocks.iter().zip(BLOCKS.iter()) {
        let want = documented(key, name, format, private);
        assert_eq!(
            block.text, want,
            "{name}: the documented block differs from what the code writes"
        );
        let lang = block.info.split_whitespace().next().unwrap_or("");
        let expected_lang = if format == KeyFormat::Json {
            "json"
        } else {
            "text"
        };
        assert_eq!(lang, expected_lang, "{name}: language tag");
    }

    // The documented key is the 512-bit test key the doc says it is.
    assert_eq!(key.public().bits(), 512);
    let [_, _, _, dp, dq, _] = key.secret_components();
    assert!(dp.expose().significant_bits() < 256 && dq.expose().significant_bits() < 256);
}

#[test]
fn the_doc_names_every_json_field_and_variant() {
    let doc = read_doc();
    for word in [
        "\"type\"",
        "\"version\"",
        "\"variant\"",
        "\"bits\"",
        "\"n\"",
        "\"e\"",
        "\"d\"",
        "\"p\"",
        "\"q\"",
        "\"dp\"",
        "\"dq\"",
        "\"qinv\"",
        "hourglass-rsa-private-key",
        "hourglass-rsa-public-key",
    ] {
        assert!(
            doc.contains(word),
            "docs/FORMATS.md does not mention {word}"
        );
    }
    for variant in Variant::ALL {
        assert!(
            doc.contains(&format!("`{}`", variant.name())),
            "docs/FORMATS.md lacks variant {variant}"
        );
    }
    assert!(doc.contains(&hourglass_rsa::encoding::MAX_KEY_FILE.to_string()));
}

#[test]
fn a_private_block_is_not_a_public_one() {
    // Guards the extraction: the private DER block is not accepted as a bare public key.
    let doc = read_doc();
    let blocks = extract_blocks(&doc);
    let public_der = blocks
        .iter()
        .find(|b| b.name == "public-der")
        .expect("public-der block");
    assert!(decode_private_key(&block_bytes(public_der)).is_err());
}

/// Prints the test-vector blocks for docs/FORMATS.md (run with `--ignored --nocapture`).
#[test]
#[ignore = "generator for docs/FORMATS.md; run by hand"]
fn print_test_vectors() {
    let key = KeyGenOptions::new(512, Variant::Rebalanced)
        .allow_insecure(true)
        .generate(&mut SeededEntropy::new(SEED))
        .unwrap();
    for (name, format, private) in BLOCKS {
        let lang = if format == KeyFormat::Json {
            "json"
        } else {
            "text"
        };
        print!(
            "```{lang} name={name}\n{}```\n\n",
            documented(&key, name, format, private)
        );
    }
}
