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
//!
//! Of several hourglass stanzas in one file, the one with the fewest squarings left is opened.
//! The work is estimated before it starts (the squaring rate measured here for a quarter of a
//! second), announced through age when it is longer than a day, and refused past
//! `AGE_PLUGIN_HOURGLASS_MAX_TIME` (a duration such as `2h`).

#![forbid(unsafe_code)]

use std::collections::{HashMap, HashSet};
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use age_core::format::{FileKey, Stanza, FILE_KEY_BYTES};
use age_core::secrecy::ExposeSecret;
use age_plugin::identity::{self, IdentityPluginV1};
use age_plugin::recipient::{self, RecipientPluginV1};
use age_plugin::{run_state_machine, Callbacks, PluginHandler};
use hourglass_arith::checkpoint::{CheckpointFile, CheckpointKey};
use hourglass_arith::entropy::OsEntropy;
use hourglass_arith::squaring::measure_rate;
use hourglass_timelock::age::{stanzas_by_work, wrap, AgeRecipient, CheckedStanza, STANZA_TAG};
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
An interrupted decryption resumes where it stopped (run the same command again).

A file sealed to several hourglass recipients opens by the stanza that needs the fewest
squarings. Before it starts, the work is estimated from the squaring rate measured here, and
announced when it is longer than a day. To refuse work longer than a limit, before it starts:
  AGE_PLUGIN_HOURGLASS_MAX_TIME=2h age -d -j hourglass file.age > file
(age starts this program with fixed arguments, so the limit is an environment variable.)";

/// The environment variable that limits the work a decryption may start: a duration (`2h`,
/// `30min`, `3days`). A file whose cheapest stanza is estimated to take longer is refused
/// before any squaring.
const MAX_TIME_VAR: &str = "AGE_PLUGIN_HOURGLASS_MAX_TIME";
/// Work estimated above this is announced before it starts.
const ANNOUNCE_ABOVE: Duration = Duration::from_secs(24 * 3600);
/// How long the squaring rate is measured for an estimate.
const RATE_SAMPLE: Duration = Duration::from_millis(250);

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
        let limit = max_time();
        let mut rates = HashMap::new();
        for (file_index, stanzas) in files.iter().enumerate() {
            let fail = |stanza_index: usize, message: String| identity::Error::Stanza {
                file_index,
                stanza_index,
                message,
            };
            // Every hourglass stanza is checked before any squaring; any one opens the key.
            let (checked, refused) = stanzas_by_work(
                stanzas
                    .iter()
                    .map(|s| (s.tag.as_str(), &s.args[..], &s.body[..])),
            );
            let mut errors: Vec<_> = refused
                .into_iter()
                .map(|(index, e)| fail(index, e.to_string()))
                .collect();
            let limit = match (&limit, checked.first()) {
                (Err(why), Some(first)) => {
                    errors.push(fail(first.index, why.clone()));
                    results.insert(file_index, Err(errors));
                    continue;
                }
                (limit, _) => limit.clone().unwrap_or(None),
            };
            let mut plans = Vec::with_capacity(checked.len());
            for stanza in checked {
                match Plan::new(stanza) {
                    Ok(plan) => plans.push(plan),
                    Err((index, message)) => errors.push(fail(index, message)),
                }
            }
            // The least work first: fewest squarings left (a resumed run counts what remains).
            plans.sort_by_key(|p| p.remaining);
            let mut opened = None;
            for plan in plans {
                let index = plan.stanza.index;
                match open_stanza(&stanzas[index], plan, limit, &mut rates, &mut callbacks) {
                    Ok(key) => {
                        opened = Some(key);
                        break;
                    }
                    Err(message) => errors.push(fail(index, message)),
                }
            }
            match opened {
                Some(key) => {
                    results.insert(file_index, Ok(key));
                }
                None if !errors.is_empty() => {
                    results.insert(file_index, Err(errors));
                }
                None => {}
            }
        }
        Ok(results)
    }
}

/// `AGE_PLUGIN_HOURGLASS_MAX_TIME`: the longest work a decryption may start (`None`: no limit;
/// empty counts as unset), or why the value is not a duration.
fn max_time() -> Result<Option<Duration>, String> {
    match std::env::var(MAX_TIME_VAR) {
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(_)) => Err(format!("{MAX_TIME_VAR} is not text")),
        Ok(v) if v.trim().is_empty() => Ok(None),
        Ok(v) => humantime::parse_duration(v.trim()).map(Some).map_err(|e| {
            format!("{MAX_TIME_VAR}={v:?} is not a duration ({e}); write it as 2h, 30min or 3days")
        }),
    }
}

/// A checked stanza with its checkpoint and the squarings it still needs.
struct Plan {
    stanza: CheckedStanza,
    checkpoint: CheckpointFile,
    remaining: u64,
}

impl Plan {
    /// The plan for `stanza`, or its index and why it cannot be opened.
    fn new(stanza: CheckedStanza) -> Result<Self, (usize, String)> {
        let checkpoint = checkpoint_for(&stanza.header).map_err(|m| (stanza.index, m))?;
        let t = stanza.header.t();
        // Only this user's authentic checkpoint of this very run counts (load() sets others
        // aside); the solver checks it again when it resumes.
        let done = match checkpoint.load() {
            Ok(Some(c)) if c.context == stanza.header.checkpoint_context() && c.total == t => {
                c.state.done.min(t)
            }
            _ => 0,
        };
        Ok(Self {
            stanza,
            checkpoint,
            remaining: t - done,
        })
    }
}

/// Seconds as people say them: `40 seconds`, `12 minutes`, `3.5 hours`, `2.1 days`.
fn describe(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s >= 86_400.0 {
        format!("{:.1} days", s / 86_400.0)
    } else if s >= 3_600.0 {
        format!("{:.1} hours", s / 3_600.0)
    } else if s >= 60.0 {
        format!("{:.0} minutes", s / 60.0)
    } else if s >= 1.0 {
        format!("{s:.0} seconds")
    } else {
        "less than a second".into()
    }
}

/// The time `squarings` take at `rate` per second, if the rate is known.
fn estimate(squarings: u64, rate: f64) -> Option<Duration> {
    (rate.is_finite() && rate > 0.0)
        .then(|| Duration::try_from_secs_f64(squarings as f64 / rate).unwrap_or(Duration::MAX))
}

/// Does a stanza's squarings (resuming a checkpoint) and returns the file key. Before starting:
/// the work is estimated from the squaring rate measured here (once per modulus size, in
/// `rates`), refused past `limit`, and announced when it is longer than a day.
fn open_stanza(
    stanza: &Stanza,
    plan: Plan,
    limit: Option<Duration>,
    rates: &mut HashMap<u32, f64>,
    callbacks: &mut impl Callbacks<identity::Error>,
) -> Result<FileKey, String> {
    let Plan {
        stanza: CheckedStanza { header, .. },
        checkpoint,
        remaining,
    } = plan;
    let rate = *rates
        .entry(header.modulus_bits())
        .or_insert_with(|| measure_rate(header.n(), RATE_SAMPLE));
    let eta = estimate(remaining, rate);
    let about = eta.map_or(String::new(), |d| {
        format!(
            ", about {} at {rate:.0} squarings/s measured here",
            describe(d)
        )
    });
    let resuming = remaining < header.t();
    let more = if resuming { "more " } else { "" };
    if let (Some(limit), Some(eta)) = (limit, eta) {
        if eta > limit {
            return Err(format!(
                "opening this file takes {remaining} {more}sequential squarings{about}: more than {MAX_TIME_VAR} ({}) allows; nothing was started (raise the limit, or unset it, to open the file)",
                humantime::format_duration(limit)
            ));
        }
    }
    let _ = callbacks.message(&format!(
        "hourglass: opening a time-locked file key: {remaining} sequential squarings modulo a {}-bit n{}{about}",
        header.modulus_bits(),
        if resuming { " (resuming)" } else { "" },
    ));
    if eta.is_some_and(|d| d > ANNOUNCE_ABOVE) {
        let _ = callbacks.message(&format!(
            "hourglass: this will take {} of uninterrupted work on this machine; an interrupted run resumes where it stopped (run the same command again); {MAX_TIME_VAR}=DURATION refuses such files",
            eta.map_or(String::new(), describe)
        ));
    }
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
            let sent = callbacks.message(&format!(
                "hourglass: {:.1}% ({} of {} squarings){eta}",
                100.0 * p.done as f64 / p.total.max(1) as f64,
                p.done,
                p.total
            ));
            // age is gone: stop (the checkpoint keeps the work) instead of squaring for nobody.
            if sent.is_err() {
                stop.store(true, Ordering::Relaxed);
            }
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
