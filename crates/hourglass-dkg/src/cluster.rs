//! Cluster configuration (being written).
