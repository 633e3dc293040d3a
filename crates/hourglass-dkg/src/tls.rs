//! TLS transport (being written).
