//! The service's errors: starting up (data directory, database, listening) and the typed
//! errors of the scheme crates it calls.

use std::net::SocketAddr;
use std::path::PathBuf;

/// Why the service could not start or stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file or directory of the data directory could not be read, created or written.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// Another server holds the data directory's SQLite database.
    #[error("another `hourglass serve` is using {path}")]
    DataDirBusy {
        /// The lock file.
        path: PathBuf,
    },
    /// A file of the data directory does not hold what it should.
    #[error("{path} is not a valid {what}")]
    BadFile {
        /// The file.
        path: PathBuf,
        /// What it should hold.
        what: &'static str,
    },
    /// The admin token file is empty or too short to be a secret.
    #[error("the admin token in {path} is shorter than 16 characters")]
    WeakToken {
        /// The token file.
        path: PathBuf,
    },
    /// `--database` names no database this build speaks.
    #[error("unsupported database URL '{url}'")]
    DatabaseUrl {
        /// The URL given (without its password).
        url: String,
    },
    /// The database failed.
    #[error("database: {0}")]
    Database(#[from] sqlx::Error),
    /// Applying the migrations failed.
    #[error("database migrations: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// The upload memory cannot hold one largest upload.
    #[error(
        "--upload-memory {memory} is less than one largest upload ({largest} bytes: the \
         document and bundle limits)"
    )]
    UploadMemory {
        /// The configured upload memory.
        memory: u64,
        /// The largest document plus the largest bundle.
        largest: u64,
    },
    /// The open-file limit leaves too little room for connections, or fewer than asked for.
    #[error(
        "the limit of open files ({limit}, raised to the hard limit) leaves room for {room} \
         connections beside the database's and the service's own, fewer than {wanted}: raise it \
         (`ulimit -n` in the shell that starts the server, LimitNOFILE= in a systemd unit) or \
         lower --max-connections"
    )]
    OpenFiles {
        /// The open-file limit.
        limit: u64,
        /// Connections it leaves room for.
        room: usize,
        /// Connections wanted (`--max-connections`, or the least a server starts with).
        wanted: usize,
    },
    /// The hourly upload quota cannot hold one largest upload.
    #[error(
        "--upload-quota {quota} is less than one largest upload ({largest} bytes: the \
         document and bundle limits)"
    )]
    UploadQuota {
        /// The configured quota.
        quota: u64,
        /// The largest document plus the largest bundle.
        largest: u64,
    },
    /// The listening socket could not be opened.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The database's transparency log has another key than this data directory's `log.key`.
    #[error(
        "the database's transparency log is {database}, but this data directory's log.key is \
         {ours}: every server of one database needs a copy of the first one's log.key"
    )]
    OtherLog {
        /// The log's verifier key in the database.
        database: String,
        /// This server's.
        ours: String,
    },
    /// The transparency log's configuration is refused (an origin, a witness, a quorum).
    #[error("transparency log: {0}")]
    Log(String),
    /// A set's sealed keys do not open with this data directory's vault key.
    #[error("the keys of set '{set}' do not open with this data directory's vault key")]
    Vault {
        /// The set.
        set: String,
    },
    /// The database holds something this server did not write (an unknown status, a verdict
    /// that does not parse).
    #[error("the database holds an unreadable {what}")]
    Corrupt {
        /// What could not be read.
        what: String,
    },
    /// A stored set cannot be verified against (its origin needs pins the service lacks).
    #[error("set '{set}' cannot be used to verify: {source}")]
    SetUnusable {
        /// The set.
        set: String,
        /// Why.
        #[source]
        source: hourglass_timelock::Error,
    },
    /// The HTTP server failed while running.
    #[error("the server stopped: {0}")]
    Serve(#[source] std::io::Error),
    /// An RSA operation (the receipt key) failed.
    #[error(transparent)]
    Rsa(#[from] hourglass_rsa::Error),
    /// A time-lock operation failed.
    #[error(transparent)]
    Timelock(#[from] hourglass_timelock::Error),
    /// The arithmetic core failed (entropy).
    #[error(transparent)]
    Arith(#[from] hourglass_arith::Error),
    /// Signing a receipt failed.
    #[error(transparent)]
    Receipt(#[from] hourglass_receipt::ReceiptError),
    /// The TSA's certificate or key could not be read, made or used.
    #[error("TSA certificate {path}: {source}")]
    TsaCertificate {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: hourglass_timestamp::TimestampError,
    },
    /// The TSA could not be set up or stamp (a key that is not its certificate's, a failure
    /// to sign).
    #[error("TSA: {0}")]
    Timestamp(#[from] hourglass_timestamp::TimestampError),
    /// The TSA's key could not be made or written.
    #[error("TSA key: {0}")]
    TsaKey(#[from] hourglass_timestamp::KeyError),
    /// The data directory's TSA key is not of the kind asked for.
    #[error("{path} is an {found} key, not {wanted}")]
    TsaKeyKind {
        /// The key file.
        path: PathBuf,
        /// What it holds.
        found: String,
        /// What was asked for.
        wanted: &'static str,
    },
}

impl From<hourglass_log::LogError> for Error {
    fn from(e: hourglass_log::LogError) -> Self {
        Error::Log(e.to_string())
    }
}

impl Error {
    /// Whether this is a negative verdict (exit status 1) rather than an error (2): never
    /// (the service's failures are all errors).
    pub fn is_verdict(&self) -> bool {
        false
    }

    /// What the user can do about it, where there is something.
    pub fn hint(&self) -> Option<&'static str> {
        match self {
            Error::DataDirBusy { .. } => Some(
                "SQLite serves one process; stop the other server, or run several on one PostgreSQL with --database postgres://...",
            ),
            Error::DatabaseUrl { .. } => {
                Some("use sqlite://PATH (the default is DIR/hourglass.db) or postgres://USER@HOST/DB")
            }
            Error::WeakToken { .. } => {
                Some("delete the file to have a random token made, or write a longer one")
            }
            Error::Vault { .. } => Some(
                "every server of one database needs the same vault.key, receipt.key and admin.token: copy them from the first server's data directory",
            ),
            Error::TsaCertificate { .. } => Some(
                "--tsa-cert takes a PEM file whose first certificate is the TSA's (extendedKeyUsage timeStamping, critical) and whose next ones are its CAs; delete DIR/tsa.pem and DIR/tsa-ca.pem to have new ones made",
            ),
            _ => None,
        }
    }
}

pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Error {
    let path = path.into();
    move |source| Error::Io { path, source }
}
