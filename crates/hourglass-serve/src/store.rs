//! The database: sets, submissions and the verification queue, on SQLite or PostgreSQL through
//! sqlx's Any driver with one set of migrations (`migrations/`).
//!
//! The queue is the `submissions` table. On PostgreSQL a worker claims the oldest queued row
//! with `SELECT ... FOR UPDATE SKIP LOCKED` inside a transaction that it commits together with
//! the verdict: two servers never verify one submission at the same time, and a server that
//! dies releases its claim with its connection. SQLite serves one process (the data
//! directory's lock), whose workers share an in-memory list of claimed rows.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use sqlx::any::{AnyPoolOptions, AnyRow};
use sqlx::{AnyPool, FromRow, Row};

use crate::error::Error;

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations");

/// Which database the URL named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Backend {
    /// A SQLite file (one server process).
    Sqlite,
    /// PostgreSQL (any number of servers).
    Postgres,
}

/// A stored set.
#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct SetRow {
    pub name: String,
    pub kind: String,
    pub set_json: String,
    pub set_sha256: String,
    pub sealed_keys: Option<Vec<u8>>,
    pub deadline_ms: Option<i64>,
    pub created_ms: i64,
}

/// What an upload stores.
pub(crate) struct NewSubmission {
    pub id: String,
    pub set_name: String,
    pub received_ms: i64,
    pub bundle: String,
    pub bundle_sha256: String,
    pub document_sha256: String,
    pub document_digest: String,
    pub document: Vec<u8>,
}

/// A stored submission.
#[derive(Debug, Clone, sqlx::FromRow)]
pub(crate) struct SubmissionRow {
    pub id: String,
    pub set_name: String,
    pub received_ms: i64,
    pub status: String,
    pub credited_ms: Option<i64>,
    pub links_json: Option<String>,
    pub reason: Option<String>,
    pub receipt: Option<String>,
    pub document_bytes: i64,
}

/// The verdict a worker records.
pub(crate) struct Outcome {
    pub valid: bool,
    pub credited_ms: i64,
    pub links_json: String,
    pub reason: Option<String>,
    pub receipt: String,
    pub verify_us: i64,
}

/// What a worker needs of a queued submission.
#[derive(sqlx::FromRow)]
pub(crate) struct JobRow {
    pub id: String,
    pub set_name: String,
    pub received_ms: i64,
    pub bundle: String,
    pub bundle_sha256: String,
    pub document_sha256: String,
    pub document_digest: String,
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

/// The database.
pub(crate) struct Store {
    pool: AnyPool,
    backend: Backend,
    claimed: Arc<Mutex<HashSet<String>>>,
}

const SUBMISSION_COLUMNS: &str =
    "id, set_name, received_ms, status, credited_ms, links_json, reason, receipt, document_bytes";
const SET_COLUMNS: &str = "name, kind, set_json, set_sha256, sealed_keys, deadline_ms, created_ms";
const JOB_COLUMNS: &str =
    "id, set_name, received_ms, bundle, bundle_sha256, document_sha256, document_digest";

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
        MIGRATOR.run(&pool).await?;
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

    /// Stores a submission and its document in one transaction; `false` if it was there.
    pub(crate) async fn insert_submission(&self, s: &NewSubmission) -> Result<bool, Error> {
        let mut tx = self.pool.begin().await?;
        let inserted = sqlx::query(
            "INSERT INTO submissions (id, set_name, received_ms, bundle, bundle_sha256,
                 document_sha256, document_digest, document_bytes, status)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'queued') ON CONFLICT (id) DO NOTHING",
        )
        .bind(&s.id)
        .bind(&s.set_name)
        .bind(s.received_ms)
        .bind(&s.bundle)
        .bind(&s.bundle_sha256)
        .bind(&s.document_sha256)
        .bind(&s.document_digest)
        .bind(s.document.len() as i64)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if inserted == 0 {
            return Ok(false);
        }
        sqlx::query("INSERT INTO documents (id, content) VALUES ($1, $2)")
            .bind(&s.id)
            .bind(s.document.as_slice())
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(true)
    }

    /// One submission.
    pub(crate) async fn submission(&self, id: &str) -> Result<Option<SubmissionRow>, Error> {
        let row = sqlx::query(&format!(
            "SELECT {SUBMISSION_COLUMNS} FROM submissions WHERE id = $1"
        ))
        .bind(id)
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(submission_row).transpose()
    }

    /// Stored submissions by status (`queued`, `valid`, `invalid`).
    pub(crate) async fn counts(&self) -> Result<Vec<(String, i64)>, Error> {
        let rows = sqlx::query("SELECT status, COUNT(*) AS n FROM submissions GROUP BY status")
            .fetch_all(&self.pool)
            .await?;
        rows.iter()
            .map(|r| Ok((r.try_get("status")?, r.try_get("n")?)))
            .collect()
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
        let updated = sqlx::query(
            "UPDATE submissions SET status = $2, credited_ms = $3, links_json = $4, reason = $5,
                 receipt = $6, verified_ms = $7
             WHERE id = $1 AND status = 'queued'",
        )
        .bind(&job.row.id)
        .bind(if outcome.valid { "valid" } else { "invalid" })
        .bind(outcome.credited_ms)
        .bind(&outcome.links_json)
        .bind(outcome.reason.clone())
        .bind(&outcome.receipt)
        .bind(now_ms)
        .execute(&mut *tx)
        .await?
        .rows_affected();
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

fn set_row(row: &AnyRow) -> Result<SetRow, Error> {
    Ok(SetRow::from_row(row)?)
}

fn submission_row(row: &AnyRow) -> Result<SubmissionRow, Error> {
    Ok(SubmissionRow::from_row(row)?)
}

fn job(row: &AnyRow, claim: Claim) -> Result<Job, Error> {
    Ok(Job {
        row: JobRow::from_row(row)?,
        claim,
    })
}
