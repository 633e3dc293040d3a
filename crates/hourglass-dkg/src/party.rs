//! A party's identifier: the one name every other module uses for a member of a cluster.

/// A party's identifier, as named in the cluster configuration (1, 2, ...).
pub type PartyId = u32;
