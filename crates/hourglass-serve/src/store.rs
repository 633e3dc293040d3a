//! The database: sets, submissions and the verification queue, on SQLite or PostgreSQL through
//! sqlx's Any driver with one set of migrations (`migrations/`).
//!
//! The queue is the `submissions` table. On PostgreSQL a worker claims the oldest queued row
//! with `SELECT ... FOR UPDATE SKIP LOCKED` inside a transaction that it commits together with
//! the verdict: two servers never verify one submission at the same time, and a server that
//! dies releases its claim with its connection. SQLite serves one process (the data
//! directory's lock), whose workers share an in-memory list of claimed rows.

use std::borrow::Cow;
use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use hourglass_timelock::verdict::Verdict;
use sqlx::any::{AnyPoolOptions, AnyRow};
use sqlx::error::BoxDynError;
use sqlx::migrate::{Migration, MigrationSource, MigrationType, Migrator};
use sqlx::{AnyPool, Row};

use crate::error::Error;
use crate::submission::{Status, StoredSubmission, Submission};

#[cfg(feature = "bench")]
mod bench;
mod log;

/// How many times a job may fail (an internal error, a panic) before its final `error` state.
pub(crate) const MAX_TRIES: i64 = 3;

/// The schema's migrations, in the binary: what `sqlx::migrate!("./migrations")` would embed
/// (same versions, descriptions and SQL, so the same checksums), without sqlx's `macros`
/// feature, whose compile-time copies of both database drivers and of tokio were a minute of
/// the suite's build. A test checks the list against the directory.
const MIGRATIONS: [(i64, &str, &str); 7] = [
    (1, "init", include_str!("../migrations/0001_init.sql")),
    (
        2,
        "typed verdicts",
        include_str!("../migrations/0002_typed_verdicts.sql"),
    ),
    (
        3,
        "timestamps",
        include_str!("../migrations/0003_timestamps.sql"),
    ),
    (4, "log", include_str!("../migrations/0004_log.sql")),
    (
        5,
        "one state",
        include_str!("../migrations/0005_one_state.sql"),
    ),
    (6, "storage", include_str!("../migrations/0006_storage.sql")),
    (
        7,
        "queue order",
        include_str!("../migrations/0007_queue_order.sql"),
    ),
];

/// [`MIGRATIONS`] as sqlx's migrator reads them.
#[derive(Debug)]
struct Migrations;

impl MigrationSource<'static> for Migrations {
    fn resolve(
        self,
    ) -> Pin<Box<dyn Future<Output = Result<Vec<Migration>, BoxDynError>> + Send + 'static>> {
        Box::pin(async {
            Ok(MIGRATIONS
                .iter()
                .map(|&(version, description, sql)| {
                    Migration::new(
                        version,
                        Cow::Borrowed(description),
                        MigrationType::Simple,
                        Cow::Borrowed(sql),
                        false,
                    )
                })
                .collect())
        })
    }
}

/// Which database the URL named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Backend {
    /// A SQLite file (one server process).
    Sqlite,
    /// PostgreSQL (any number of servers).
    Postgres,
}

/// A stored set.
#[derive(Debug, Clone)]
pub(crate) struct SetRow {
    pub name: String,
    pub kind: String,
    pub set_json: String,
    pub set_sha256: String,
    pub sealed_keys: Option<Vec<u8>>,
    pub deadline_ms: Option<i64>,
    pub created_ms: i64,
}

impl NewSubmission {
    /// The bytes it stores: its bundle, and its document when kept.
    pub(crate) fn stored_bytes(&self) -> u64 {
        self.bundle.len() as u64 + self.document.as_ref().map_or(0, |d| d.len() as u64)
    }
}

/// What an upload stores.
pub(crate) struct NewSubmission {
    pub id: String,
    pub set_name: String,
    pub received_ms: i64,
    pub bundle: String,
    pub bundle_sha256: String,
    pub document_sha256: String,
    /// The document's size.
    pub document_bytes: u64,
    /// The document, when it is kept; else the set verifier's digest of it (hex), and nothing
    /// of its content.
    pub document: Result<Vec<u8>, String>,
    /// The TSA's token over the bundle (`received_ms` is the latest time it proves).
    pub timestamp_token: Vec<u8>,
}

/// The verdict a worker records.
pub(crate) struct Outcome {
    pub verdict: Verdict,
    pub issued: Issued,
    pub verify_us: i64,
}

/// The stored submissions as `/metrics` reports them.
pub(crate) struct Counts {
    /// How many there are of each status (a status with none is absent).
    pub by_status: Vec<(Status, i64)>,
    /// Bytes of bundles and kept documents.
    pub stored_bytes: i64,
    /// Verified submissions whose receipt waits for a published checkpoint.
    pub receipts_waiting: i64,
}

/// What a worker's verdict hands out.
pub(crate) enum Issued {
    /// A signed receipt for the transparency log (its entry): the receipt file is written once
    /// the entry is in a published checkpoint.
    ForLog(Vec<u8>),
    /// A receipt file handed out at once: a version 1 receipt of a submission stored before
    /// the service stamped submissions (schema 3), which names no log.
    Unlogged(String),
}

/// What a worker needs of a queued submission.
#[derive(Clone)]
pub(crate) struct JobRow {
    pub id: String,
    pub set_name: String,
    pub received_ms: i64,
    pub bundle: String,
    pub bundle_sha256: String,
    pub document_sha256: String,
    /// The TSA's token over the bundle; `None` for rows stored before schema 3.
    pub timestamp_token: Option<Vec<u8>>,
    /// The set verifier's digest (hex) of a document not stored because it does not match
    /// the bundle's digest; `None` when the document is stored.
    pub discarded_digest: Option<String>,
}

/// A claimed queue entry.
pub(crate) struct Job {
    pub row: JobRow,
    claim: Claim,
}

enum Claim {
    /// PostgreSQL: the row stays locked by this transaction until the verdict commits.
    Locked(sqlx::Transaction<'static, sqlx::Any>),
    /// SQLite: the id is in the process's claimed list until the verdict is written.
    Listed(Arc<Mutex<HashSet<String>>>),
}

impl Drop for Job {
    fn drop(&mut self) {
        if let Claim::Listed(list) = &self.claim {
            if let Ok(mut l) = list.lock() {
                l.remove(&self.row.id);
            }
        }
    }
}

/// The database (a handle: clones share the connection pool and the claimed list).
#[derive(Clone)]
pub(crate) struct Store {
    pool: AnyPool,
    backend: Backend,
    claimed: Arc<Mutex<HashSet<String>>>,
}

const SUBMISSION_COLUMNS: &str =
    "id, set_name, received_ms, status, credited_ms, verdict, reason, receipt, document_bytes";
const SET_COLUMNS: &str = "name, kind, set_json, set_sha256, sealed_keys, deadline_ms, created_ms";
const JOB_COLUMNS: &str =
    "id, set_name, received_ms, bundle, bundle_sha256, document_sha256, timestamp_token, \
     discarded_digest";

impl Store {
    /// Connects and applies the migrations.
    pub(crate) async fn open(url: &str, max_connections: u32) -> Result<Self, Error> {
        sqlx::any::install_default_drivers();
        let backend = if url.starts_with("sqlite:") {
            Backend::Sqlite
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Backend::Postgres
        } else {
            return Err(Error::DatabaseUrl {
                url: url.split('@').next_back().unwrap_or("").to_string(),
            });
        };
        if backend == Backend::Sqlite {
            // Made 0600 before SQLite opens it (which would make it, and its -wal and -shm
            // files, readable by every user under the usual umask).
            crate::datadir::create_sqlite_file(url)?;
        }
        let pool = AnyPoolOptions::new()
            .max_connections(max_connections)
            .after_connect(move |conn, _| {
                Box::pin(async move {
                    if backend == Backend::Sqlite {
                        // Durable at commit (the 202 promises it), and patient with the one
                        // writer instead of failing under load.
                        sqlx::query("PRAGMA synchronous = FULL")
                            .execute(&mut *conn)
                            .await?;
                        sqlx::query("PRAGMA busy_timeout = 30000")
                            .execute(&mut *conn)
                            .await?;
                        sqlx::query("PRAGMA foreign_keys = ON")
                            .execute(&mut *conn)
                            .await?;
                    }
                    Ok(())
                })
            })
            .connect(url)
            .await?;
        if backend == Backend::Sqlite {
            sqlx::query("PRAGMA journal_mode = WAL")
                .execute(&pool)
                .await?;
        }
        Migrator::new(Migrations).await?.run(&pool).await?;
        Ok(Self {
            pool,
            backend,
            claimed: Arc::default(),
        })
    }

    /// Which database this is.
    pub(crate) fn backend(&self) -> Backend {
        self.backend
    }

    /// Whether the database answers.
    pub(crate) async fn ping(&self) -> Result<(), Error> {
        sqlx::query("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }

    /// Stores a new set; `false` if one of that name exists.
    pub(crate) async fn insert_set(
        &self,
        set: &SetRow,
        fingerprints: &[String],
    ) -> Result<bool, Error> {
        let mut tx = self.pool.begin().await?;
        let inserted = sqlx::query(
            "INSERT INTO sets (name, kind, set_json, set_sha256, sealed_keys, deadline_ms, created_ms)
             VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (name) DO NOTHING",
        )
        .bind(&set.name)
        .bind(&set.kind)
        .bind(&set.set_json)
        .bind(&set.set_sha256)
        .bind(set.sealed_keys.clone())
        .bind(set.deadline_ms)
        .bind(set.created_ms)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if inserted == 0 {
            return Ok(false);
        }
        for fp in fingerprints {
            sqlx::query("INSERT INTO set_puzzles (fingerprint, set_name) VALUES ($1, $2)")
                .bind(fp)
                .bind(&set.name)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(true)
    }

    /// All sets, newest first.
    pub(crate) async fn sets(&self) -> Result<Vec<SetRow>, Error> {
        let rows = sqlx::query(&format!(
            "SELECT {SET_COLUMNS} FROM sets ORDER BY created_ms DESC, name"
        ))
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(set_row).collect()
    }

    /// One set by name.
    pub(crate) async fn set(&self, name: &str) -> Result<Option<SetRow>, Error> {
        let row = sqlx::query(&format!("SELECT {SET_COLUMNS} FROM sets WHERE name = $1"))
            .bind(name)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(set_row).transpose()
    }

    /// The set a puzzle (or public set) fingerprint belongs to.
    pub(crate) async fn set_of(&self, fingerprint: &str) -> Result<Option<SetRow>, Error> {
        let row = sqlx::query(&format!(
            "SELECT {} FROM sets s JOIN set_puzzles p ON p.set_name = s.name WHERE p.fingerprint = $1",
            SET_COLUMNS
                .split(", ")
                .map(|c| format!("s.{c}"))
                .collect::<Vec<_>>()
                .join(", ")
        ))
        .bind(fingerprint)
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(set_row).transpose()
    }

    /// Stores submissions and their documents in one transaction (one commit, and on SQLite one
    /// fsync, for all of them); for each, `false` if it was there. Nothing is stored unless the
    /// whole batch commits.
    pub(crate) async fn insert_submissions(
        &self,
        batch: &[NewSubmission],
    ) -> Result<Vec<bool>, Error> {
        let mut tx = self.pool.begin().await?;
        let mut inserted = Vec::with_capacity(batch.len());
        for s in batch {
            inserted.push(insert_submission(&mut tx, s).await?);
        }
        tx.commit().await?;
        Ok(inserted)
    }

    /// One submission.
    pub(crate) async fn submission(&self, id: &str) -> Result<Option<Submission>, Error> {
        let row = sqlx::query(&format!(
            "SELECT {SUBMISSION_COLUMNS} FROM submissions WHERE id = $1"
        ))
        .bind(id)
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(submission_row).transpose()
    }

    /// A submission's timestamp token (`None` for rows stored before schema 3).
    pub(crate) async fn timestamp_token(&self, id: &str) -> Result<Option<Vec<u8>>, Error> {
        let row = sqlx::query("SELECT timestamp_token FROM submissions WHERE id = $1")
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        Ok(match row {
            Some(r) => r.try_get("timestamp_token")?,
            None => None,
        })
    }

    /// Takes a TSA instance number for this server start: one more than the largest taken, by
    /// any server of the database (a race between two starts is retried).
    pub(crate) async fn tsa_instance(&self, server: &str, now_ms: i64) -> Result<u64, Error> {
        let mut tries = 0;
        loop {
            let row = sqlx::query("SELECT COALESCE(MAX(id), 0) AS last FROM tsa_instances")
                .fetch_one(&self.pool)
                .await?;
            let last: i64 = row.try_get("last")?;
            let id = last + 1;
            let inserted = sqlx::query(
                "INSERT INTO tsa_instances (id, server, started_ms) VALUES ($1, $2, $3)
                 ON CONFLICT (id) DO NOTHING",
            )
            .bind(id)
            .bind(server)
            .bind(now_ms)
            .execute(&self.pool)
            .await?
            .rows_affected();
            if inserted == 1 {
                return Ok(u64::try_from(id).unwrap_or(0));
            }
            tries += 1;
            if tries > 100 {
                return Err(Error::Corrupt {
                    what: "TSA instance table (no free number after 100 tries)".into(),
                });
            }
        }
    }

    /// A submission's document.
    pub(crate) async fn document(&self, id: &str) -> Result<Vec<u8>, Error> {
        let row = sqlx::query("SELECT content FROM documents WHERE id = $1")
            .bind(id)
            .fetch_one(&self.pool)
            .await?;
        Ok(row.try_get("content")?)
    }

    /// What `/metrics` reports of the stored submissions: their count by status, the bytes
    /// they hold (bundles and the documents kept) and the receipts that wait for the log.
    pub(crate) async fn counts(&self) -> Result<Counts, Error> {
        let rows = sqlx::query("SELECT status, COUNT(*) AS n FROM submissions GROUP BY status")
            .fetch_all(&self.pool)
            .await?;
        let by_status = rows
            .iter()
            .map(|r| {
                let status: String = r.try_get("status")?;
                Ok((Status::parse(&status)?, r.try_get("n")?))
            })
            .collect::<Result<_, Error>>()?;
        // PostgreSQL sums BIGINT as NUMERIC, which the Any driver does not read. Every part
        // is read from an index or a small table: /metrics may be scraped often under load.
        // A receipt waits while its entry is pending, or sequenced but not yet in a published
        // checkpoint whose receipts are written.
        let row = sqlx::query(
            "SELECT CAST(COALESCE((SELECT SUM(stored_bytes) FROM submissions), 0) AS BIGINT)
                        AS bytes,
                    CAST((SELECT COUNT(*) FROM log_pending)
                         + COALESCE((SELECT next_index - receipts_size FROM log_state), 0)
                         AS BIGINT) AS waiting",
        )
        .fetch_one(&self.pool)
        .await?;
        Ok(Counts {
            by_status,
            stored_bytes: row.try_get("bytes")?,
            receipts_waiting: row.try_get("waiting")?,
        })
    }

    /// Claims the oldest queued submission nobody else is verifying.
    pub(crate) async fn claim(&self) -> Result<Option<Job>, Error> {
        match self.backend {
            Backend::Postgres => {
                let mut tx = self.pool.begin().await?;
                let row = sqlx::query(&format!(
                    "SELECT {JOB_COLUMNS} FROM submissions WHERE status = 'queued'
                     ORDER BY received_ms, id LIMIT 1 FOR UPDATE SKIP LOCKED"
                ))
                .fetch_optional(&mut *tx)
                .await?;
                match row {
                    Some(row) => Ok(Some(job(&row, Claim::Locked(tx))?)),
                    None => Ok(None),
                }
            }
            Backend::Sqlite => {
                let claimed: Vec<String> = self
                    .claimed
                    .lock()
                    .map(|l| l.iter().cloned().collect())
                    .unwrap_or_default();
                // The claimed list is at most the number of workers long.
                let rows = sqlx::query(&format!(
                    "SELECT {JOB_COLUMNS} FROM submissions WHERE status = 'queued'
                     ORDER BY received_ms, id LIMIT $1"
                ))
                .bind(claimed.len() as i64 + 1)
                .fetch_all(&self.pool)
                .await?;
                let Ok(mut list) = self.claimed.lock() else {
                    return Ok(None);
                };
                for row in &rows {
                    let id: String = row.try_get("id")?;
                    if list.insert(id) {
                        drop(list);
                        return Ok(Some(job(row, Claim::Listed(self.claimed.clone()))?));
                    }
                }
                Ok(None)
            }
        }
    }

    /// Records a claimed submission's verdict, and which server reached it.
    pub(crate) async fn finish(
        &self,
        job: Job,
        outcome: &Outcome,
        server: &str,
        now_ms: i64,
    ) -> Result<(), Error> {
        let mut job = job;
        let claim = std::mem::replace(&mut job.claim, Claim::Listed(self.claimed.clone()));
        let mut tx = match claim {
            Claim::Locked(tx) => tx,
            Claim::Listed(_) => self.pool.begin().await?,
        };
        let status = Status::of(&outcome.verdict);
        let receipt = match &outcome.issued {
            Issued::Unlogged(r) => Some(r.as_str()),
            Issued::ForLog(_) => None,
        };
        let updated = sqlx::query(
            "UPDATE submissions SET status = $2, verdict = $3, receipt = $4, verified_ms = $5
             WHERE id = $1 AND status = 'queued'",
        )
        .bind(&job.row.id)
        .bind(status.as_str())
        .bind(
            serde_json::to_string(&outcome.verdict).map_err(|e| Error::Corrupt {
                what: format!("verdict: {e}"),
            })?,
        )
        .bind(receipt)
        .bind(now_ms)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        // The signed receipt waits for the log in the same transaction as its verdict: a verdict
        // is never recorded without its receipt on its way into the log.
        if let (1, Issued::ForLog(entry)) = (updated, &outcome.issued) {
            sqlx::query(
                "INSERT INTO log_pending (submission_id, entry, signed_ms) VALUES ($1, $2, $3)
                 ON CONFLICT (submission_id) DO NOTHING",
            )
            .bind(&job.row.id)
            .bind(entry.as_slice())
            .bind(now_ms)
            .execute(&mut *tx)
            .await?;
        }
        // Every verification that reaches this point is recorded, even one that found the
        // verdict already written: a submission verified twice would show as two rows.
        sqlx::query(
            "INSERT INTO verifications (submission_id, server, at_ms, verify_us) VALUES ($1, $2, $3, $4)",
        )
        .bind(&job.row.id)
        .bind(server)
        .bind(now_ms)
        .bind(outcome.verify_us)
        .execute(&mut *tx)
        .await?;
        if updated != 1 {
            tracing::warn!(submission = %job.row.id, "verified again after its verdict was recorded");
        }
        tx.commit().await?;
        Ok(())
    }
}

impl Store {
    /// Records that a claimed job failed (`reason`): queued again for another try, or, after
    /// [`MAX_TRIES`], in its final `error` state with the reason. Returns whether it is final.
    pub(crate) async fn fail(&self, job: Job, reason: &str, now_ms: i64) -> Result<bool, Error> {
        let mut job = job;
        let claim = std::mem::replace(&mut job.claim, Claim::Listed(self.claimed.clone()));
        let mut tx = match claim {
            Claim::Locked(tx) => tx,
            Claim::Listed(_) => self.pool.begin().await?,
        };
        let row = sqlx::query(
            "UPDATE submissions SET tries = tries + 1 WHERE id = $1 AND status = 'queued'
             RETURNING tries",
        )
        .bind(&job.row.id)
        .fetch_optional(&mut *tx)
        .await?;
        let tries: i64 = match row {
            Some(r) => r.try_get("tries")?,
            None => return Ok(true),
        };
        let last = tries >= MAX_TRIES;
        if last {
            sqlx::query(
                "UPDATE submissions SET status = $2, reason = $3, verified_ms = $4 WHERE id = $1",
            )
            .bind(&job.row.id)
            .bind(Status::Error.as_str())
            .bind(format!(
                "the submission could not be verified ({tries} tries): {reason}"
            ))
            .bind(now_ms)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(last)
    }
}

fn set_row(row: &AnyRow) -> Result<SetRow, Error> {
    Ok(SetRow {
        name: row.try_get("name")?,
        kind: row.try_get("kind")?,
        set_json: row.try_get("set_json")?,
        set_sha256: row.try_get("set_sha256")?,
        sealed_keys: row.try_get("sealed_keys")?,
        deadline_ms: row.try_get("deadline_ms")?,
        created_ms: row.try_get("created_ms")?,
    })
}

fn submission_row(row: &AnyRow) -> Result<Submission, Error> {
    Submission::from_stored(StoredSubmission {
        id: row.try_get("id")?,
        set_name: row.try_get("set_name")?,
        received_ms: row.try_get("received_ms")?,
        document_bytes: row.try_get("document_bytes")?,
        status: row.try_get("status")?,
        verdict: row.try_get("verdict")?,
        credited_ms: row.try_get("credited_ms")?,
        reason: row.try_get("reason")?,
        receipt: row.try_get("receipt")?,
    })
}

fn job(row: &AnyRow, claim: Claim) -> Result<Job, Error> {
    Ok(Job {
        row: JobRow {
            id: row.try_get("id")?,
            set_name: row.try_get("set_name")?,
            received_ms: row.try_get("received_ms")?,
            bundle: row.try_get("bundle")?,
            bundle_sha256: row.try_get("bundle_sha256")?,
            document_sha256: row.try_get("document_sha256")?,
            timestamp_token: row.try_get("timestamp_token")?,
            discarded_digest: row.try_get("discarded_digest")?,
        },
        claim,
    })
}

/// Stores one submission and its document in the transaction `tx`; `false` if it was there.
async fn insert_submission(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    s: &NewSubmission,
) -> Result<bool, Error> {
    let inserted = sqlx::query(
        "INSERT INTO submissions (id, set_name, received_ms, bundle, bundle_sha256,
             document_sha256, document_bytes, status, timestamp_token, discarded_digest,
             stored_bytes)
         VALUES ($1, $2, $3, $4, $5, $6, $7, 'queued', $8, $9, $10)
         ON CONFLICT (id) DO NOTHING",
    )
    .bind(&s.id)
    .bind(&s.set_name)
    .bind(s.received_ms)
    .bind(&s.bundle)
    .bind(&s.bundle_sha256)
    .bind(&s.document_sha256)
    .bind(i64::try_from(s.document_bytes).unwrap_or(i64::MAX))
    .bind(s.timestamp_token.as_slice())
    .bind(s.document.as_ref().err())
    .bind(i64::try_from(s.stored_bytes()).unwrap_or(i64::MAX))
    .execute(&mut **tx)
    .await?
    .rows_affected();
    if inserted == 0 {
        return Ok(false);
    }
    if let Ok(document) = &s.document {
        sqlx::query("INSERT INTO documents (id, content) VALUES ($1, $2)")
            .bind(&s.id)
            .bind(document.as_slice())
            .execute(&mut **tx)
            .await?;
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::submission::State;

    /// The embedded migrations are the directory's, named as `sqlx::migrate!` names them
    /// (`<version>_<description>.sql`, underscores read as spaces): a file added to
    /// `migrations/` and not to [`MIGRATIONS`] fails here, and so would a changed description.
    #[test]
    fn the_embedded_migrations_are_the_directory() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/migrations");
        let mut files: Vec<(i64, String, String)> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| {
                let path = e.unwrap().path();
                let name = path.file_name().unwrap().to_str().unwrap().to_owned();
                let stem = name.strip_suffix(".sql").expect("a .sql file");
                let (version, description) = stem.split_once('_').unwrap();
                (
                    version.parse().unwrap(),
                    description.replace('_', " "),
                    std::fs::read_to_string(&path).unwrap(),
                )
            })
            .collect();
        files.sort();
        let embedded: Vec<(i64, String, String)> = MIGRATIONS
            .iter()
            .map(|&(v, d, sql)| (v, d.to_owned(), sql.to_owned()))
            .collect();
        assert_eq!(embedded, files);
    }

    /// A copy of the database the schema-1 service wrote (`tests/fixtures/schema1`, made by its
    /// `make.py`), opened, so upgraded, by this one.
    #[test]
    fn a_schema_1_database_is_upgraded_and_its_rows_read() {
        let dir = std::env::temp_dir().join(format!("hourglass-schema1-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let db = dir.join("hourglass.db");
        let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/schema1");
        std::fs::copy(format!("{fixture}/hourglass.db"), &db).unwrap();
        let ids: std::collections::BTreeMap<String, String> =
            serde_json::from_slice(&std::fs::read(format!("{fixture}/ids.json")).unwrap()).unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let url = format!("sqlite://{}?mode=rwc", db.display());
            let store = Store::open(&url, 2).await.unwrap();
            // The dead schema-1 columns are gone.
            for column in ["links_json", "document_digest"] {
                let read = sqlx::query(&format!("SELECT {column} FROM submissions"))
                    .fetch_all(&store.pool)
                    .await;
                assert!(read.is_err(), "{column} is still there");
            }
            // Verified then: the facts schema 1 kept, read as the state they make.
            let a = store.submission(&ids["a"]).await.unwrap().unwrap();
            assert_eq!(a.status(), Status::Valid);
            assert!(a.verdict().is_none() && a.reason().is_none());
            assert!(a.dating(None).unwrap().credited_ms >= 1000);
            let stored = std::fs::read_to_string(format!("{fixture}/a.receipt")).unwrap();
            assert_eq!(a.receipt(), Some(stored.as_str()));
            let b = store.submission(&ids["b"]).await.unwrap().unwrap();
            assert_eq!(b.status(), Status::Invalid);
            assert!(b.reason().unwrap().contains("document"));
            assert_eq!(b.dating(None).unwrap().credited_ms, 0);
            assert!(matches!(b.state, State::Receipted { .. }));
            // Queued then: a job without a timestamp token (the path of rows before schema 3).
            let c = store.submission(&ids["c"]).await.unwrap().unwrap();
            assert!(matches!(c.state, State::Queued));
            let job = store.claim().await.unwrap().unwrap();
            assert_eq!(job.row.id, ids["c"]);
            assert!(job.row.timestamp_token.is_none());
            store.pool.close().await;
        });
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
