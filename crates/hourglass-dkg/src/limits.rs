//! The open-file limit a cluster needs, raised at start when it is too low.
//!
//! Every link of a party is a TCP socket, and every socket is an open file: a party of a
//! `k`-party cluster holds `k - 1` TLS connections and a listener, and a benchmark that runs all
//! `k` parties as threads of one process holds about `k * (k - 1)` sockets. The soft limit of
//! open files (`RLIMIT_NOFILE`, often 1024) would stop a large cluster with "too many open
//! files" in the middle of connecting. [`ensure_open_files`] raises the soft limit to what is
//! needed, up to the hard limit, which an unprivileged process may not raise; past it, it fails
//! with [`OpenFilesError::HardLimit`], naming the count and how to raise the limit.
//! [`crate::tls::TlsTransport::connect`] calls it first thing, with [`party_open_files`].
//!
//! ```
//! use hourglass_dkg::limits::{ensure_open_files, party_open_files};
//!
//! // One party of a 100-party cluster: 99 links and the process's margin.
//! let limit = ensure_open_files(party_open_files(100)).unwrap();
//! assert!(limit.soft >= party_open_files(100));
//! ```

use std::sync::Mutex;

/// Open files a process holds beside its transports' sockets, listeners and runtimes: the three
/// standard streams; the files a party opens while its links are up (its configuration, key and
/// certificates while connecting; an entropy file or device; the share, public key and
/// transcript with their temporary files when it finishes: never more than a few at a time);
/// and connections accepted but not yet authenticated (a peer that redials while its first
/// connection is still in the handshake, a stranger). 32 is several times what these add up to.
pub const PROCESS_OPEN_FILES: u64 = 32;

/// Open files one [`crate::tls::TlsTransport`] with `peers` links holds: a socket per link,
/// the listener, and its network runtime's two (the epoll instance and its wake-up eventfd).
pub fn transport_open_files(peers: usize) -> u64 {
    (peers as u64).saturating_add(3)
}

/// Open files a process running one party of a `parties`-party cluster needs: one transport
/// with a link to every other party, and [`PROCESS_OPEN_FILES`].
pub fn party_open_files(parties: usize) -> u64 {
    transport_open_files(parties.saturating_sub(1)).saturating_add(PROCESS_OPEN_FILES)
}

/// Open files a process running every party of a `parties`-party cluster as threads needs
/// (the in-process benchmarks and tests): `parties` transports, and [`PROCESS_OPEN_FILES`].
pub fn in_process_open_files(parties: usize) -> u64 {
    (parties as u64)
        .saturating_mul(transport_open_files(parties.saturating_sub(1)))
        .saturating_add(PROCESS_OPEN_FILES)
}

/// The open-file limits of this process after [`ensure_open_files`] (`u64::MAX` is unlimited).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenFilesLimit {
    /// The soft limit before the call.
    pub soft_before: u64,
    /// The soft limit now in effect: at least what was needed.
    pub soft: u64,
    /// The hard limit (unchanged: only a privileged process may raise it).
    pub hard: u64,
}

impl OpenFilesLimit {
    /// Whether the call raised the soft limit.
    pub fn raised(&self) -> bool {
        self.soft > self.soft_before
    }
}

/// Why the open-file limit cannot be made large enough.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenFilesError {
    /// More open files are needed than the hard limit allows.
    #[error(
        "this process needs {needed} open files for this cluster's parties (their sockets or \
         pipes, and {PROCESS_OPEN_FILES} for the rest) but its hard limit of open files is \
         {hard}: raise it in the shell that starts hourglass with `ulimit -n {needed}` (above \
         the hard limit only root may: `ulimit -Hn {needed}`, LimitNOFILE= in a systemd unit, \
         or nofile in /etc/security/limits.conf)"
    )]
    HardLimit {
        /// Open files needed.
        needed: u64,
        /// The hard limit.
        hard: u64,
    },
    /// The operating system refused to report or change the limit.
    #[error("cannot {op} the limit of open files (RLIMIT_NOFILE) to allow {needed}: {source}")]
    System {
        /// "read" or "raise".
        op: &'static str,
        /// Open files needed.
        needed: u64,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
}

impl OpenFilesError {
    /// Whether this is a negative verdict (exit status 1) rather than an error (2): never: a limit
    /// of open files too low for the cluster is the machine's set-up.
    pub fn is_verdict(&self) -> bool {
        false
    }
}

/// Serialises read-then-raise, so that two threads (parties of one process) never lower a limit
/// the other has just raised.
static LIMIT: Mutex<()> = Mutex::new(());

/// Makes sure this process may hold `needed` open files: raises the soft limit of open files to
/// `needed` when it is lower (never lowers it, never touches the hard limit), and fails with
/// [`OpenFilesError::HardLimit`] when `needed` is above the hard limit.
///
/// Child processes inherit the raised limit. On platforms without `RLIMIT_NOFILE` it does
/// nothing and reports no limit.
pub fn ensure_open_files(needed: u64) -> Result<OpenFilesLimit, OpenFilesError> {
    let _guard = LIMIT
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let (soft, hard) = os::get().map_err(|source| OpenFilesError::System {
        op: "read",
        needed,
        source,
    })?;
    if soft >= needed {
        return Ok(OpenFilesLimit {
            soft_before: soft,
            soft,
            hard,
        });
    }
    if needed > hard {
        return Err(OpenFilesError::HardLimit { needed, hard });
    }
    os::set_soft(needed, hard).map_err(|source| OpenFilesError::System {
        op: "raise",
        needed,
        source,
    })?;
    Ok(OpenFilesLimit {
        soft_before: soft,
        soft: needed,
        hard,
    })
}

#[cfg(unix)]
// `rlim_t` is `u64` on Linux and macOS; the conversions are for the platforms where it is not.
#[allow(clippy::useless_conversion)]
mod os {
    /// `RLIM_INFINITY` as `u64::MAX`, anything else as it is.
    fn from_rlim(value: libc::rlim_t) -> u64 {
        if value == libc::RLIM_INFINITY {
            u64::MAX
        } else {
            u64::try_from(value).unwrap_or(u64::MAX)
        }
    }

    /// The soft and hard limits of open files.
    pub(super) fn get() -> std::io::Result<(u64, u64)> {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes one `rlimit` through the pointer, which points to a live,
        // writable, properly aligned `rlimit` on this stack frame.
        let status = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) };
        if status != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok((from_rlim(limit.rlim_cur), from_rlim(limit.rlim_max)))
    }

    /// Sets the soft limit to `soft` (at most `hard`, the hard limit, which is kept).
    pub(super) fn set_soft(soft: u64, hard: u64) -> std::io::Result<()> {
        let to_rlim = |value: u64| {
            if value == u64::MAX {
                libc::RLIM_INFINITY
            } else {
                libc::rlim_t::try_from(value).unwrap_or(libc::RLIM_INFINITY)
            }
        };
        let limit = libc::rlimit {
            rlim_cur: to_rlim(soft),
            rlim_max: to_rlim(hard),
        };
        // SAFETY: setrlimit only reads the `rlimit` the pointer points to, a live, properly
        // aligned value on this stack frame.
        let status = unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) };
        if status != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }
}

#[cfg(not(unix))]
mod os {
    pub(super) fn get() -> std::io::Result<(u64, u64)> {
        Ok((u64::MAX, u64::MAX))
    }

    pub(super) fn set_soft(_soft: u64, _hard: u64) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn needs_grow_with_the_parties() {
        assert_eq!(transport_open_files(0), 3);
        assert_eq!(party_open_files(3), 2 + 3 + PROCESS_OPEN_FILES);
        assert_eq!(party_open_files(100), 99 + 3 + PROCESS_OPEN_FILES);
        // 100 parties as threads: 100 transports of 99 links each.
        assert_eq!(in_process_open_files(100), 100 * 102 + PROCESS_OPEN_FILES);
        assert_eq!(in_process_open_files(usize::MAX), u64::MAX);
    }

    #[test]
    fn a_limit_already_large_enough_is_left_alone() {
        let (soft, hard) = os::get().unwrap();
        let limit = ensure_open_files(1).unwrap();
        assert_eq!(limit.soft, soft);
        assert_eq!(limit.hard, hard);
        assert!(!limit.raised());
        // Past the hard limit: the typed error, with the count, the limit and how to raise it.
        if hard < u64::MAX {
            let err = ensure_open_files(hard + 1).unwrap_err();
            assert!(
                matches!(err, OpenFilesError::HardLimit { needed, hard: h } if needed == hard + 1 && h == hard)
            );
            let text = err.to_string();
            assert!(text.contains(&format!("needs {}", hard + 1)), "{text}");
            assert!(
                text.contains(&format!("hard limit of open files is {hard}")),
                "{text}"
            );
            assert!(text.contains("ulimit -n"), "{text}");
        }
        assert_eq!(os::get().unwrap(), (soft, hard), "nothing changed");
    }
}
