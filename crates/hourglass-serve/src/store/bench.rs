//! The database hooks of `hourglass bench log` (feature `bench`): a queue filled in large
//! transactions, and the baseline of plain inserts. A production build has none of them.

use super::log::{i, INSERT_CHUNK};
use super::Store;
use crate::error::Error;

impl Store {
    /// For `hourglass bench log`: `n` verified submissions of a set `bench`, whose signed
    /// receipt `entry` waits for the log (as a worker leaves them), written in large
    /// transactions.
    pub(crate) async fn fill_pending(&self, n: u64, entry: &[u8]) -> Result<(), Error> {
        sqlx::query(
            "INSERT INTO sets (name, kind, set_json, set_sha256, created_ms)
             VALUES ('bench', 'public', '{}', '', 0) ON CONFLICT (name) DO NOTHING",
        )
        .execute(&self.pool)
        .await?;
        let ids: Vec<String> = (0..n).map(|k| format!("{k:032x}")).collect();
        for chunk in ids.chunks(INSERT_CHUNK * 4) {
            let mut tx = self.pool.begin().await?;
            for part in chunk.chunks(INSERT_CHUNK) {
                let values = (0..part.len())
                    .map(|k| format!("(${}, 'bench', 0, '', '', '', 0, 'valid')", k + 1))
                    .collect::<Vec<_>>()
                    .join(", ");
                let sql = format!(
                    "INSERT INTO submissions (id, set_name, received_ms, bundle, bundle_sha256,
                         document_sha256, document_bytes, status) VALUES {values}"
                );
                let mut q = sqlx::query(&sql);
                for id in part {
                    q = q.bind(id.as_str());
                }
                q.execute(&mut *tx).await?;
                let values = (0..part.len())
                    .map(|k| format!("(${}, ${}, ${})", 3 * k + 1, 3 * k + 2, 3 * k + 3))
                    .collect::<Vec<_>>()
                    .join(", ");
                let sql = format!(
                    "INSERT INTO log_pending (submission_id, entry, signed_ms) VALUES {values}"
                );
                let mut q = sqlx::query(&sql);
                for (k, id) in part.iter().enumerate() {
                    q = q.bind(id.as_str()).bind(entry).bind(k as i64);
                }
                q.execute(&mut *tx).await?;
            }
            tx.commit().await?;
        }
        Ok(())
    }

    /// For `hourglass bench log`'s baseline: the same entries inserted, with their indexes, into
    /// a table of their own in one transaction per batch, and nothing else (no hashing).
    pub(crate) async fn insert_only(
        &self,
        n: u64,
        entry: &[u8],
        batch: usize,
    ) -> Result<(), Error> {
        sqlx::query("CREATE TABLE IF NOT EXISTS bench_entries (idx BIGINT PRIMARY KEY, entry BYTEA NOT NULL)")
            .execute(&self.pool)
            .await?;
        let all: Vec<u64> = (0..n).collect();
        for chunk in all.chunks(batch) {
            let mut tx = self.pool.begin().await?;
            for part in chunk.chunks(INSERT_CHUNK) {
                let values = (0..part.len())
                    .map(|k| format!("(${}, ${})", 2 * k + 1, 2 * k + 2))
                    .collect::<Vec<_>>()
                    .join(", ");
                let sql = format!("INSERT INTO bench_entries (idx, entry) VALUES {values}");
                let mut q = sqlx::query(&sql);
                for idx in part {
                    q = q.bind(i(*idx)).bind(entry);
                }
                q.execute(&mut *tx).await?;
            }
            tx.commit().await?;
        }
        sqlx::query("DROP TABLE bench_entries")
            .execute(&self.pool)
            .await?;
        Ok(())
    }
}
