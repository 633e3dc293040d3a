//! The generation: Boneh-Franklin with distributed sieving, batched.
//!
//! Each iteration works on a batch of `B` candidate pairs, in these rounds:
//!
//! 1. **Sieving** (`1 + 2 ceil(log2(t+1))` rounds): the first `t + 1` members each deal a
//!    degree-`t` sharing of a unit `a_i mod M` per candidate and every member deals random
//!    double sharings ([`Extractor`], Damgard and Nielsen 2007); a tree of multiplications, each
//!    opened by one rotating member (its "king") as `xy + r`, turns `prod a_i` into additive
//!    shares `b_j` (any `t` colluders miss a factor, so the product is uniform to them). Each
//!    member then forms its share `p_j` ([`Sieve::candidate_share`]). Per member and
//!    candidate this costs `O(t)` values sent and `O(k t)` small-number operations, where
//!    re-sharing every product with every member (BGW) cost `O(k t)` values and `O(k t^2)`.
//!    Committees from about 10 parties instead **test** random sharings (3 rounds,
//!    [`SieveMethod::Tested`]): every member deals random sharings, and for each attempt, a
//!    pair `(x, r)`, a king opens `x r`; an attempt whose `x r` is a unit becomes a candidate
//!    pair (`p = x`, `q = r` modulo `M`, so the opened value is the `N mod M` that `N` reveals
//!    anyway). That is about `1 / u^2` attempts per pair (`u` the fraction of units modulo
//!    `M`, 0.6 at 50 parties and 2048 bits), each a few values per member, whatever `t`
//!    ([`Sieve::method`] compares the two).
//! 2. **N** (2 rounds): BGW over a public prime `P > N` (degree-`t` sharings of `p_j` and `q_j`,
//!    a degree-`2t` sharing of zero), then every member reveals its point of the product
//!    polynomial and `N` is interpolated at 0.
//! 3. **Trial division** of every `N` (1 round): each member divides by its slice of the odd
//!    primes below [`crate::trial::trial_bound`] (`2^22` from 2048-bit moduli on; below, `2^16`
//!    up to 3 members, growing with the committee to `2^22`) and broadcasts a witness (a small
//!    divisor) for each `N` it found one for; every witness is checked, and the moduli with
//!    none reach the next step.
//! 4. **Biprimality** (1 round for all survivors, then 2 for the first that passes): Boneh and
//!    Franklin's test with `p = q = 3 mod 4`: for a public `g` with Jacobi symbol 1, the pair's
//!    lead (the paper's "party 1": position `i mod k + 1` for the `i`-th pair of a batch, so the
//!    long exponent rotates over the members) reveals `g^((N - p_1 - q_1 + 1)/4)`, the others `g^((p_j + q_j)/4)`; accept when the first
//!    is `±` the product of the others, for `rounds` values of `g`. Then
//!    `z = r (p + q - 1) mod N` is computed by BGW over `Z_N` and `gcd(z, N) = 1` is required,
//!    which excludes `N` with a repeated prime factor.
//! 5. **Shares of d** (3 rounds): `phi mod e` by additive sharing mod `e` (only `phi mod e` is
//!    revealed), `d_j` by the rounding of Boneh and Franklin, and the rounding error
//!    (`0..k-1`) found by trial on a test message and added to the lead's share.
//!
//! Every `N` is built from fresh `p` and `q` candidates, so no two revealed moduli share one.
//!
//! 6. **Transcript signatures** ([`generate_signed`], 2 rounds): every member signs the
//!    version 2 transcript of the generation ([`crate::transcript`]: cluster, session,
//!    threshold, members with their certificate hashes, `N`, `e`) with its party key and
//!    broadcasts the signature in a [`crate::wire::Kind::Signature`] frame; every member checks
//!    each other member's signature under that member's pinned certificate, and stops naming
//!    the member whose signature is missing, of another transcript, or does not verify. Then
//!    every member echoes all the signatures it holds, and finishes only if every echo is its
//!    own set: a member that withheld its signature from some, or sent different ones to
//!    different members, is named (`signatures`).

use std::time::{Duration, Instant};

use hourglass_arith::entropy::EntropySource;
use hourglass_arith::modular::{pow_mod_ct, pow_mod_ct_bits};
use hourglass_arith::secret::{mod_ct, SecretInt};
use hourglass_arith::threads::{available_threads, parallel_map};
use hourglass_rsa::PublicKey;
use rug::ops::{RemRounding, SubFrom};
use rug::Integer;
use sha2::{Digest, Sha256};

use crate::bgw::{reduce_secret, Extractor, Shamir};
use crate::bounds::FrameBounds;
use crate::keyshare::KeyShare;
use crate::params::Settings;
use crate::rng::Drbg;
use crate::session::{Halt, RoundResult, Session};
use crate::sieve::{tree_levels, Sieve, SieveMethod};
use crate::transcript::{SignedTranscript, TranscriptSigner};
use crate::transport::{PartyId, Transport};
use crate::trial::{is_witness, trial_bound, TrialSlice};
use crate::wire::{step, Reader, Writer};
use crate::{ConfigError, Error, Failure, MessageProblem, ParamError, Result, SignatureError};

pub(crate) mod report;
mod signatures;
pub use crate::params::PUBLIC_EXPONENT;
pub use report::Report;

/// The outcome of a generation for one party.
pub struct Generated {
    /// This party's key share.
    pub share: KeyShare,
    /// Statistics.
    pub report: Report,
    prime_shares: (SecretInt, SecretInt),
}

impl std::fmt::Debug for Generated {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Generated")
            .field("share", &self.share)
            .field("report", &self.report)
            .finish_non_exhaustive()
    }
}

impl Generated {
    /// This party's additive shares `(p_j, q_j)` of the primes (the lead's include the public
    /// offset). **For checking the protocol in tests only**: reconstructing `p` and `q` needs
    /// every party's shares, and a deployment never writes them anywhere.
    pub fn prime_shares_for_testing(&self) -> (&Integer, &Integer) {
        (self.prime_shares.0.expose(), self.prime_shares.1.expose())
    }
}

/// A generation whose transcript every member signed ([`generate_signed`]).
#[derive(Debug)]
pub struct SignedGeneration {
    /// This party's share, with the statistics.
    pub generated: Generated,
    /// The version 2 transcript with every member's signature, each checked under the member's
    /// certificate: the same at every member (what `transcript.json` holds).
    pub transcript: SignedTranscript,
}

/// Progress messages during a generation (never containing secrets).
#[derive(Debug, Clone)]
pub enum Progress {
    /// An epoch started with these members.
    Started {
        /// The epoch.
        epoch: u32,
        /// The members.
        members: Vec<PartyId>,
        /// The sieving bound.
        sieve_bound: u32,
        /// Expected candidate pairs.
        expected: f64,
    },
    /// A batch finished.
    Batch {
        /// Candidate pairs tried so far in this epoch.
        candidates: u64,
        /// Biprimality tests so far.
        tests: u64,
    },
    /// Parties failed; the survivors restart without them.
    Restart {
        /// The removed parties, each with what was observed of it.
        removed: Vec<(PartyId, Failure)>,
    },
}

/// Hash of the settings every party must share (compared in the first round).
pub fn settings_digest(settings: &Settings, cluster: &str) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(b"hourglass dkg settings v1\0");
    h.update(cluster.as_bytes());
    h.update([0]);
    h.update(settings.bits.to_be_bytes());
    h.update((settings.batch as u64).to_be_bytes());
    h.update(settings.sieve_bound.unwrap_or(0).to_be_bytes());
    h.update(settings.biprimality_rounds.to_be_bytes());
    h.update((settings.min_parties as u64).to_be_bytes());
    h.update((settings.threshold.unwrap_or(0) as u64).to_be_bytes());
    h.update(settings.timeout_ms.to_be_bytes());
    h.finalize().into()
}

/// Runs the generation as this party (`transport.me()`) among `members`, without the round
/// of transcript signatures (for benchmarks and tests of the key generation itself; a
/// committee that publishes its modulus runs [`generate_signed`]).
///
/// Failed parties are removed and the generation restarts without them, down to
/// `max(settings.min_parties, 2t + 1)` where `t` is the threshold fixed for the whole cluster
/// (never recomputed from the survivors).
pub fn generate(
    transport: &mut dyn Transport,
    members: &[PartyId],
    settings: &Settings,
    cluster: &str,
    entropy: &mut dyn EntropySource,
    progress: &mut dyn FnMut(&Progress),
) -> Result<Generated> {
    generate_limited(
        transport, members, settings, cluster, entropy, progress, None,
    )
}

/// [`generate`], then the round that ends a published generation: every member signs the
/// version 2 transcript with its party key (`signer`, whose certificates must include every
/// party's) and checks every other member's signature under its certificate in `signer`.
///
/// A member whose signature is missing (it fails or stops answering: the key cannot be
/// published without it), is of another transcript (another fingerprint: another modulus,
/// session or member list, or a signature replayed from another session) or does not verify
/// stops the generation with an error naming it ([`Error::TranscriptSignature`],
/// [`Error::PartyFailed`]), announced to the other members; no share and no transcript come
/// out.
pub fn generate_signed(
    transport: &mut dyn Transport,
    members: &[PartyId],
    settings: &Settings,
    cluster: &str,
    signer: &TranscriptSigner,
    entropy: &mut dyn EntropySource,
    progress: &mut dyn FnMut(&Progress),
) -> Result<SignedGeneration> {
    if signer.me() != transport.me() {
        return Err(ConfigError::KeyNotCertified {
            party: transport.me(),
        }
        .into());
    }
    // Every member's certificate is needed at the end: find a missing one before starting.
    if let Some(&party) = members
        .iter()
        .find(|m| !signer.certificates().contains_key(m))
    {
        return Err(ConfigError::NoCertificate { party }.into());
    }
    let (generated, transcript) = run_generation(
        transport,
        members,
        settings,
        cluster,
        entropy,
        progress,
        None,
        Some(signer),
    )?;
    let transcript = transcript.ok_or(ConfigError::NoCertificate {
        party: transport.me(),
    })?;
    Ok(SignedGeneration {
        generated,
        transcript,
    })
}

/// [`generate`], stopping with [`Error::Stopped`] after `max_batches` batches of an epoch if
/// no key was found (every party must pass the same limit): benchmarks measure the time per
/// iteration this way without waiting for a success.
pub fn generate_limited(
    transport: &mut dyn Transport,
    members: &[PartyId],
    settings: &Settings,
    cluster: &str,
    entropy: &mut dyn EntropySource,
    progress: &mut dyn FnMut(&Progress),
    max_batches: Option<u64>,
) -> Result<Generated> {
    run_generation(
        transport,
        members,
        settings,
        cluster,
        entropy,
        progress,
        max_batches,
        None,
    )
    .map(|(generated, _)| generated)
}

/// The generation, and with a `signer` the round of transcript signatures in the same session
/// (so that a signature frame that arrives while this party finishes the last round is kept).
#[allow(clippy::too_many_arguments)]
fn run_generation(
    transport: &mut dyn Transport,
    members: &[PartyId],
    settings: &Settings,
    cluster: &str,
    entropy: &mut dyn EntropySource,
    progress: &mut dyn FnMut(&Progress),
    max_batches: Option<u64>,
    signer: Option<&TranscriptSigner>,
) -> Result<(Generated, Option<SignedTranscript>)> {
    settings.validate()?;
    if !members.contains(&transport.me()) {
        return Err(ConfigError::NotMember {
            party: transport.me(),
            members: members.to_vec(),
        }
        .into());
    }
    let start = Instant::now();
    let digest = settings_digest(settings, cluster);
    let timeout = Duration::from_millis(settings.timeout_ms);
    settings.check_threshold(members.len())?;
    let threshold = settings.threshold_for(members.len());
    let minimum = settings.minimum_for(members.len());
    let bounds = FrameBounds::generation(settings, members.len())?;
    let mut session = Session::new(transport, members.to_vec(), timeout, bounds);
    if session.members().len() < minimum {
        return Err(Error::TooFewParties {
            left: session.members().len(),
            minimum,
            threshold,
        });
    }
    let mut rng = Drbg::new(entropy)?;
    let big_p = bgw_prime(settings.bits);
    let mut report = Report::default();
    loop {
        let epoch_start = Instant::now();
        let mut run = Run::new(&mut session, settings, threshold, &big_p, &mut rng)?;
        report.sieve_bound = run.sieve.bound();
        report.expected_candidates = run.sieve.expected_iterations();
        report.trial_bound = trial_bound(run.k, settings.bits);
        report.expected_tests = run.sieve.expected_tests(report.trial_bound);
        progress(&Progress::Started {
            epoch: run.session.epoch(),
            members: run.session.members().to_vec(),
            sieve_bound: run.sieve.bound(),
            expected: report.expected_candidates,
        });
        let mut nonce = [0u8; 16];
        run.rng.fill_bytes(&mut nonce);
        let outcome = run
            .hello(cluster, &digest, &nonce)
            .and_then(|()| run.search(progress, max_batches));
        report.candidates_all_epochs += run.candidates;
        let finished = matches!(outcome, Ok(_) | Err(Halt::Fatal(Error::Stopped(_))));
        if finished {
            report.candidates = run.candidates;
            report.batches = run.batches;
            report.biprimality_tests = run.tests;
            report.parties = run.k;
            report.epoch_elapsed = epoch_start.elapsed();
            report.bytes_sent = session.bytes_sent();
            report.elapsed = start.elapsed();
        }
        match outcome {
            Ok((public, d_share, prime_shares)) => {
                let share = KeyShare::new(
                    cluster.to_string(),
                    session.id(),
                    session.me(),
                    session.members().to_vec(),
                    public,
                    d_share,
                );
                let transcript = match signer {
                    Some(signer) => Some(signatures::sign_transcript(
                        &mut session,
                        &share,
                        threshold,
                        signer,
                    )?),
                    None => None,
                };
                report.elapsed = start.elapsed();
                report.bytes_sent = session.bytes_sent();
                let generated = Generated {
                    share,
                    report,
                    prime_shares,
                };
                return Ok((generated, transcript));
            }
            Err(Halt::Fatal(Error::Stopped(_))) => return Err(Error::Stopped(Box::new(report))),
            Err(Halt::Fatal(e)) => {
                // Tell the others why this party stops, so that its departure is not taken
                // for its own failure; a stop another party announced needs no echo.
                match &e {
                    Error::BadMessage { sender, .. } => {
                        session.announce_fatal(&[*sender], &e.to_string())
                    }
                    Error::Reported { .. } => {}
                    _ => session.announce_fatal(&[], &e.to_string()),
                }
                return Err(e);
            }
            Err(Halt::Failed(failed, reason)) => {
                let removed = match session.restart(&failed, &reason, minimum, threshold) {
                    Ok(removed) => removed,
                    Err(e) => {
                        // Accusations and disputes were announced where they were found; any
                        // other stop is announced now, so that leaving is not taken for failing.
                        if !matches!(
                            e,
                            Error::Reported { .. }
                                | Error::FalseAccusation { .. }
                                | Error::Disputed { .. }
                        ) {
                            session.announce_fatal(&[], &e.to_string());
                        }
                        return Err(e);
                    }
                };
                report.removed.extend(removed.iter().cloned());
                progress(&Progress::Restart { removed });
            }
        }
    }
}

/// One epoch's state.
struct Run<'s, 't, 'r> {
    session: &'s mut Session<'t>,
    rng: &'r mut Drbg,
    settings: &'s Settings,
    sieve: Sieve,
    /// How this epoch's committee draws its sieved residues.
    method: SieveMethod,
    /// For the pairs whose lead is at position `L`, this member's Lagrange coefficient modulo
    /// `M` among the pair's holders ([`holds`]), if it is one.
    holder_lambda: Vec<Option<Integer>>,
    over_m: Shamir,
    over_p: Shamir,
    /// The double sharings' extraction over `M` (fixed for the epoch's members).
    extractor: Extractor,
    /// This member's slice of the trial division (fixed for the epoch's members).
    trial: TrialSlice,
    k: usize,
    t: usize,
    me: usize,
    /// Pairwise streams by position: this party's to each member, and each member's to it.
    streams_out: Vec<Option<Drbg>>,
    streams_in: Vec<Option<Drbg>>,
    round: u64,
    candidates: u64,
    batches: u64,
    tests: u64,
}

/// A candidate pair in this party's hands.
struct Pair {
    /// The position playing the paper's "party 1" for this pair (rotating over the batch, so
    /// the long biprimality exponent is spread over the members).
    lead: usize,
    p: SecretInt,
    q: SecretInt,
}

fn bad(sender: PartyId, reason: impl Into<MessageProblem>) -> Halt {
    Halt::Fatal(Error::BadMessage {
        sender,
        reason: reason.into(),
    })
}

type Accepted = (PublicKey, SecretInt, (SecretInt, SecretInt));

/// Appends every other member's share to its payload (`out[q-1]` for position `q`) and
/// returns this member's own (the others are wiped as they are dropped).
fn deal(me: usize, out: &mut [Writer], mut shares: Vec<SecretInt>) -> SecretInt {
    for (q, w) in out.iter_mut().enumerate() {
        if q + 1 != me {
            w.int(shares[q].expose());
        }
    }
    shares.swap_remove(me - 1)
}

/// Whether the member at `position` holds the pairs whose lead is at `lead` among `k` members
/// with threshold `t`: the `t + 1` positions from the lead on, wrapping.
/// The first prime above `2^bits`, as `2^bits + offset`, for the moduli sizes people use:
/// `next_prime` takes about 0.1 s at 2048 bits and is the same for every run
/// (`the_bgw_primes_are_the_first_above_their_powers_of_two` checks the table).
const BGW_PRIME_OFFSETS: [(u32, u32); 7] = [
    (512, 75),
    (768, 183),
    (1024, 643),
    (1536, 75),
    (2048, 981),
    (3072, 813),
    (4096, 1761),
];

/// The public prime `P` of step 2: the first prime above `2^bits` (so above every `N`).
fn bgw_prime(bits: u32) -> Integer {
    let power = Integer::from(1) << bits;
    match BGW_PRIME_OFFSETS.iter().find(|&&(b, _)| b == bits) {
        Some(&(_, offset)) => power + offset,
        None => power.next_prime(),
    }
}

/// A member's biprimality value for `g`, from its shares `p_j`, `q_j`: `g^((N - p_j - q_j +
/// 1)/4)` for the pair's lead, `g^((p_j + q_j)/4)` for the others (1 for a member that holds
/// nothing of the pair).
fn biprimality_value(
    p: &SecretInt,
    q: &SecretInt,
    lead: bool,
    n: &Integer,
    g: &Integer,
) -> Result<Integer> {
    let mut e = Integer::from(p.expose() + q.expose());
    if lead {
        e.sub_from(n);
        e += 1u32;
    }
    let divisible = e.mod_u(4) == 0;
    e >>= 2;
    let exp = SecretInt::new(e);
    if !divisible {
        return Err(ParamError::BiprimalityExponent.into());
    }
    if *exp.expose() == 0 {
        return Ok(Integer::from(1));
    }
    // The lead's exponent is about as long as N, the others' about half as long: the public
    // bounds the constant-time exponentiation works to.
    let bound = if lead {
        n.significant_bits()
    } else {
        n.significant_bits() / 2 + 2
    };
    Ok(pow_mod_ct_bits(g, exp.expose(), n, bound)?)
}

/// `values[lead - 1] == ±` the product of the other members' values modulo `n`.
fn check_biprimality(values: &[Integer], lead: usize, n: &Integer) -> bool {
    let mut prod = Integer::from(1);
    for (j, v) in values.iter().enumerate() {
        if j + 1 != lead {
            prod = (prod * v) % n;
        }
    }
    let minus = Integer::from(n - &prod);
    values[lead - 1] == prod || values[lead - 1] == minus
}

fn holds(lead: usize, position: usize, k: usize, t: usize) -> bool {
    (position + k - lead) % k <= t
}

/// For each lead position `L`, the Lagrange coefficient at 0 modulo `m` of the member at
/// `me` among the holders of `L`'s pairs (points `L..L+t`, wrapping), if it is one of them.
fn holder_lambdas(m: &Integer, k: usize, t: usize, me: usize) -> Result<Vec<Option<Integer>>> {
    (1..=k)
        .map(|lead| {
            if !holds(lead, me, k, t) {
                return Ok(None);
            }
            let (mut num, mut den) = (Integer::from(1), Integer::from(1));
            for l in (0..=t).map(|i| (lead - 1 + i) % k + 1).filter(|&l| l != me) {
                num *= l as i64;
                den *= l as i64 - me as i64;
            }
            let inv = den
                .invert(m)
                .map_err(|_| ParamError::ShamirModulus { parties: k })?;
            Ok(Some((num * inv).rem_euc(m)))
        })
        .collect()
}

impl<'s, 't, 'r> Run<'s, 't, 'r> {
    fn new(
        session: &'s mut Session<'t>,
        settings: &'s Settings,
        threshold: usize,
        big_p: &Integer,
        rng: &'r mut Drbg,
    ) -> Result<Self> {
        let k = session.members().len();
        let sieve = Sieve::new(settings.bits / 2, k, settings.sieve_bound)?;
        let over_m = Shamir::new(sieve.modulus().clone(), k)?;
        let over_p = Shamir::new(big_p.clone(), k)?;
        let extractor = Extractor::new(sieve.modulus(), k, threshold);
        let me = session.position();
        let trial = TrialSlice::new(trial_bound(k, settings.bits), me, k);
        Ok(Run {
            session,
            rng,
            settings,
            method: sieve.method(threshold),
            holder_lambda: holder_lambdas(sieve.modulus(), k, threshold, me)?,
            sieve,
            over_m,
            over_p,
            extractor,
            trial,
            k,
            t: threshold,
            me,
            streams_out: Vec::new(),
            streams_in: Vec::new(),
            round: 0,
            candidates: 0,
            batches: 0,
            tests: 0,
        })
    }

    /// The first round: agree on the session and exchange the pairwise stream seeds.
    fn hello(&mut self, cluster: &str, digest: &[u8; 32], nonce: &[u8; 16]) -> RoundResult<()> {
        let mut seeds = std::collections::BTreeMap::new();
        self.streams_out = (1..=self.k).map(|_| None).collect();
        for pos in 1..=self.k {
            if pos != self.me {
                let mut seed = [0u8; 32];
                self.rng.fill_bytes(&mut seed);
                self.streams_out[pos - 1] = Some(Drbg::from_key(&seed));
                seeds.insert(self.session.member_at(pos), seed);
                zeroize::Zeroize::zeroize(&mut seed);
            }
        }
        let received = self.session.hello(cluster, digest, nonce, &seeds)?;
        for seed in seeds.values_mut() {
            zeroize::Zeroize::zeroize(seed);
        }
        self.streams_in = (1..=self.k)
            .map(|pos| {
                received
                    .get(&self.session.member_at(pos))
                    .map(Drbg::from_key)
            })
            .collect();
        Ok(())
    }

    fn next_round(&mut self) -> u64 {
        self.round += 1;
        self.round
    }

    /// Sends each member its slice: `per_position[q-1]` goes to the member at position `q`.
    fn exchange_shares(
        &mut self,
        step: u16,
        per_position: Vec<Writer>,
    ) -> RoundResult<Vec<(usize, Vec<u8>)>> {
        let round = self.round;
        let outgoing = per_position
            .into_iter()
            .enumerate()
            .filter(|&(i, _)| i + 1 != self.me)
            .map(|(i, w)| (self.session.member_at(i + 1), w.finish()))
            .collect();
        let replies = self.session.exchange(round, step, outgoing)?;
        Ok(self.by_position(replies))
    }

    fn broadcast(&mut self, step: u16, payload: Vec<u8>) -> RoundResult<Vec<(usize, Vec<u8>)>> {
        let round = self.round;
        let replies = self.session.broadcast(round, step, payload)?;
        Ok(self.by_position(replies))
    }

    /// The one value below `bound` each reply must hold, with the sender's position.
    fn single_values(
        &self,
        replies: Vec<(usize, Vec<u8>)>,
        bound: &Integer,
    ) -> RoundResult<Vec<(usize, Integer)>> {
        replies
            .into_iter()
            .map(|(pos, payload)| {
                let sender = self.session.member_at(pos);
                let mut r = Reader::new(&payload);
                let v = r.int_below(bound).map_err(|e| bad(sender, e))?;
                r.end().map_err(|e| bad(sender, e))?;
                Ok((pos, v))
            })
            .collect()
    }

    /// Broadcasts `value` and returns every member's value (below `bound`) by position, this
    /// member's included.
    fn broadcast_value(
        &mut self,
        step: u16,
        value: Integer,
        bound: &Integer,
    ) -> RoundResult<Vec<Integer>> {
        let mut w = Writer::new();
        w.int(&value);
        let replies = self.broadcast(step, w.finish())?;
        let mut values = vec![Integer::new(); self.k];
        for (pos, v) in self.single_values(replies, bound)? {
            values[pos - 1] = v;
        }
        values[self.me - 1] = value;
        Ok(values)
    }

    fn by_position(
        &self,
        replies: std::collections::BTreeMap<PartyId, Vec<u8>>,
    ) -> Vec<(usize, Vec<u8>)> {
        replies
            .into_iter()
            .map(|(id, payload)| {
                let pos = self
                    .session
                    .members()
                    .iter()
                    .position(|&m| m == id)
                    .map_or(0, |i| i + 1);
                (pos, payload)
            })
            .collect()
    }

    /// Batches until a modulus passes; returns the public key, `d_j` and `(p_j, q_j)`.
    fn search(
        &mut self,
        progress: &mut dyn FnMut(&Progress),
        max_batches: Option<u64>,
    ) -> RoundResult<Accepted> {
        loop {
            if max_batches.is_some_and(|m| self.batches >= m) {
                return Err(Halt::Fatal(Error::Stopped(Box::default())));
            }
            self.next_round();
            let pairs = self.sieve_batch()?;
            let moduli = self.compute_moduli(&pairs)?;
            self.candidates += pairs.len() as u64;
            self.batches += 1;
            let survivors = self.trial_division(&moduli)?;
            self.tests += survivors.len() as u64;
            let passed = self.biprimality_first(&pairs, &moduli, &survivors)?;
            progress(&Progress::Batch {
                candidates: self.candidates,
                tests: self.tests,
            });
            if let Some(i) = passed {
                if let Some(accepted) = self.finish(&pairs[i], &moduli[i])? {
                    return Ok(accepted);
                }
            }
        }
    }

    /// Opens values through their kings, in two rounds at the sieving level `level`: this
    /// member sends `to_king[q - 1]` (its points of the values whose king is at position `q`)
    /// and keeps `own` (its points of its own values); as king it interpolates each of its
    /// values from every member's point and sends them to every member. Returns every king's
    /// opened values by position, `kinged(q)` of them for the king at `q`.
    fn open_by_kings(
        &mut self,
        level: usize,
        to_king: Vec<Writer>,
        own: Vec<Integer>,
        kinged: impl Fn(usize) -> usize,
    ) -> RoundResult<Vec<Vec<Integer>>> {
        let (k, me) = (self.k, self.me);
        let m = self.sieve.modulus().clone();
        let replies = self.exchange_shares(step::sieve_to_king(level), to_king)?;
        let mine = kinged(me);
        let mut points: Vec<Vec<Integer>> = vec![Vec::new(); k];
        points[me - 1] = own;
        for (pos, payload) in replies {
            let sender = self.session.member_at(pos);
            let mut r = Reader::new(&payload);
            points[pos - 1] = r.ints_below(mine, &m).map_err(|e| bad(sender, e))?;
            r.end().map_err(|e| bad(sender, e))?;
        }
        let own_opened: Vec<Integer> = (0..mine)
            .map(|j| {
                let column: Vec<Integer> = points.iter().map(|p| p[j].clone()).collect();
                self.over_m.interpolate(&column)
            })
            .collect();
        drop(points);
        let mut w = Writer::new();
        for v in &own_opened {
            w.int(v);
        }
        let replies = self.broadcast(step::sieve_from_king(level), w.finish())?;
        let mut opened: Vec<Vec<Integer>> = vec![Vec::new(); k];
        opened[me - 1] = own_opened;
        for (pos, payload) in replies {
            let sender = self.session.member_at(pos);
            let mut r = Reader::new(&payload);
            opened[pos - 1] = r.ints_below(kinged(pos), &m).map_err(|e| bad(sender, e))?;
            r.end().map_err(|e| bad(sender, e))?;
        }
        Ok(opened)
    }

    /// [`SieveMethod::Tree`]: this member's degree-`t` shares of `slots` fresh units modulo `M`.
    ///
    /// The first `t + 1` members each deal a degree-`t` sharing of a fresh unit `a_i mod M`
    /// per candidate, and every member deals double sharings ([`Extractor`]) for the `t`
    /// multiplications per candidate, in one round. The tree ([`tree_levels`]) then multiplies
    /// the sharings pairwise, two rounds a level: each member sends `x_j y_j + r2t_j` (its
    /// point of a random degree-`2t` polynomial through `xy + r`) to the multiplication's
    /// king, which interpolates and sends back `xy + r`, and each member's share of `xy` is
    /// `xy + r - rt_j`. Kings rotate over the members, so each interpolates `1/k` of the
    /// products. The product `a` (unknown to any `t` members: each misses a factor) ends as
    /// degree-`t` shares.
    fn sieve_tree(&mut self, slots: usize) -> RoundResult<Vec<SecretInt>> {
        let (k, t, me) = (self.k, self.t, self.me);
        let contributors = t + 1;
        let m = self.sieve.modulus().clone();
        let multiplications = slots * (contributors - 1);
        let dealt = multiplications.div_ceil(self.extractor.outputs());

        // Round 1: units (contributors) and double sharings (everyone).
        let mut out: Vec<Writer> = (0..k).map(|_| Writer::new()).collect();
        let mut units: Vec<Vec<SecretInt>> = vec![Vec::new(); contributors];
        if me <= contributors {
            for _ in 0..slots {
                let a = SecretInt::new(self.sieve.random_unit(self.rng));
                let shares = self.over_m.share(a.expose(), t, self.rng);
                units[me - 1].push(deal(me, &mut out, shares));
            }
        }
        // low[d][j - 1], high[d][j - 1]: this member's share of member j's d-th double sharing.
        let mut low: Vec<Vec<SecretInt>> = vec![vec![SecretInt::default(); k]; dealt];
        let mut high: Vec<Vec<SecretInt>> = vec![vec![SecretInt::default(); k]; dealt];
        for d in 0..dealt {
            let rho = SecretInt::new(self.rng.below(&m));
            let lo = self.over_m.share(rho.expose(), t, self.rng);
            low[d][me - 1] = deal(me, &mut out, lo);
            let hi = self.over_m.share(rho.expose(), 2 * t, self.rng);
            high[d][me - 1] = deal(me, &mut out, hi);
        }
        let replies = self.exchange_shares(step::SIEVE, out)?;
        for (pos, payload) in replies {
            let sender = self.session.member_at(pos);
            let mut r = Reader::new(&payload);
            if pos <= contributors {
                units[pos - 1] = r
                    .ints_below(slots, &m)
                    .map_err(|e| bad(sender, e))?
                    .into_iter()
                    .map(SecretInt::new)
                    .collect();
            }
            for d in 0..dealt {
                low[d][pos - 1] = SecretInt::new(r.int_below(&m).map_err(|e| bad(sender, e))?);
                high[d][pos - 1] = SecretInt::new(r.int_below(&m).map_err(|e| bad(sender, e))?);
            }
            r.end().map_err(|e| bad(sender, e))?;
        }
        let low: Vec<SecretInt> = low.iter().flat_map(|d| self.extractor.extract(d)).collect();
        let high: Vec<SecretInt> = high
            .iter()
            .flat_map(|d| self.extractor.extract(d))
            .collect();

        // values[slot]: this member's shares of the slot's values at the current level.
        let mut values: Vec<Vec<SecretInt>> = (0..slots)
            .map(|slot| units.iter().map(|u| u[slot].clone()).collect())
            .collect();
        drop(units);
        let mut next_double = 0;
        for (level, &size) in tree_levels(contributors).iter().enumerate() {
            let pairs = size / 2;
            let count = slots * pairs;
            let king = |product: usize| product % k + 1;
            // How many of the level's products the member at `position` is king of.
            let kinged = |position: usize| count / k + usize::from(position - 1 < count % k);
            // Multiplication `slot * pairs + i` uses double sharing `next_double + that`.
            let mut to_king: Vec<Writer> = (0..k).map(|_| Writer::new()).collect();
            let mut own = Vec::new();
            for (slot, vals) in values.iter().enumerate() {
                for i in 0..pairs {
                    let product = slot * pairs + i;
                    let masked = SecretInt::new(
                        Integer::from(vals[2 * i].expose() * vals[2 * i + 1].expose())
                            + high[next_double + product].expose(),
                    );
                    let masked = reduce_secret(masked.expose(), &m)?;
                    if king(product) == me {
                        own.push(masked);
                    } else {
                        to_king[king(product) - 1].int(&masked);
                    }
                }
            }
            let opened = self.open_by_kings(level, to_king, own, kinged)?;
            let mut taken = vec![0usize; k];
            let mut next_values = Vec::with_capacity(slots);
            for (slot, mut vals) in std::mem::take(&mut values).into_iter().enumerate() {
                let mut next: Vec<SecretInt> = Vec::with_capacity(size.div_ceil(2));
                for i in 0..pairs {
                    let product = slot * pairs + i;
                    let kp = king(product) - 1;
                    let value = &opened[kp][taken[kp]];
                    taken[kp] += 1;
                    let share =
                        SecretInt::new(Integer::from(value - low[next_double + product].expose()));
                    next.push(SecretInt::new(reduce_secret(share.expose(), &m)?));
                }
                if size % 2 == 1 {
                    next.push(vals.pop().unwrap_or_default());
                }
                next_values.push(next);
            }
            values = next_values;
            next_double += count;
        }
        Ok(values
            .into_iter()
            .map(|mut v| v.pop().unwrap_or_default())
            .collect())
    }

    /// [`SieveMethod::Tested`]: this member's degree-`t` shares of up to `pairs` pairs of fresh
    /// units modulo `M` (`x` then `r` for each), in 3 rounds whatever `t`.
    ///
    /// Every member deals random degree-`t` sharings, extracted ([`Extractor`]) into two per
    /// attempt ([`Sieve::attempts`]): `x` and `r`. Each member sends `x_j r_j + z_j` (`z_j` its
    /// share of a sharing of zero drawn from the pairwise streams, so that the points are those
    /// of a random polynomial through `x r`) to the attempt's king (position
    /// `attempt mod k + 1`), which interpolates `x r` and sends it to every member. An attempt
    /// passes when `x r` is a unit modulo `M`: then `x` and `r` are both units, and become the
    /// candidates `p` and `q` of a pair (`p = x` and `q = r` modulo `M`), whose `N mod M` is
    /// the opened `x r`: the pair's `N`, revealed in step 2, says as much. The first `pairs`
    /// attempts that pass are the batch's; the others are dropped unused. A king
    /// that lies about `x r` can only drop a unit or pass a non-unit, whose `N` then fails the
    /// trial division (every prime in `M` is below `2^16`), or, if the member whose slice holds
    /// that prime hides it, the biprimality test.
    fn sieve_tested(&mut self, pairs: usize) -> RoundResult<Vec<SecretInt>> {
        let (k, me) = (self.k, self.me);
        let m = self.sieve.modulus().clone();
        let attempts = self.sieve.attempts(pairs);
        let dealt = (2 * attempts).div_ceil(self.extractor.outputs());

        // Round 1: random sharings, dealt by every member.
        let mut out: Vec<Writer> = (0..k).map(|_| Writer::new()).collect();
        // randoms[d][j - 1]: this member's share of member j's d-th random sharing.
        let mut randoms: Vec<Vec<SecretInt>> = vec![vec![SecretInt::default(); k]; dealt];
        for dealing in randoms.iter_mut() {
            let rho = SecretInt::new(self.rng.below(&m));
            let shares = self.over_m.share(rho.expose(), self.t, self.rng);
            dealing[me - 1] = deal(me, &mut out, shares);
        }
        let replies = self.exchange_shares(step::SIEVE, out)?;
        for (pos, payload) in replies {
            let sender = self.session.member_at(pos);
            let mut r = Reader::new(&payload);
            for dealing in randoms.iter_mut() {
                dealing[pos - 1] = SecretInt::new(r.int_below(&m).map_err(|e| bad(sender, e))?);
            }
            r.end().map_err(|e| bad(sender, e))?;
        }
        let randoms: Vec<SecretInt> = randoms
            .iter()
            .flat_map(|d| self.extractor.extract(d))
            .collect();

        // Each member's point of x r + 0, for the attempt's king.
        let king = |attempt: usize| attempt % k + 1;
        let kinged = |position: usize| attempts / k + usize::from(position - 1 < attempts % k);
        let mut to_king: Vec<Writer> = (0..k).map(|_| Writer::new()).collect();
        let mut own = Vec::with_capacity(kinged(me));
        let mut xrs = Vec::with_capacity(attempts);
        let t = self.t;
        for (attempt, xr) in randoms.chunks_exact(2).take(attempts).enumerate() {
            // The sharing of zero is dealt by the t + 1 positions from the attempt's king on
            // (at least one of them honest, so it is random to any t members).
            let mut zero = SecretInt::default();
            if holds(king(attempt), me, k, t) {
                *zero.expose_mut() = self.over_m.zero_from_streams(me, &mut self.streams_out);
            }
            for (pos, stream) in self.streams_in.iter_mut().enumerate() {
                if pos + 1 == me || !holds(king(attempt), pos + 1, k, t) {
                    continue;
                }
                let stream = stream.as_mut().ok_or_else(|| {
                    bad(
                        self.session.member_at(pos + 1),
                        MessageProblem::NoPairwiseSeed,
                    )
                })?;
                *zero.expose_mut() += stream.wide(&m).expose();
            }
            let point =
                SecretInt::new(Integer::from(xr[0].expose() * xr[1].expose()) + zero.expose());
            let point = reduce_secret(point.expose(), &m)?;
            if king(attempt) == me {
                own.push(point);
            } else {
                to_king[king(attempt) - 1].int(&point);
            }
            xrs.push([xr[0].clone(), xr[1].clone()]);
        }
        drop(randoms);
        // Rounds 2 and 3: each member's point of x r + 0 to the attempt's king, and each
        // king's opened values to every member.
        let opened = self.open_by_kings(0, to_king, own, kinged)?;
        let mut taken = vec![0usize; k];
        let mut shares = Vec::with_capacity(2 * pairs);
        for (attempt, [x, r]) in xrs.into_iter().enumerate() {
            let kp = king(attempt) - 1;
            let value = &opened[kp][taken[kp]];
            taken[kp] += 1;
            if shares.len() < 2 * pairs && Integer::from(value.gcd_ref(&m)) == 1 {
                shares.push(x);
                shares.push(r);
            }
        }
        Ok(shares)
    }

    /// Step 1 for a batch: every member's shares of up to `2B` fresh sieved candidates, in
    /// pairs, by the committee's [`SieveMethod`].
    fn sieve_batch(&mut self) -> RoundResult<Vec<Pair>> {
        let slots = 2 * self.settings.batch;
        let shares = match self.method {
            SieveMethod::Tree => self.sieve_tree(slots)?,
            SieveMethod::Tested => self.sieve_tested(self.settings.batch)?,
        };
        let m = self.sieve.modulus().clone();
        let mut pairs = Vec::with_capacity(self.settings.batch);
        for (i, chunk) in shares.chunks_exact(2).enumerate() {
            let lead = i % self.k + 1;
            let leads = lead == self.me;
            // The pair's holders turn their degree-t shares into additive ones; the others
            // hold nothing of it.
            let Some(lambda) = self.holder_lambda[lead - 1].clone() else {
                pairs.push(Pair {
                    lead,
                    p: SecretInt::default(),
                    q: SecretInt::default(),
                });
                continue;
            };
            let mut additive = |x: &SecretInt| -> RoundResult<SecretInt> {
                let scaled = SecretInt::new(Integer::from(x.expose() * &lambda));
                let b = SecretInt::new(reduce_secret(scaled.expose(), &m)?);
                Ok(SecretInt::new(self.sieve.candidate_share(
                    leads,
                    b.expose(),
                    self.rng,
                )))
            };
            let p = additive(&chunk[0])?;
            let q = additive(&chunk[1])?;
            pairs.push(Pair { lead, p, q });
        }
        Ok(pairs)
    }

    /// Step 2: `N` for every pair of the batch, by BGW over `P`.
    fn compute_moduli(&mut self, pairs: &[Pair]) -> RoundResult<Vec<Integer>> {
        let big_p = self.over_p.modulus().clone();
        let mut out: Vec<Writer> = (0..self.k).map(|_| Writer::new()).collect();
        let mut sums: Vec<[SecretInt; 3]> = Vec::with_capacity(pairs.len());
        let (k, t) = (self.k, self.t);
        for pair in pairs {
            let mut mine: [SecretInt; 3] = Default::default();
            // Only the pair's holders deal: its shares (the others' are zero) and the sharings
            // of zero that hide the product (one holder is honest).
            if holds(pair.lead, self.me, k, t) {
                mine[2] = SecretInt::new(
                    self.over_p
                        .zero_from_streams(self.me, &mut self.streams_out),
                );
                let dealt = [
                    self.over_p.share(pair.p.expose(), t, self.rng),
                    self.over_p.share(pair.q.expose(), t, self.rng),
                ];
                for (c, shares) in dealt.into_iter().enumerate() {
                    mine[c] = deal(self.me, &mut out, shares);
                }
            }
            sums.push(mine);
        }
        let replies = self.exchange_shares(step::N_SHARES, out)?;
        for (pos, payload) in replies {
            let sender = self.session.member_at(pos);
            let mut r = Reader::new(&payload);
            let stream = self.streams_in[pos - 1]
                .as_mut()
                .ok_or_else(|| bad(sender, MessageProblem::NoPairwiseSeed))?;
            for (s, pair) in sums.iter_mut().zip(pairs) {
                if holds(pair.lead, pos, k, t) {
                    for v in s[..2].iter_mut() {
                        *v.expose_mut() += r.int_below(&big_p).map_err(|e| bad(sender, e))?;
                    }
                    *s[2].expose_mut() += stream.wide(&big_p).expose();
                }
            }
            r.end().map_err(|e| bad(sender, e))?;
        }
        // The points are broadcast, but the quotients of their reductions are not.
        let points: Vec<Integer> = sums
            .into_iter()
            .map(|[x, y, z]| {
                let xyz = SecretInt::new(Integer::from(x.expose() * y.expose()) + z.expose());
                reduce_secret(xyz.expose(), &big_p)
            })
            .collect::<std::result::Result<_, _>>()?;
        let mut w = Writer::new();
        for v in &points {
            w.int(v);
        }
        let replies = self.broadcast(step::N_POINTS, w.finish())?;
        let mut all = vec![points];
        all.resize(self.k, Vec::new());
        // all[pos-1] = that member's points; ours is at index 0 for now.
        let mine = std::mem::take(&mut all[0]);
        all[self.me - 1] = mine;
        for (pos, payload) in replies {
            let sender = self.session.member_at(pos);
            let mut r = Reader::new(&payload);
            all[pos - 1] = r
                .ints_below(pairs.len(), &big_p)
                .map_err(|e| bad(sender, e))?;
            r.end().map_err(|e| bad(sender, e))?;
        }
        Ok((0..pairs.len())
            .map(|i| {
                let column: Vec<Integer> = all.iter().map(|pts| pts[i].clone()).collect();
                self.over_p.interpolate(&column)
            })
            .collect())
    }

    /// Step 3: the moduli of the batch that have `bits` bits, are odd, and have no witness of
    /// a small factor from any member ([`crate::trial`]): each member divides by its slice of
    /// the primes and broadcasts, for every modulus, a witness or 0; every witness received is
    /// checked, and a member that sends one that does not divide its `N` is named.
    fn trial_division(&mut self, moduli: &[Integer]) -> RoundResult<Vec<usize>> {
        let bits = self.settings.bits;
        let mut alive: Vec<bool> = moduli
            .iter()
            .map(|n| n.significant_bits() == bits && n.is_odd())
            .collect();
        let live: Vec<&Integer> = moduli
            .iter()
            .zip(&alive)
            .filter_map(|(n, &live)| live.then_some(n))
            .collect();
        let mut found = self.trial.witnesses(&live).into_iter();
        let mut w = Writer::new();
        for live in alive.iter_mut() {
            let witness = if *live { found.next().flatten() } else { None };
            *live &= witness.is_none();
            w.int(&witness.unwrap_or_default());
        }
        let replies = self.broadcast(step::TRIAL, w.finish())?;
        let below = Integer::from(1) << 64u32;
        for (pos, payload) in replies {
            let sender = self.session.member_at(pos);
            let mut r = Reader::new(&payload);
            let witnesses = r
                .ints_below(moduli.len(), &below)
                .map_err(|e| bad(sender, e))?;
            r.end().map_err(|e| bad(sender, e))?;
            for ((n, witness), live) in moduli.iter().zip(&witnesses).zip(alive.iter_mut()) {
                if *witness == 0 {
                    continue;
                }
                if !is_witness(n, witness) {
                    return Err(bad(sender, MessageProblem::FalseWitness));
                }
                *live = false;
            }
        }
        Ok((0..moduli.len()).filter(|&i| alive[i]).collect())
    }

    /// This member's biprimality values ([`biprimality_value`]) for each pair, its modulus and
    /// a base, in order, spread over the machine's cores: each is a constant-time
    /// exponentiation, and the exponentiations of a round are what a member waits on.
    fn biprimality_values(
        &self,
        tests: &[(&Pair, &Integer, Integer)],
    ) -> RoundResult<Vec<Integer>> {
        let me = self.me;
        parallel_map(tests, available_threads(), |(pair, n, g)| {
            biprimality_value(&pair.p, &pair.q, pair.lead == me, n, g)
        })
        .into_iter()
        .collect::<Result<Vec<Integer>>>()
        .map_err(Halt::Fatal)
    }

    /// The public base of biprimality test `index` for modulus `n`: Jacobi symbol 1.
    fn public_base(&self, n: &Integer, index: u32) -> Integer {
        let mut h = Sha256::new();
        h.update(b"hourglass dkg biprimality base v1\0");
        h.update(self.session.id());
        h.update(n.to_digits::<u8>(rug::integer::Order::Msf));
        h.update(index.to_be_bytes());
        let mut drbg = Drbg::from_key(&h.finalize().into());
        loop {
            let g = drbg.below(n);
            if g.jacobi(n) == 1 {
                return g;
            }
        }
    }

    /// Step 3, first round: one test for every survivor of trial division; the index of the
    /// first that passes.
    fn biprimality_first(
        &mut self,
        pairs: &[Pair],
        moduli: &[Integer],
        survivors: &[usize],
    ) -> RoundResult<Option<usize>> {
        if survivors.is_empty() {
            return Ok(None);
        }
        let tests: Vec<(&Pair, &Integer, Integer)> = survivors
            .iter()
            .map(|&i| (&pairs[i], &moduli[i], self.public_base(&moduli[i], 0)))
            .collect();
        let mine = self.biprimality_values(&tests)?;
        let mut w = Writer::new();
        for v in &mine {
            w.int(v);
        }
        let replies = self.broadcast(step::BIPRIMALITY, w.finish())?;
        let mut table: Vec<Vec<Integer>> = vec![Vec::new(); self.k];
        table[self.me - 1] = mine;
        for (pos, payload) in replies {
            let sender = self.session.member_at(pos);
            let mut r = Reader::new(&payload);
            let mut row = Vec::with_capacity(survivors.len());
            for &i in survivors {
                row.push(r.int_below(&moduli[i]).map_err(|e| bad(sender, e))?);
            }
            r.end().map_err(|e| bad(sender, e))?;
            table[pos - 1] = row;
        }
        for (col, &i) in survivors.iter().enumerate() {
            let values: Vec<Integer> = table.iter().map(|row| row[col].clone()).collect();
            if check_biprimality(&values, pairs[i].lead, &moduli[i]) {
                return Ok(Some(i));
            }
        }
        Ok(None)
    }

    /// Steps 3 (remaining tests and the gcd step) and 4 for a modulus that passed one test.
    fn finish(&mut self, pair: &Pair, n: &Integer) -> RoundResult<Option<Accepted>> {
        let over_n = Shamir::new(n.clone(), self.k)?;
        let rounds = self.settings.biprimality_rounds;
        // The remaining biprimality values (same for all) and BGW shares over Z_N of
        // r_j and x_j = p_j + q_j (- 1 for the lead), with a zero sharing.
        let tests: Vec<(&Pair, &Integer, Integer)> = (1..rounds)
            .map(|index| (pair, n, self.public_base(n, index)))
            .collect();
        let values = self.biprimality_values(&tests)?;
        let r_j = SecretInt::new(self.rng.below(n));
        let x_j = {
            let mut x = Integer::from(pair.p.expose() + pair.q.expose());
            if pair.lead == self.me {
                x -= 1;
            }
            SecretInt::new(x)
        };
        let dealt = [
            over_n.share(r_j.expose(), self.t, self.rng),
            over_n.share(x_j.expose(), self.t, self.rng),
        ];
        let mut out: Vec<Writer> = (0..self.k)
            .map(|_| {
                let mut w = Writer::new();
                for v in &values {
                    w.int(v);
                }
                w
            })
            .collect();
        let mut sums: [SecretInt; 3] = Default::default();
        sums[2] = SecretInt::new(over_n.zero_from_streams(self.me, &mut self.streams_out));
        for (c, shares) in dealt.into_iter().enumerate() {
            sums[c] = deal(self.me, &mut out, shares);
        }
        let replies = self.exchange_shares(step::GCD_SHARES, out)?;
        let mut table: Vec<Vec<Integer>> = vec![Vec::new(); self.k];
        table[self.me - 1] = values;
        for (pos, payload) in replies {
            let sender = self.session.member_at(pos);
            let mut r = Reader::new(&payload);
            table[pos - 1] = r
                .ints_below(rounds as usize - 1, n)
                .map_err(|e| bad(sender, e))?;
            for s in sums[..2].iter_mut() {
                *s.expose_mut() += r.int_below(n).map_err(|e| bad(sender, e))?;
            }
            *sums[2].expose_mut() += self.streams_in[pos - 1]
                .as_mut()
                .ok_or_else(|| bad(sender, MessageProblem::NoPairwiseSeed))?
                .below(n);
            r.end().map_err(|e| bad(sender, e))?;
        }
        let all_pass = (0..rounds as usize - 1).all(|col| {
            let column: Vec<Integer> = table.iter().map(|row| row[col].clone()).collect();
            check_biprimality(&column, pair.lead, n)
        });
        let [sr, sx, sz] = &sums;
        let point = SecretInt::new(Integer::from(sr.expose() * sx.expose()) + sz.expose());
        let point = reduce_secret(point.expose(), n)?;
        let points = self.broadcast_value(step::GCD_POINT, point, n)?;
        let z = over_n.interpolate(&points);
        if !all_pass || Integer::from(z.gcd_ref(n)) != 1 {
            return Ok(None);
        }
        self.shares_of_d(pair, n)
    }

    /// Step 4: `phi mod e`, the shares `d_j`, and the rounding fix.
    fn shares_of_d(&mut self, pair: &Pair, n: &Integer) -> RoundResult<Option<Accepted>> {
        let e = Integer::from(PUBLIC_EXPONENT);
        let phi_j = {
            let mut phi = Integer::from(pair.p.expose() + pair.q.expose());
            if pair.lead == self.me {
                phi.sub_from(n);
                phi += 1u32;
            } else {
                phi = -phi;
            }
            SecretInt::new(phi)
        };
        // Additive sharing of phi_j mod e.
        let parts: Vec<SecretInt> = (1..self.k)
            .map(|_| SecretInt::new(self.rng.below(&e)))
            .collect();
        let sum_parts: Integer = parts.iter().map(SecretInt::expose).sum();
        let own = SecretInt::new(phi_j.expose() - sum_parts);
        let own = mod_ct(own.expose(), &e)?;
        let mut out: Vec<Writer> = (0..self.k).map(|_| Writer::new()).collect();
        let mut next = parts.iter();
        for (q, w) in out.iter_mut().enumerate() {
            if q + 1 != self.me {
                if let Some(part) = next.next() {
                    w.int(part.expose());
                }
            }
        }
        let replies = self.exchange_shares(step::PHI_PARTS, out)?;
        drop(parts);
        let mut sigma = own;
        for (_, v) in self.single_values(replies, &e)? {
            sigma += v;
        }
        sigma = mod_ct(&sigma, &e)?;
        let sigmas = self.broadcast_value(step::PHI_SUM, sigma, &e)?;
        let phi_mod_e = sigmas.into_iter().sum::<Integer>().rem_euc(&e);
        let Ok(inv) = phi_mod_e.invert(&e) else {
            // e divides phi: this modulus cannot use e = 65537.
            return Ok(None);
        };
        let zeta = &e - inv;
        let mut numerator = zeta * phi_j.expose();
        if pair.lead == self.me {
            numerator += 1u32;
        }
        drop(phi_j);
        // floor(numerator / e) as an exact division of numerator minus its residue (GMP's
        // division with remainder takes time that depends on the secret numerator).
        let numerator = SecretInt::new(numerator);
        let residue = SecretInt::new(mod_ct(numerator.expose(), &e)?);
        let rest = SecretInt::new(Integer::from(numerator.expose() - residue.expose()));
        let d_j = SecretInt::new(rest.expose().div_exact_ref(&e).into());
        // Rounding: sum d_j = d - r for some r in 0..k; find r on a test message.
        let m = self.public_base(n, u32::MAX);
        let partial = self.partial_power(&m, d_j.expose(), n)?;
        let mut prod = Integer::from(1);
        for v in self.broadcast_value(step::ROUNDING, partial, n)? {
            prod = (prod * v) % n;
        }
        let mut fix = None;
        for r in 0..self.k as u32 {
            let shift = m.clone().pow_mod(&Integer::from(r), n).unwrap_or_default();
            let s = (shift * &prod) % n;
            if s.pow_mod(&e, n).is_ok_and(|v| v == m) {
                fix = Some(r);
                break;
            }
        }
        let Some(fix) = fix else {
            return Err(Halt::Fatal(SignatureError::SharesDoNotCombine.into()));
        };
        let mut d_j = if pair.lead == self.me {
            SecretInt::new(Integer::from(d_j.expose() + fix))
        } else {
            d_j
        };
        // Only the pair's t + 1 holders have a share of d so far: spread it over every member
        // with integers that cancel (member j adds what it draws from its stream to i and
        // subtracts what it draws from i's stream to it), each of half the modulus's length and
        // 128 bits more, so that every member's share is needed and none says anything of d.
        let bound = Integer::from(1) << (self.settings.bits / 2);
        for pos in (1..=self.k).filter(|&pos| pos != self.me) {
            let sender = self.session.member_at(pos);
            let (Some(out), Some(theirs)) = (
                self.streams_out[pos - 1].as_mut(),
                self.streams_in[pos - 1].as_mut(),
            ) else {
                return Err(bad(sender, MessageProblem::NoPairwiseSeed));
            };
            *d_j.expose_mut() += out.wide(&bound).expose();
            *d_j.expose_mut() -= theirs.wide(&bound).expose();
        }
        let public = PublicKey::new(n.clone(), e).map_err(Error::from)?;
        Ok(Some((public, d_j, (pair.p.clone(), pair.q.clone()))))
    }

    fn partial_power(&self, m: &Integer, d_j: &Integer, n: &Integer) -> RoundResult<Integer> {
        partial_power(m, d_j, n).map_err(Halt::Fatal)
    }
}

/// `m^d mod n` for a signed secret exponent, with the constant-time exponentiation
/// ([`hourglass_arith::modular::pow_mod_ct`]).
pub fn partial_power(m: &Integer, d: &Integer, n: &Integer) -> Result<Integer> {
    if n.is_even() || *n < 3 {
        return Err(ParamError::EvenModulus.into());
    }
    let base = if *d < 0 {
        m.clone()
            .invert(n)
            .map_err(|_| Error::from(SignatureError::NotInvertible))?
    } else {
        m.clone()
    };
    let exp = SecretInt::new(d.clone().abs());
    if *exp.expose() == 0 {
        return Ok(Integer::from(1));
    }
    Ok(pow_mod_ct(&base, exp.expose(), n)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A random prime of `bits` bits whose product with `factor` is 3 modulo 4.
    fn prime_3_mod_4(bits: u32, factor: u32, rand: &mut Drbg) -> Integer {
        loop {
            let mut x = rand.below(&(Integer::from(1) << bits));
            x.set_bit(bits - 1, true);
            let x = x.next_prime();
            if Integer::from(&x * factor).mod_u(4) == 3 {
                return x;
            }
        }
    }

    /// Whether three members' values for `rounds` public bases all pass, with `p` and `q`
    /// shared additively (the lead, position 1, holds the remainder).
    fn passes(p: &Integer, q: &Integer, rounds: u32, rand: &mut Drbg) -> u32 {
        let n = Integer::from(p * q);
        let split = |x: &Integer, rand: &mut Drbg| {
            let a = rand.below(&(Integer::from(1) << 200u32)) * 4u32;
            let b = rand.below(&(Integer::from(1) << 200u32)) * 4u32;
            let lead = Integer::from(x - &a) - &b;
            [lead, a, b].map(SecretInt::new)
        };
        let (ps, qs) = (split(p, rand), split(q, rand));
        let mut passed = 0;
        for _ in 0..rounds {
            let g = loop {
                let g = rand.below(&n);
                if g.jacobi(&n) == 1 {
                    break g;
                }
            };
            let values: Vec<Integer> = (0..3)
                .map(|j| biprimality_value(&ps[j], &qs[j], j == 0, &n, &g).unwrap())
                .collect();
            passed += u32::from(check_biprimality(&values, 1, &n));
        }
        passed
    }

    #[test]
    fn the_bgw_primes_are_the_first_above_their_powers_of_two() {
        for &(bits, _) in &BGW_PRIME_OFFSETS {
            let power = Integer::from(1) << bits;
            assert_eq!(bgw_prime(bits), power.next_prime(), "{bits}");
        }
        assert_eq!(bgw_prime(640), (Integer::from(1) << 640u32).next_prime());
    }

    /// What a member that hides a small factor in the trial division (`crate::trial`) relies
    /// on: a modulus whose `p` has a small prime factor fails the test for most bases, whatever
    /// the factor (sieved, in a slice of the trial division, or above every bound), while a
    /// product of two primes passes every one.
    #[test]
    fn a_modulus_with_a_small_third_factor_fails_the_biprimality_test() {
        let mut rand = Drbg::from_key(&[7; 32]);
        let rounds = crate::params::Settings::new(1024).biprimality_rounds;
        let q = prime_3_mod_4(512, 1, &mut rand);
        let p = prime_3_mod_4(512, 1, &mut rand);
        assert_eq!(passes(&p, &q, rounds, &mut rand), rounds);
        for small in [3u32, 7, 65_537, 1_048_573, 4_194_301] {
            let cofactor = prime_3_mod_4(500, small, &mut rand);
            let p = Integer::from(&cofactor * small);
            let passed = passes(&p, &q, 40, &mut rand);
            assert!(passed <= 20, "factor {small}: {passed} of 40 bases passed");
        }
    }
}
