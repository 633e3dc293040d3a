//! The cluster configuration loader on arbitrary bytes: the input is written as a
//! configuration file into a directory that also holds a valid three-party cluster (made once
//! by `init_cluster`: certificates in `certs/`, keys in `keys/`), so the fuzzer can point at
//! real certificate and key files. `ClusterConfig::load` must return, never panic; whatever
//! loads has at least three parties with distinct nonzero ids, and its own id among them.
//!
//! `load` reads whatever files the configuration names. Inputs naming a path outside the
//! directory (absolute, or with `..`) are skipped, so that the fuzzer does not wander into
//! `/dev/zero` or a FIFO: reading those is the user's choice, not a parser bug.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use hourglass_dkg::cluster::{init_cluster, ClusterConfig};
use hourglass_dkg::params::Settings;
use libfuzzer_sys::fuzz_target;

/// The cluster directory, made on first use (one per process, so parallel jobs do not share
/// it; left behind in the temporary directory).
fn cluster_dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir =
            std::env::temp_dir().join(format!("hourglass-fuzz-dkg-cluster-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        init_cluster(&dir, 3, &Settings::new(512), 7101, "fuzz-cluster")
            .expect("writing the fuzz cluster");
        dir
    })
}

/// Whether a string value could name a file outside the cluster directory.
fn escapes(s: &str) -> bool {
    s.starts_with('/') || s.contains("..")
}

fn any_escape(v: &toml::Value) -> bool {
    match v {
        toml::Value::String(s) => escapes(s),
        toml::Value::Array(a) => a.iter().any(any_escape),
        toml::Value::Table(t) => t.values().any(any_escape),
        _ => false,
    }
}

fuzz_target!(|data: &[u8]| {
    let dir = cluster_dir();
    // Same toml crate (and version) as the loader: if this does not parse, neither does
    // `load`, which then fails before opening any other file.
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(table) = toml::from_str::<toml::Table>(text) {
            if table.values().any(any_escape) {
                return;
            }
        }
    }
    let path = dir.join("fuzz.toml");
    std::fs::write(&path, data).expect("writing the fuzz input");
    if let Ok(config) = ClusterConfig::load(&path) {
        let ids = config.ids();
        assert!(ids.len() >= 3);
        assert!(ids[0] != 0);
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
        let own = config
            .own_id()
            .expect("a loaded configuration knows its own id");
        assert!(config.party(own).is_some());
        config
            .generation
            .validate()
            .expect("loaded settings are valid");
    }
});
