//! Flags and checks that several `dkg` subcommands share: the generation settings, simulated
//! network conditions, the signature scheme, timeouts, `--signers` with n-of-n shares, and the
//! hidden `--deviate` of the party processes.

use std::time::Duration;

use clap::{Args, ValueEnum};
use hourglass_arith::entropy::EntropySource;
use hourglass_dkg::adversary::{Deviant, Deviation};
use hourglass_dkg::cluster::{ClusterConfig, Topology};
use hourglass_dkg::params::Settings;
use hourglass_dkg::sign::Scheme;
use hourglass_dkg::tls::{TlsOptions, TlsTransport};
use hourglass_dkg::transcript::TranscriptSigner;
use hourglass_dkg::transport::{NetSim, PartyId, Transport};
use hourglass_rsa::HashAlg;

use crate::cli_error::{CliError, Usage};

/// Generation settings shared by `init` and `local`.
#[derive(Args, Debug, Clone)]
pub(super) struct GenerationArgs {
    /// Modulus size in bits.
    #[arg(long, default_value_t = 2048)]
    bits: u32,
    /// Candidate pairs per round trip.
    #[arg(long, default_value_t = hourglass_dkg::params::DEFAULT_BATCH)]
    batch: usize,
    /// Largest sieving prime (default: the largest that fits, as measured best).
    #[arg(long)]
    sieve_bound: Option<u32>,
    /// Biprimality test repetitions.
    #[arg(long, default_value_t = 64)]
    rounds: u32,
    /// Fewest parties to continue with after failures (never fewer than 2t + 1).
    #[arg(long, default_value_t = 3)]
    min_parties: usize,
    /// Colluding parties tolerated, t (default floor((k-1)/2)); fixed for the cluster and never
    /// lowered: a generation that would continue with fewer than 2t + 1 parties stops.
    #[arg(long, value_name = "T")]
    threshold: Option<usize>,
    /// Seconds to wait for a party before declaring it failed.
    #[arg(long, default_value_t = 30.0)]
    timeout: f64,
}

impl GenerationArgs {
    pub(super) fn settings(&self) -> Result<Settings, CliError> {
        if !(self.timeout > 0.0 && self.timeout < 86_400.0) {
            return Err(Usage::range("--timeout", "be between 0 and 86400 seconds").into());
        }
        let settings = Settings {
            bits: self.bits,
            batch: self.batch,
            sieve_bound: self.sieve_bound,
            biprimality_rounds: self.rounds,
            min_parties: self.min_parties,
            threshold: self.threshold,
            timeout_ms: (self.timeout * 1000.0) as u64,
        };
        settings.validate()?;
        Ok(settings)
    }
}

/// Simulated network conditions.
#[derive(Args, Debug, Clone, Default)]
pub(super) struct NetSimArgs {
    /// Add this round-trip time to every link (milliseconds), to simulate a wide-area network.
    #[arg(long, default_value_t = 0.0)]
    rtt_ms: f64,
    /// Add up to this much random one-way delay (milliseconds).
    #[arg(long, default_value_t = 0.0)]
    jitter_ms: f64,
    /// Fraction of frames delayed by a retransmission timeout (0 to 1).
    #[arg(long, default_value_t = 0.0)]
    loss: f64,
}

impl NetSimArgs {
    pub(super) fn sim(&self) -> Result<NetSim, CliError> {
        if !(0.0..=60_000.0).contains(&self.rtt_ms) || !(0.0..=60_000.0).contains(&self.jitter_ms) {
            return Err(Usage::range("--rtt-ms and --jitter-ms", "be between 0 and 60000").into());
        }
        if !(0.0..=0.5).contains(&self.loss) {
            return Err(Usage::range("--loss", "be between 0 and 0.5").into());
        }
        Ok(NetSim {
            rtt: Duration::from_secs_f64(self.rtt_ms / 1000.0),
            jitter: Duration::from_secs_f64(self.jitter_ms / 1000.0),
            loss: self.loss,
        })
    }

    pub(super) fn to_args(&self) -> Vec<String> {
        vec![
            "--rtt-ms".into(),
            self.rtt_ms.to_string(),
            "--jitter-ms".into(),
            self.jitter_ms.to_string(),
            "--loss".into(),
            self.loss.to_string(),
        ]
    }
}

#[derive(Args, Debug, Clone)]
pub(super) struct SchemeArgs {
    /// RSASSA-PSS instead of PKCS#1 v1.5 (salt as long as the hash).
    #[arg(long)]
    pub(super) pss: bool,
    /// Hash: sha256, sha384 or sha512.
    #[arg(long, default_value = "sha256")]
    hash: String,
}

impl SchemeArgs {
    pub(super) fn parse(&self) -> Result<(Scheme, HashAlg), CliError> {
        let hash = match self.hash.as_str() {
            "sha256" => HashAlg::Sha256,
            "sha384" => HashAlg::Sha384,
            "sha512" => HashAlg::Sha512,
            other => return Err(Usage::UnknownHash(other.to_string()).into()),
        };
        let scheme = if self.pss {
            Scheme::Pss
        } else {
            Scheme::Pkcs1v15
        };
        Ok((scheme, hash))
    }

    pub(super) fn to_args(&self) -> Vec<String> {
        let mut v = vec!["--hash".into(), self.hash.clone()];
        if self.pss {
            v.push("--pss".into());
        }
        v
    }
}

pub(super) fn seconds(value: f64, flag: &'static str) -> Result<Duration, CliError> {
    if !(value > 0.0 && value < 86_400.0) {
        return Err(Usage::range(flag, "be between 0 and 86400 seconds").into());
    }
    Ok(Duration::from_secs_f64(value))
}

/// Why `--signers` does not go with n-of-n shares.
pub(super) const NOT_THRESHOLD_SHARES: &str = "--signers needs threshold shares: n-of-n shares (from a generation) sign with every member; reshare them first (dkg reshare --threshold T) to sign with any t + 1";

/// A `--deviate` behaviour by name.
pub(super) fn deviation(name: Option<&str>) -> Result<Option<Deviation>, CliError> {
    name.map(|d| {
        Deviation::from_name(d)
            .ok_or_else(|| CliError::from(Usage::value("--deviate", d, "no such behaviour")))
    })
    .transpose()
}

/// `transport`, deviating as told.
pub(super) fn deviating<T: Transport + 'static>(
    transport: T,
    how: Option<Deviation>,
) -> Box<dyn Transport> {
    match how {
        Some(d) => Box::new(Deviant::new(transport, d)),
        None => Box::new(transport),
    }
}

/// Party `me`'s connection to the other parties of `among` for a session bounded by
/// `options`, deviating as told: a TLS link to each of them in a mesh, or in a star one link to
/// the relay, over which frames are sealed end to end ([`hourglass_dkg::star::join`], with a
/// key announced under the party's transcript key and drawn from `entropy`).
pub(super) fn connect_session(
    among: &ClusterConfig,
    me: PartyId,
    options: &TlsOptions,
    entropy: &mut dyn EntropySource,
    how: Option<Deviation>,
) -> Result<Box<dyn Transport>, CliError> {
    if among.relay.is_none() {
        let tls = TlsTransport::connect(among, me, options).map_err(CliError::from)?;
        return Ok(deviating(tls, how));
    }
    let signer = among.transcript_signer().map_err(CliError::from)?;
    let star =
        hourglass_dkg::star::join(among, me, options, &signer, entropy).map_err(CliError::from)?;
    Ok(deviating(star, how))
}

/// `transport`, deviating as told, holding the party's transcript key (for
/// `equivocate-transcript-signature`, which signs a second time).
pub(super) fn deviating_signer<T: Transport + 'static>(
    transport: T,
    how: Option<Deviation>,
    signer: &TranscriptSigner,
) -> Box<dyn Transport> {
    match how {
        Some(d) => Box::new(Deviant::with_signer(transport, d, signer.clone())),
        None => Box::new(transport),
    }
}

/// `--topology`: how the parties of a new cluster connect.
#[derive(Args, Debug)]
pub(super) struct TopologyArgs {
    /// mesh: every party connects to every other (k (k - 1) / 2 TLS links); star: every party
    /// connects to a relay that forwards frames sealed end to end between the members and
    /// holds no secret (k links; `hourglass dkg relay` runs it; it can stall the generation,
    /// not read or change a share: docs/FORMATS.md section 16.8); auto: the one measured
    /// faster for the committee's size, the mesh below 50 parties and the star from 50
    #[arg(long, value_enum, default_value_t = TopologyName::Auto)]
    topology: TopologyName,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum TopologyName {
    Auto,
    Mesh,
    Star,
}

impl TopologyArgs {
    /// The topology chosen for a committee of `parties`.
    pub(super) fn topology(&self, parties: usize) -> Topology {
        match self.topology {
            TopologyName::Auto => Topology::for_committee(parties),
            TopologyName::Mesh => Topology::Mesh,
            TopologyName::Star => Topology::Star,
        }
    }
}
