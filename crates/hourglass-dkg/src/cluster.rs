//! The cluster configuration (`CLUSTER.toml`), and a ready-made cluster for one machine.
//!
//! Every party has its own configuration file. It names every party (id, network address,
//! pinned TLS certificate), this party's TLS private key and the generation settings all
//! parties must share:
//!
//! ```toml
//! # hourglass dkg cluster configuration
//! format = "hourglass-dkg-cluster-v1"
//! name = "test-cluster"            # free text, mixed into the session id
//! key = "keys/party-1.key.pem"     # this party's TLS key (PKCS#8 PEM)
//!
//! [generation]                     # see params::Settings
//! bits = 2048
//!
//! [[party]]
//! id = 1
//! address = "127.0.0.1:7101"
//! certificate = "certs/party-1.crt.pem"
//!
//! [[party]]
//! id = 2
//! address = "127.0.0.1:7102"
//! certificate = "certs/party-2.crt.pem"
//!
//! [[party]]
//! id = 3
//! address = "127.0.0.1:7103"
//! certificate = "certs/party-3.crt.pem"
//! ```
//!
//! Relative paths are relative to the directory of the configuration file. Parties are
//! authenticated by their exact certificate (pinning, no certificate authority), so the
//! certificates may be self-signed; [`init_cluster`] writes such a cluster for tests.

use std::collections::HashSet;
use std::fmt;
use std::io::Write;
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use rustls::crypto::ring::sign::any_supported_type;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::sign::{CertifiedKey, SigningKey};
use serde::Deserialize;
use zeroize::{Zeroize, Zeroizing};

use crate::params::Settings;
use crate::transcript::TranscriptSigner;
use crate::{
    CertStep, CertificateProblem, ConfigError, ConfigProblem, Error, IoOp, PartyId, Result,
    TlsError,
};

pub(crate) mod error;
pub use crate::formats::CLUSTER_FORMAT;

/// Fewest parties a cluster may have (with two, BGW shares reveal the secrets).
pub const MIN_CLUSTER_PARTIES: usize = 3;

pub use crate::party::RELAY_ID;

/// How the parties of a cluster are connected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Topology {
    /// Every party to every other (`k (k - 1) / 2` TLS links).
    #[default]
    Mesh,
    /// Every party to a relay that holds no secret ([`crate::star`]): `k` TLS links, frames
    /// sealed end to end between the members.
    Star,
}

impl Topology {
    /// The smallest committee for which [`Topology::for_committee`] chooses the star (checked
    /// by `dkg_cli`'s `init` test through the CLI's default).
    pub const STAR_FROM: usize = 50;

    /// The topology measured faster for a committee of `parties` on one machine (every party
    /// a process, docs/PERFORMANCE.md "Stop 53"): the mesh below [`Topology::STAR_FROM`]
    /// parties (8% faster at 10 and 20 at 1024 bits, even at 40), the star from it (6% faster
    /// at 50, 18% at 100).
    pub fn for_committee(parties: usize) -> Topology {
        if parties >= Self::STAR_FROM {
            Topology::Star
        } else {
            Topology::Mesh
        }
    }
}

/// One party of the cluster, as every party sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartyEntry {
    /// The party's identifier (nonzero, unique in the cluster).
    pub id: PartyId,
    /// Where the party listens: `ip:port` or `host:port`.
    pub address: String,
    /// The party's pinned TLS certificate (DER).
    pub certificate: Vec<u8>,
}

/// A loaded and checked cluster configuration (see the [module documentation](self)).
#[derive(Clone)]
pub struct ClusterConfig {
    /// The cluster's name (free text; the protocol mixes it into the session id).
    pub name: String,
    /// The generation settings (the `[generation]` table).
    pub generation: Settings,
    /// Every party of the cluster, in the order of the file.
    pub parties: Vec<PartyEntry>,
    /// The relay of a star (`[relay]`; id [`RELAY_ID`]), if the cluster is one.
    pub relay: Option<PartyEntry>,
    key_der: Zeroizing<Vec<u8>>,
    own_id: PartyId,
    path: PathBuf,
}

impl fmt::Debug for ClusterConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClusterConfig")
            .field("name", &self.name)
            .field("generation", &self.generation)
            .field("parties", &self.parties)
            .field("relay", &self.relay)
            .field("key_der", &"...")
            .field("own_id", &self.own_id)
            .field("path", &self.path)
            .finish()
    }
}

/// The file as written, before any checks.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ClusterFile {
    format: String,
    name: String,
    key: PathBuf,
    generation: Settings,
    #[serde(default)]
    party: Vec<PartyFile>,
    relay: Option<RelayFile>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RelayFile {
    address: String,
    certificate: PathBuf,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PartyFile {
    id: PartyId,
    address: String,
    certificate: PathBuf,
}

impl ClusterConfig {
    /// Reads and checks the configuration at `path`.
    ///
    /// Rejects unknown fields, a wrong `format`, fewer than three parties, a zero or repeated
    /// id, a malformed or repeated address, a certificate file that is missing or holds no
    /// single valid PEM `CERTIFICATE`, a repeated certificate, a key that is not a PKCS#8 PEM
    /// key or matches none of the listed certificates, and invalid generation settings.
    pub fn load(path: &Path) -> Result<Self> {
        let fail = |problem: ConfigProblem| Error::from(ConfigError::in_file(path, problem));
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::io(IoOp::Read(path.to_path_buf()), e))?;
        let file: ClusterFile = toml::from_str(&text).map_err(|e| fail(ConfigProblem::Toml(e)))?;
        if file.format != CLUSTER_FORMAT {
            return Err(fail(ConfigProblem::Format { found: file.format }));
        }
        file.generation.validate().map_err(|e| match e {
            Error::InvalidParameters(p) => fail(ConfigProblem::Generation(p)),
            other => other,
        })?;
        if file.party.len() < MIN_CLUSTER_PARTIES {
            return Err(fail(ConfigProblem::TooFewParties {
                found: file.party.len(),
                min: MIN_CLUSTER_PARTIES,
            }));
        }
        file.generation
            .check_threshold(file.party.len())
            .map_err(|e| match e {
                Error::InvalidParameters(p) => fail(ConfigProblem::Threshold(p)),
                other => other,
            })?;
        if file.generation.min_parties > file.party.len() {
            return Err(fail(ConfigProblem::MinParties {
                min_parties: file.generation.min_parties,
                parties: file.party.len(),
            }));
        }

        let base = path.parent().unwrap_or(Path::new(""));
        let mut ids = HashSet::new();
        let mut addresses = HashSet::new();
        // A party's or the relay's entry: a well-formed address and a certificate, each
        // different from every entry's before it.
        let mut entry = |id: PartyId,
                         address: String,
                         certificate: &Path,
                         known: &[PartyEntry]|
         -> Result<PartyEntry> {
            if !is_address(&address) {
                return Err(fail(ConfigProblem::BadAddress { party: id, address }));
            }
            if !addresses.insert(address.clone()) {
                return Err(fail(ConfigProblem::DuplicateAddress { party: id, address }));
            }
            let cert_path = base.join(certificate);
            let certificate = read_certificate(&cert_path).map_err(|problem| {
                fail(ConfigProblem::Certificate {
                    party: id,
                    path: cert_path.clone(),
                    problem,
                })
            })?;
            if let Some(twin) = known.iter().find(|p| p.certificate == certificate) {
                return Err(fail(ConfigProblem::SameCertificate {
                    first: twin.id,
                    second: id,
                }));
            }
            Ok(PartyEntry {
                id,
                address,
                certificate,
            })
        };
        let mut parties: Vec<PartyEntry> = Vec::with_capacity(file.party.len());
        for party in file.party {
            if party.id == 0 {
                return Err(fail(ConfigProblem::ZeroId));
            }
            if !ids.insert(party.id) {
                return Err(fail(ConfigProblem::DuplicateId { id: party.id }));
            }
            let checked = entry(party.id, party.address, &party.certificate, &parties)?;
            parties.push(checked);
        }
        let relay = file
            .relay
            .map(|relay| entry(RELAY_ID, relay.address, &relay.certificate, &parties))
            .transpose()?;

        let key_path = base.join(&file.key);
        let pem = Zeroizing::new(
            std::fs::read(&key_path).map_err(|e| Error::io(IoOp::ReadKey(key_path.clone()), e))?,
        );
        let key_der = match PrivatePkcs8KeyDer::from_pem_slice(&pem) {
            Ok(key) => Zeroizing::new(key.secret_pkcs8_der().to_vec()),
            Err(_) => return Err(fail(ConfigProblem::NoKey { path: key_path })),
        };
        let signing_key = signing_key_from(&key_der).map_err(|source| {
            fail(ConfigProblem::UnusableKey {
                path: key_path.clone(),
                source,
            })
        })?;
        let own_id = parties
            .iter()
            .chain(&relay)
            .find(|p| key_matches(&signing_key, &p.certificate))
            .map(|p| p.id)
            .ok_or_else(|| {
                fail(ConfigProblem::KeyMatchesNone {
                    path: key_path.clone(),
                })
            })?;

        Ok(ClusterConfig {
            name: file.name,
            generation: file.generation,
            parties,
            relay,
            key_der,
            own_id,
            path: path.to_path_buf(),
        })
    }

    /// The file this configuration was loaded from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The party whose certificate matches this configuration's private key.
    ///
    /// Always `Some` for a configuration returned by [`ClusterConfig::load`], which rejects a
    /// key that matches no party.
    pub fn own_id(&self) -> Option<PartyId> {
        Some(self.own_id)
    }

    /// How the parties are connected: a star when the file has a `[relay]` table.
    pub fn topology(&self) -> Topology {
        if self.relay.is_some() {
            Topology::Star
        } else {
            Topology::Mesh
        }
    }

    /// A member's view of a star: the relay (as party [`RELAY_ID`]) and this party alone, so
    /// that [`crate::tls::TlsTransport::connect`] dials the relay and nobody else.
    pub fn relay_link(&self) -> Result<Self> {
        let relay = self.relay.clone().ok_or_else(|| {
            ConfigError::in_file(
                &self.path,
                ConfigProblem::Topology("no [relay] table: not a star"),
            )
        })?;
        let own = self.party(self.own_id).cloned().ok_or_else(|| {
            ConfigError::in_file(
                &self.path,
                ConfigProblem::Topology("this is the relay's configuration, not a member's"),
            )
        })?;
        Ok(ClusterConfig {
            parties: vec![relay, own],
            ..self.clone()
        })
    }

    /// The relay's view of a star for a session among `members` (parties of the cluster: all
    /// of them for a generation, the signers of a signature): itself (as party [`RELAY_ID`])
    /// and those members, so that [`crate::tls::TlsTransport::connect`] accepts each of them
    /// and dials nobody. Fails unless `members` are at least two parties of the cluster, each
    /// named once.
    pub fn relay_hub(&self, members: &[PartyId]) -> Result<Self> {
        let mut unique = members.to_vec();
        unique.sort_unstable();
        unique.dedup();
        if unique.len() < 2 || unique.len() != members.len() {
            return Err(ConfigError::RelaySession {
                members: members.to_vec(),
            }
            .into());
        }
        match &self.relay {
            Some(relay) if self.own_id == RELAY_ID => {
                if let Some(&missing) = members.iter().find(|&&id| self.party(id).is_none()) {
                    return Err(ConfigError::in_file(
                        &self.path,
                        ConfigProblem::PartyNotInCluster { party: missing },
                    )
                    .into());
                }
                let mut parties = vec![relay.clone()];
                parties.extend(
                    self.parties
                        .iter()
                        .filter(|p| members.contains(&p.id))
                        .cloned(),
                );
                Ok(ClusterConfig {
                    parties,
                    ..self.clone()
                })
            }
            _ => Err(ConfigError::in_file(
                &self.path,
                ConfigProblem::Topology("not the relay's configuration of a star (its key is a member's, or there is no [relay] table)"),
            )
            .into()),
        }
    }

    /// The party with identifier `id`.
    pub fn party(&self, id: PartyId) -> Option<&PartyEntry> {
        self.parties.iter().find(|p| p.id == id)
    }

    /// The same configuration with only the parties `ids` (this party among them): for a
    /// threshold signature among some members, whose transport then connects to those alone.
    pub fn among(&self, ids: &[PartyId]) -> Result<Self> {
        if !ids.contains(&self.own_id) {
            return Err(ConfigError::NotMember {
                party: self.own_id,
                members: ids.to_vec(),
            }
            .into());
        }
        if let Some(&missing) = ids.iter().find(|&&id| self.party(id).is_none()) {
            return Err(ConfigError::in_file(
                &self.path,
                ConfigProblem::PartyNotInCluster { party: missing },
            )
            .into());
        }
        let mut restricted = self.clone();
        restricted.parties.retain(|p| ids.contains(&p.id));
        Ok(restricted)
    }

    /// Every party's identifier, in increasing order.
    pub fn ids(&self) -> Vec<PartyId> {
        let mut ids: Vec<PartyId> = self.parties.iter().map(|p| p.id).collect();
        ids.sort_unstable();
        ids
    }

    /// This party's signer of transcripts: its TLS key, and every party's pinned certificate
    /// (the round that ends a generation signs and checks the transcript with them).
    pub fn transcript_signer(&self) -> Result<TranscriptSigner> {
        let certificates = self
            .parties
            .iter()
            .map(|p| (p.id, p.certificate.clone()))
            .collect();
        TranscriptSigner::from_signing_key(self.own_id, self.signing_key()?, certificates)
    }

    /// This party's TLS signing key (for the TLS transport).
    pub(crate) fn signing_key(&self) -> Result<Arc<dyn SigningKey>> {
        signing_key_from(&self.key_der).map_err(|e| {
            ConfigError::in_file(self.path.clone(), ConfigProblem::UnusableLoadedKey(e)).into()
        })
    }
}

/// Loads a PKCS#8 key with the ring provider, wiping the temporary copy.
fn signing_key_from(pkcs8: &[u8]) -> std::result::Result<Arc<dyn SigningKey>, rustls::Error> {
    let mut der = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(pkcs8.to_vec()));
    let key = any_supported_type(&der);
    der.zeroize();
    key
}

/// Whether the certificate (DER) carries the public key of `key`.
fn key_matches(key: &Arc<dyn SigningKey>, certificate: &[u8]) -> bool {
    let certified = CertifiedKey::new(
        vec![CertificateDer::from(certificate.to_vec())],
        Arc::clone(key),
    );
    certified.keys_match().is_ok()
}

/// The single certificate of a PEM file (of at most 1 MiB), checked to be a parsable X.509
/// certificate.
fn read_certificate(path: &Path) -> std::result::Result<Vec<u8>, CertificateProblem> {
    let mut certs = crate::transcript::read_pem_certificates(path)?;
    match certs.len() {
        1 => Ok(certs.remove(0)),
        count => Err(CertificateProblem::Several { count }),
    }
}

/// `ip:port`, `[ipv6]:port` or `host:port` with a nonzero port.
fn is_address(address: &str) -> bool {
    if let Ok(addr) = address.parse::<SocketAddr>() {
        return addr.port() != 0;
    }
    let Some((host, port)) = address.rsplit_once(':') else {
        return false;
    };
    let port_ok = port.parse::<u16>().is_ok_and(|p| p != 0);
    let host_ok = !host.is_empty()
        && host.len() <= 253
        && host.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        });
    port_ok && host_ok
}

/// Writes a ready cluster of `parties` parties into `dir`, for running all parties on one
/// machine, and returns the configuration files (`party-1.toml`, ...).
///
/// Every party gets a fresh self-signed ECDSA P-256 certificate (subject
/// `CN=hourglass dkg party i`, name `party-i.hourglass.invalid`) in `certs/party-i.crt.pem`,
/// its key in `keys/party-i.key.pem` (created with mode 0600) and the address
/// `127.0.0.1:<base_port + i - 1>`. `dir` is created if needed and must otherwise be empty;
/// on failure, what was written is removed again.
pub fn init_cluster(
    dir: &Path,
    parties: usize,
    settings: &Settings,
    base_port: u16,
    name: &str,
) -> Result<Vec<PathBuf>> {
    init_cluster_with(dir, parties, settings, base_port, name, Topology::Mesh)
}

/// [`init_cluster`] with a choice of topology: for a star, also the relay's key and
/// certificate (`keys/relay.key.pem`, `certs/relay.crt.pem`), its address (the port after the
/// parties') in every party's `[relay]` table, and the relay's own configuration
/// (`relay.toml`, for `hourglass dkg relay`).
pub fn init_cluster_with(
    dir: &Path,
    parties: usize,
    settings: &Settings,
    base_port: u16,
    name: &str,
    topology: Topology,
) -> Result<Vec<PathBuf>> {
    if parties < MIN_CLUSTER_PARTIES {
        return Err(ConfigError::TooFewParties {
            parties,
            min: MIN_CLUSTER_PARTIES,
        }
        .into());
    }
    settings.validate()?;
    settings.check_threshold(parties)?;
    // The threshold is fixed now, in every party's configuration.
    let settings = &Settings {
        threshold: Some(settings.threshold_for(parties)),
        ..settings.clone()
    };
    if settings.min_parties > parties {
        return Err(ConfigError::MinParties {
            min_parties: settings.min_parties,
            parties,
        }
        .into());
    }
    let ports = parties + usize::from(topology == Topology::Star);
    let last_port = usize::from(base_port) + ports - 1;
    if base_port == 0 || last_port > usize::from(u16::MAX) {
        return Err(ConfigError::BasePort {
            base: base_port,
            last: last_port,
            max: usize::from(u16::MAX) + 1 - ports,
        }
        .into());
    }
    let created_dir = match std::fs::read_dir(dir) {
        Ok(mut entries) => {
            if entries.next().is_some() {
                return Err(ConfigError::NotEmpty {
                    dir: dir.to_path_buf(),
                }
                .into());
            }
            false
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(dir)
                .map_err(|e| Error::io(IoOp::Create(dir.to_path_buf()), e))?;
            true
        }
        Err(e) => return Err(Error::io(IoOp::Read(dir.to_path_buf()), e)),
    };

    let result = write_cluster(dir, parties, settings, base_port, name, topology);
    if result.is_err() {
        // The directory was empty or absent: everything in it is ours.
        if created_dir {
            let _ = std::fs::remove_dir_all(dir);
        } else {
            let _ = std::fs::remove_dir_all(dir.join("certs"));
            let _ = std::fs::remove_dir_all(dir.join("keys"));
            for i in 1..=parties {
                let _ = std::fs::remove_file(dir.join(format!("party-{i}.toml")));
            }
            let _ = std::fs::remove_file(dir.join("relay.toml"));
        }
    }
    result
}

fn write_cluster(
    dir: &Path,
    parties: usize,
    settings: &Settings,
    base_port: u16,
    name: &str,
    topology: Topology,
) -> Result<Vec<PathBuf>> {
    for sub in ["certs", "keys"] {
        let sub = dir.join(sub);
        std::fs::create_dir(&sub).map_err(|e| Error::io(IoOp::Create(sub.clone()), e))?;
    }
    for i in 1..=parties {
        write_identity(
            dir,
            &format!("party-{i}"),
            &format!("hourglass dkg party {i}"),
        )?;
    }
    let relay_table = match topology {
        Topology::Mesh => String::new(),
        Topology::Star => {
            write_identity(dir, "relay", "hourglass dkg relay")?;
            let port = usize::from(base_port) + parties;
            format!(
                "\n# The relay every party connects to (a star: it forwards sealed frames and \
                 holds no secret).\n[relay]\naddress = \"127.0.0.1:{port}\"\n\
                 certificate = \"certs/relay.crt.pem\"\n"
            )
        }
    };
    let generation = toml::to_string(settings).map_err(ConfigError::WriteGeneration)?;
    let quoted_name = toml::Value::String(name.to_string()).to_string();
    let mut party_tables = String::new();
    for i in 1..=parties {
        let port = usize::from(base_port) + i - 1;
        party_tables.push_str(&format!(
            "\n[[party]]\nid = {i}\naddress = \"127.0.0.1:{port}\"\n\
             certificate = \"certs/party-{i}.crt.pem\"\n"
        ));
    }
    let mut paths = Vec::with_capacity(parties);
    for i in 1..=parties {
        let text = format!(
            "# hourglass dkg cluster configuration: party {i} of {parties}\n\
             format = \"{CLUSTER_FORMAT}\"\n\
             name = {quoted_name}\n\
             # This party's TLS private key (PKCS#8 PEM), relative to this file.\n\
             key = \"keys/party-{i}.key.pem\"\n\
             \n\
             [generation]\n\
             {generation}{party_tables}{relay_table}"
        );
        let path = dir.join(format!("party-{i}.toml"));
        write_new(&path, text.as_bytes(), 0o644)?;
        paths.push(path);
    }
    if topology == Topology::Star {
        let text = format!(
            "# hourglass dkg cluster configuration: the relay of {parties} parties \
             (hourglass dkg relay --config relay.toml)\n\
             format = \"{CLUSTER_FORMAT}\"\n\
             name = {quoted_name}\n\
             # The relay's TLS private key (PKCS#8 PEM), relative to this file.\n\
             key = \"keys/relay.key.pem\"\n\
             \n\
             [generation]\n\
             {generation}{party_tables}{relay_table}"
        );
        write_new(&dir.join("relay.toml"), text.as_bytes(), 0o644)?;
    }
    Ok(paths)
}

/// A fresh P-256 key and a self-signed certificate for it with common name `common_name`:
/// `certs/STEM.crt.pem` and `keys/STEM.key.pem` (mode 0600).
fn write_identity(dir: &Path, stem: &str, common_name: &str) -> Result<()> {
    let tls = |step: CertStep, source: rcgen::Error| TlsError::Certificate { step, source };
    let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256)
        .map_err(|e| tls(CertStep::GenerateKey, e))?;
    let mut params = rcgen::CertificateParams::new(vec![format!("{stem}.hourglass.invalid")])
        .map_err(|e| tls(CertStep::Parameters, e))?;
    params.distinguished_name = rcgen::DistinguishedName::new();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, common_name.to_string());
    let cert = params
        .self_signed(&key)
        .map_err(|e| tls(CertStep::Sign, e))?;
    write_new(
        &dir.join(format!("certs/{stem}.crt.pem")),
        cert.pem().as_bytes(),
        0o644,
    )?;
    let key_pem = Zeroizing::new(key.serialize_pem());
    write_new(
        &dir.join(format!("keys/{stem}.key.pem")),
        key_pem.as_bytes(),
        0o600,
    )
}

/// Creates `path` (which must not exist) with `mode` from the start, and writes `data`.
fn write_new(path: &Path, data: &[u8], mode: u32) -> Result<()> {
    let io = |e| Error::io(IoOp::Write(path.to_path_buf()), e);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(mode);
    }
    #[cfg(not(unix))]
    let _ = mode;
    let mut file = options.open(path).map_err(io)?;
    file.write_all(data).map_err(io)?;
    file.sync_all().map_err(io)
}

/// Finds `count` consecutive loopback ports that are free right now (each one binds), for
/// tests and local clusters.
///
/// Ports are taken from 20000 to 32767, below Linux's default range of ephemeral ports, so
/// that outgoing connections do not take them. Successive calls in one process return
/// disjoint ranges. The ports are released again before returning, so another process may
/// still take them.
pub fn free_loopback_base_port(count: usize) -> Result<u16> {
    const LOW: u32 = 20_000;
    const SPAN: u32 = 12_768;
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let count32 = u32::try_from(count)
        .ok()
        .filter(|&c| (1..=256).contains(&c))
        .ok_or(ConfigError::PortCount { count })?;
    let seed = {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        nanos ^ std::process::id().wrapping_mul(2_654_435_761)
    };
    for _ in 0..200 {
        let offset = seed.wrapping_add(NEXT.fetch_add(count32, Ordering::Relaxed)) % SPAN;
        let offset = offset.min(SPAN - count32);
        let base = LOW + offset;
        let all_free = (base..base + count32)
            .map(|port| {
                let port = u16::try_from(port).ok()?;
                TcpListener::bind(("127.0.0.1", port)).ok()
            })
            .collect::<Option<Vec<TcpListener>>>()
            .is_some();
        if all_free {
            return u16::try_from(base).map_err(|_| ConfigError::PortOverflow.into());
        }
    }
    Err(ConfigError::NoFreePorts { count }.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses() {
        for good in [
            "127.0.0.1:7101",
            "[::1]:7101",
            "party-1.example.org:443",
            "host:1",
        ] {
            assert!(is_address(good), "{good}");
        }
        for bad in [
            "127.0.0.1",
            "127.0.0.1:0",
            ":7101",
            "host:",
            "host:70000",
            "ho st:1",
            "-host:1",
            "a..b:1",
            "::1:7101x",
        ] {
            assert!(!is_address(bad), "{bad}");
        }
    }
}
