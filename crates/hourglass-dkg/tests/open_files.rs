//! The open-file limit, raised when a cluster needs more than the soft limit. Its own test
//! binary (one process): it lowers this process's soft limit, which every test of a binary
//! shares.

// Linux: `rlim_t` is `u64` there.
#![cfg(target_os = "linux")]

use std::thread;
use std::time::Duration;

use hourglass_dkg::bounds::FrameBounds;
use hourglass_dkg::cluster::{free_loopback_base_port, init_cluster, ClusterConfig};
use hourglass_dkg::limits::{ensure_open_files, in_process_open_files, party_open_files};
use hourglass_dkg::params::Settings;
use hourglass_dkg::tls::{TlsOptions, TlsTransport};
use hourglass_dkg::transport::Transport;
use hourglass_dkg::PartyId;

fn limits() -> (u64, u64) {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one `rlimit` through a pointer to a live local value.
    assert_eq!(
        unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) },
        0
    );
    (limit.rlim_cur, limit.rlim_max)
}

fn set_soft(soft: u64) {
    let (_, hard) = limits();
    let limit = libc::rlimit {
        rlim_cur: soft,
        rlim_max: hard,
    };
    // SAFETY: setrlimit reads one `rlimit` through a pointer to a live local value.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) }, 0);
}

/// Ten parties as threads of this process, from a soft limit of 24 open files: each transport
/// raises the limit for its own links, and the in-process count (as the benchmark asks for it)
/// covers all ten; the soft limit is never lowered, and the hard limit never changes.
#[test]
fn a_low_soft_limit_is_raised_for_the_clusters_sockets() {
    let (_, hard) = limits();
    let parties = 10;
    let needed = in_process_open_files(parties);
    assert!(
        hard >= needed,
        "this test needs a hard limit of at least {needed}"
    );
    let dir = tempfile::tempdir().unwrap();
    let base = free_loopback_base_port(parties).unwrap();
    let configs = init_cluster(dir.path(), parties, &Settings::new(512), base, "fd").unwrap();

    // One party alone raises the soft limit to what one party needs.
    set_soft(24);
    let config = ClusterConfig::load(&configs[0]).unwrap();
    let options = TlsOptions {
        connect_timeout: Duration::from_millis(200),
        ..TlsOptions::new(FrameBounds::opaque(1 << 20))
    };
    let alone = TlsTransport::connect(&config, 1, &options).unwrap();
    assert_eq!(alone.missing().len(), parties - 1);
    drop(alone);
    assert_eq!(limits(), (party_open_files(parties), hard));

    // Every party as a thread: raised once for all, before the threads start.
    set_soft(24);
    let limit = ensure_open_files(needed).unwrap();
    assert!(limit.raised());
    assert_eq!(
        (limit.soft_before, limit.soft, limit.hard),
        (24, needed, hard)
    );
    let handles: Vec<_> = configs
        .into_iter()
        .enumerate()
        .map(|(i, path)| {
            thread::spawn(move || {
                let config = ClusterConfig::load(&path).unwrap();
                let options = TlsOptions {
                    connect_timeout: Duration::from_secs(30),
                    ..TlsOptions::new(FrameBounds::opaque(1 << 20))
                };
                TlsTransport::connect(&config, i as PartyId + 1, &options).unwrap()
            })
        })
        .collect();
    let mesh: Vec<TlsTransport> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    for t in &mesh {
        assert!(
            t.missing().is_empty(),
            "party {}: {:?}",
            t.me(),
            t.missing()
        );
        assert_eq!(t.peers().len(), parties - 1);
    }
    // Each transport asked for less than was already allowed: nothing was lowered.
    assert_eq!(limits(), (needed, hard));
}
