//! `age-plugin-hourglass`: time-lock encryption for age.
//!
//! `age -r age1hourglass1... -o f.age f` wraps the file key behind `t` sequential squarings
//! (a fresh modulus per file, its factors forgotten), and `age -d -j hourglass f.age > f`
//! unwraps it by doing them, with progress messages through age. `hourglass timelock recipient
//! --duration 1h` makes a recipient. Formats: docs/FORMATS.md, section 14.1; the code that
//! seals and opens is `hourglass_timelock` (this binary only speaks age's plugin protocol).
//!
//! An interrupted decryption resumes: the verified squarings are checkpointed (authenticated
//! with the user's checkpoint key) in the hourglass state directory, named by the stanza.

#![forbid(unsafe_code)]

use std::collections::{HashMap, HashSet};
use std::io;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use age_core::format::{FileKey, Stanza, FILE_KEY_BYTES};
use age_core::secrecy::ExposeSecret;
use age_plugin::identity::{self, IdentityPluginV1};
use age_plugin::recipient::{self, RecipientPluginV1};
use age_plugin::{run_state_machine, Callbacks, PluginHandler};
use hourglass_arith::checkpoint::{CheckpointFile, CheckpointKey};
use hourglass_arith::entropy::OsEntropy;
use hourglass_timelock::age::{parse_stanza, wrap, AgeRecipient, STANZA_TAG};
use hourglass_timelock::tlock::{decrypt_body, solve_key, KeyOutcome, TlockHeader};
use hourglass_timelock::SolveOptions;

const HELP: &str = "\
age-plugin-hourglass: time-lock encryption for age (the file key opens after t squarings)

age starts this program; you do not run it directly. Make a recipient with hourglass:
  hourglass timelock recipient --duration 1h            (rate measured on this machine)
  hourglass timelock recipient --squarings 2000000000
Then:
  age -r age1hourglass1... -o file.age file      (encrypts at once)
  age -d -j hourglass file.age > file            (decrypts by doing the squarings)
An interrupted decryption resumes where it stopped (run the same command again).";

struct Handler;

impl PluginHandler for Handler {
    type RecipientV1 = Recipients;
    type IdentityV1 = Identities;

    fn recipient_v1(self) -> io::Result<Self::RecipientV1> {
        Ok(Recipients(Vec::new()))
    }

    fn identity_v1(self) -> io::Result<Self::IdentityV1> {
        Ok(Identities)
    }
}

/// The recipients age passed, in order.
struct Recipients(Vec<AgeRecipient>);

impl RecipientPluginV1 for Recipients {
    fn add_recipient(
        &mut self,
        index: usize,
        _plugin_name: &str,
        bytes: &[u8],
    ) -> Result<(), recipient::Error> {
        let r = AgeRecipient::from_bytes(bytes).map_err(|e| recipient::Error::Recipient {
            index,
            message: e.to_string(),
        })?;
        self.0.push(r);
        Ok(())
    }

    fn add_identity(
        &mut self,
        index: usize,
        _plugin_name: &str,
        _bytes: &[u8],
    ) -> Result<(), recipient::Error> {
        Err(recipient::Error::Identity {
            index,
            message: "encrypt to an age1hourglass1... recipient (hourglass timelock recipient)"
                .into(),
        })
    }

    fn labels(&mut self) -> HashSet<String> {
        // No label: a time-locked key may sit beside any other recipient's.
        HashSet::new()
    }

    fn wrap_file_keys(
        &mut self,
        file_keys: Vec<FileKey>,
        _callbacks: impl Callbacks<recipient::Error>,
    ) -> io::Result<Result<Vec<Vec<Stanza>>, Vec<recipient::Error>>> {
        let mut files = Vec::with_capacity(file_keys.len());
        let mut errors = Vec::new();
        for key in &file_keys {
            let mut stanzas = Vec::with_capacity(self.0.len());
            for (index, r) in self.0.iter().enumerate() {
                match wrap(key.expose_secret(), r, &mut OsEntropy) {
                    Ok(w) => stanzas.push(Stanza {
                        tag: STANZA_TAG.into(),
                        args: w.args,
                        body: w.body,
                    }),
                    Err(e) => errors.push(recipient::Error::Recipient {
                        index,
                        message: e.to_string(),
                    }),
                }
            }
            files.push(stanzas);
        }
        Ok(if errors.is_empty() {
            Ok(files)
        } else {
            Err(errors)
        })
    }
}

/// The plugin's identity carries nothing: anyone who does the squarings opens the key.
struct Identities;

impl IdentityPluginV1 for Identities {
    fn add_identity(
        &mut self,
        _index: usize,
        _plugin_name: &str,
        _bytes: &[u8],
    ) -> Result<(), identity::Error> {
        Ok(())
    }

    fn unwrap_file_keys(
        &mut self,
        files: Vec<Vec<Stanza>>,
        mut callbacks: impl Callbacks<identity::Error>,
    ) -> io::Result<HashMap<usize, Result<FileKey, Vec<identity::Error>>>> {
        let mut results = HashMap::new();
        for (file_index, stanzas) in files.iter().enumerate() {
            let mut errors = Vec::new();
            for (stanza_index, stanza) in stanzas.iter().enumerate() {
                if stanza.tag != STANZA_TAG {
                    continue; // Not ours: age's plugin protocol says to ignore it.
                }
                let fail = |message: String| identity::Error::Stanza {
                    file_index,
                    stanza_index,
                    message,
                };
                match open_stanza(stanza, &mut callbacks) {
                    Ok(key) => {
                        results.insert(file_index, Ok(key));
                        errors.clear();
                        break;
                    }
                    Err(message) => errors.push(fail(message)),
                }
            }
            if !errors.is_empty() {
                results.insert(file_index, Err(errors));
            }
        }
        Ok(results)
    }
}

/// Does a stanza's squarings (resuming a checkpoint) and returns the file key.
fn open_stanza(
    stanza: &Stanza,
    callbacks: &mut impl Callbacks<identity::Error>,
) -> Result<FileKey, String> {
    let header = parse_stanza(&stanza.args, &stanza.body).map_err(|e| e.to_string())?;
    let checkpoint = checkpoint_for(&header)?;
    let _ = callbacks.message(&format!(
        "hourglass: opening a time-locked file key: {} sequential squarings modulo a {}-bit n{}",
        header.t(),
        header.modulus_bits(),
        if checkpoint.path().exists() {
            " (resuming)"
        } else {
            ""
        }
    ));
    let options = SolveOptions {
        checkpoint: Some(checkpoint.clone()),
        ..SolveOptions::default()
    };
    let stop = AtomicBool::new(false);
    let mut last = Instant::now();
    let outcome = solve_key(&header, &options, &stop, &mut |p| {
        if last.elapsed() >= Duration::from_secs(10) {
            last = Instant::now();
            let eta = if p.rate > 0.0 {
                format!(", about {:.0} s left", (p.total - p.done) as f64 / p.rate)
            } else {
                String::new()
            };
            let _ = callbacks.message(&format!(
                "hourglass: {:.1}% ({} of {} squarings){eta}",
                100.0 * p.done as f64 / p.total.max(1) as f64,
                p.done,
                p.total
            ));
        }
    })
    .map_err(|e| e.to_string())?;
    let KeyOutcome::Recovered(content_key) = outcome else {
        return Err("the squarings stopped before the end".into());
    };
    let mut plain = Vec::with_capacity(FILE_KEY_BYTES);
    let body = &stanza.body[header.as_bytes().len()..];
    decrypt_body(&header, &content_key, &mut &body[..], &mut plain).map_err(|e| e.to_string())?;
    let key: [u8; FILE_KEY_BYTES] = plain
        .as_slice()
        .try_into()
        .map_err(|_| "the sealed file key has the wrong length".to_string())?;
    // The finished checkpoint reveals the key: it goes once the key is out.
    checkpoint.remove();
    Ok(FileKey::new(Box::new(key)))
}

/// The checkpoint of a stanza's squarings: in the state directory, named by the header.
fn checkpoint_for(header: &TlockHeader) -> Result<CheckpointFile, String> {
    let dir = CheckpointKey::state_dir()
        .map_err(|e| e.to_string())?
        .join("age");
    std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let name: String = header.digest()[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let key = CheckpointKey::for_user().map_err(|e| e.to_string())?;
    Ok(CheckpointFile::new(dir.join(format!("{name}.ckpt")), key))
}

fn main() {
    hourglass_arith::secret::wipe_gmp_memory();
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some(arg) if arg.starts_with("--age-plugin=") => {
            let state_machine = &arg["--age-plugin=".len()..];
            if let Err(e) = run_state_machine(state_machine, Handler) {
                eprintln!("age-plugin-hourglass: {e}");
                std::process::exit(2);
            }
        }
        Some("--version" | "-V") => println!("age-plugin-hourglass {}", env!("CARGO_PKG_VERSION")),
        Some("--help" | "-h") | None => println!("{HELP}"),
        Some(other) => {
            eprintln!("age-plugin-hourglass: unknown argument {other}\n\n{HELP}");
            std::process::exit(2);
        }
    }
}
