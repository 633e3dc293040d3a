//! A party's identifier: the one name every other module uses for a member of a cluster.

/// A party's identifier, as named in the cluster configuration (1, 2, ...).
pub type PartyId = u32;

/// The relay's id on its links, in a star ([`crate::star`]): below every party's, so that
/// every party dials it ([`crate::tls`]: higher ids dial lower ones).
pub const RELAY_ID: PartyId = 0;
