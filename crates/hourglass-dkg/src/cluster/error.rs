//! Why a cluster configuration (or the run's view of it) is unusable.

use std::path::PathBuf;

use crate::{CertificateProblem, ParamError, PartyId};

/// Why a cluster configuration (or the run's view of it) is unusable.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A problem in the configuration file.
    #[error("{}: {problem}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        #[source]
        problem: Box<ConfigProblem>,
    },
    /// Too few parties for a new cluster.
    #[error("{parties} parties: a cluster needs at least {min}")]
    TooFewParties {
        /// Parties asked for.
        parties: usize,
        /// The fewest allowed.
        min: usize,
    },
    /// `min_parties` above the new cluster's size.
    #[error("min_parties is {min_parties} but the cluster would have only {parties} parties")]
    MinParties {
        /// The setting.
        min_parties: usize,
        /// Parties asked for.
        parties: usize,
    },
    /// A base port that leaves no room for every party.
    #[error("ports {base} to {last}: use a base port from 1 to {max}")]
    BasePort {
        /// The base port.
        base: u16,
        /// The last port needed.
        last: usize,
        /// The largest base port that fits.
        max: usize,
    },
    /// A cluster directory that is not empty.
    #[error("refusing to write a cluster into {}: the directory is not empty", dir.display())]
    NotEmpty {
        /// The directory.
        dir: PathBuf,
    },
    /// The `[generation]` table could not be written.
    #[error("writing the [generation] table: {0}")]
    WriteGeneration(#[source] toml::ser::Error),
    /// A number of ports outside 1 to 256.
    #[error("{count} ports: ask for 1 to 256")]
    PortCount {
        /// Ports asked for.
        count: usize,
    },
    /// Port arithmetic overflowed.
    #[error("port arithmetic overflowed")]
    PortOverflow,
    /// No run of free loopback ports.
    #[error("found no {count} consecutive free loopback ports")]
    NoFreePorts {
        /// Ports asked for.
        count: usize,
    },
    /// This party is not a member of the run.
    #[error("party {party} is not among the members {members:?}")]
    NotMember {
        /// This party.
        party: PartyId,
        /// The members.
        members: Vec<PartyId>,
    },
    /// A share of another party.
    #[error("the share belongs to party {share}, this is party {me}")]
    OtherPartysShare {
        /// The share's party.
        share: PartyId,
        /// This party.
        me: PartyId,
    },
    /// A party with no certificate among those given (every member of a generation needs
    /// one: it signs the transcript with the key behind it).
    #[error("party {party} has no certificate among the cluster's")]
    NoCertificate {
        /// The party.
        party: PartyId,
    },
    /// A private key that is not the one of the party's certificate.
    #[error("the private key does not belong to party {party}'s certificate")]
    KeyNotCertified {
        /// The party.
        party: PartyId,
    },
    /// A private key the TLS library cannot use.
    #[error("unusable private key: {0}")]
    UnusableKey(#[source] rustls::Error),
    /// A party with other generation settings.
    #[error("party {party} runs with different generation settings (bits, batch, sieve bound, rounds, minimum or timeout); every party needs the same [generation] table")]
    SettingsMismatch {
        /// The party.
        party: PartyId,
    },
    /// A party that expects other members.
    #[error("party {party} expects members {theirs:?}, this party {ours:?}")]
    MembersMismatch {
        /// The party.
        party: PartyId,
        /// The members it expects.
        theirs: Vec<PartyId>,
        /// The members this party expects.
        ours: Vec<PartyId>,
    },
    /// A relay's session among too few members, or one named twice.
    #[error("a relay's session among {members:?}: it needs at least two members, each named once")]
    RelaySession {
        /// The members asked for.
        members: Vec<PartyId>,
    },
}

impl ConfigError {
    /// A problem in the configuration file at `path`.
    pub fn in_file(path: impl Into<PathBuf>, problem: ConfigProblem) -> Self {
        ConfigError::File {
            path: path.into(),
            problem: Box::new(problem),
        }
    }

    /// Whether this is a negative verdict (exit status 1) rather than an error (2): never: a
    /// configuration that cannot be used is an error of its author or of the run's set-up.
    pub fn is_verdict(&self) -> bool {
        false
    }
}

/// What is wrong in a cluster configuration file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigProblem {
    /// Not valid TOML, or unknown fields.
    #[error("{0}")]
    Toml(#[source] toml::de::Error),
    /// A `format` other than this version's.
    #[error(
        "format {found:?} is not supported (expected {:?})",
        crate::formats::CLUSTER_FORMAT
    )]
    Format {
        /// The format in the file.
        found: String,
    },
    /// Invalid `[generation]` settings.
    #[error("[generation]: invalid parameters: {0}")]
    Generation(#[source] ParamError),
    /// Too few `[[party]]` entries.
    #[error("{found} [[party]] entries; a cluster needs at least {min}")]
    TooFewParties {
        /// Entries in the file.
        found: usize,
        /// The fewest allowed.
        min: usize,
    },
    /// A threshold the cluster's size cannot carry.
    #[error("invalid parameters: {0}")]
    Threshold(#[source] ParamError),
    /// `min_parties` above the cluster's size.
    #[error(
        "[generation] min_parties is {min_parties} but the cluster has only {parties} parties"
    )]
    MinParties {
        /// The setting.
        min_parties: usize,
        /// The cluster's size.
        parties: usize,
    },
    /// A party id 0.
    #[error("party id 0: ids start at 1")]
    ZeroId,
    /// A party id listed twice.
    #[error("party id {id} is listed twice")]
    DuplicateId {
        /// The id.
        id: PartyId,
    },
    /// An address that is not `host:port`.
    #[error("party {party}: address {address:?} is not ip:port or host:port")]
    BadAddress {
        /// The party.
        party: PartyId,
        /// The address in the file.
        address: String,
    },
    /// An address used by two parties.
    #[error("party {party}: address {address} is used by another party")]
    DuplicateAddress {
        /// The party.
        party: PartyId,
        /// The address.
        address: String,
    },
    /// A party certificate that cannot be used.
    #[error("party {party}: certificate {}: {problem}", path.display())]
    Certificate {
        /// The party.
        party: PartyId,
        /// The certificate file.
        path: PathBuf,
        /// What is wrong.
        #[source]
        problem: CertificateProblem,
    },
    /// Two parties with the same certificate.
    #[error("parties {first} and {second} have the same certificate")]
    SameCertificate {
        /// The first party.
        first: PartyId,
        /// The second.
        second: PartyId,
    },
    /// A key file without a PKCS#8 PEM key.
    #[error("key {}: no PKCS#8 PEM private key (\"BEGIN PRIVATE KEY\")", path.display())]
    NoKey {
        /// The key file.
        path: PathBuf,
    },
    /// A key the TLS library cannot use.
    #[error("key {}: unusable private key: {source}", path.display())]
    UnusableKey {
        /// The key file.
        path: PathBuf,
        /// Why.
        #[source]
        source: rustls::Error,
    },
    /// A loaded key that the TLS library cannot use.
    #[error("unusable private key: {0}")]
    UnusableLoadedKey(#[source] rustls::Error),
    /// A key that matches no party's certificate.
    #[error("key {} matches none of the parties' certificates", path.display())]
    KeyMatchesNone {
        /// The key file.
        path: PathBuf,
    },
    /// The party asked for is not in the cluster.
    #[error("party {party} is not in the cluster")]
    PartyNotInCluster {
        /// The party.
        party: PartyId,
    },
    /// The key is another party's.
    #[error("the key is party {key_party}'s, not party {party}'s")]
    OtherPartysKey {
        /// The key's party.
        key_party: PartyId,
        /// The party asked for.
        party: PartyId,
    },
    /// The key matches no party.
    #[error("the key matches no party")]
    KeyMatchesNoParty,
    /// A star's view asked of a configuration without a `[relay]` table, or a member's view
    /// of the relay's own configuration (or the relay's view of a member's).
    #[error("{0}")]
    Topology(&'static str),
}

impl ConfigProblem {
    /// Whether this is a negative verdict (exit status 1) rather than an error (2): never: a
    /// configuration file that cannot be used is malformed input.
    pub fn is_verdict(&self) -> bool {
        false
    }
}
