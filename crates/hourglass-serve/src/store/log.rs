//! The transparency log's tables (schema 4): pending receipts, entries, stored hashes,
//! checkpoints, and the one state row whose update is the lock that orders the servers of one
//! database.

use std::collections::BTreeMap;

use hourglass_log::tree::{append, frontier, leaf_hash, Hash, HashMemo};
use sqlx::Row;

use super::Store;
use crate::error::Error;

/// Rows per multi-row `INSERT` (three or four values each: far below both databases' limits on
/// bound parameters).
pub(super) const INSERT_CHUNK: usize = 250;

/// The log's state row.
#[derive(Debug, Clone)]
pub(crate) struct LogState {
    /// Entries in the log.
    pub next_index: u64,
    /// Entries whose hashes are stored (the tree).
    pub tree_size: u64,
    /// The size of the newest published checkpoint.
    pub published_size: u64,
    /// Entries whose receipts are written.
    pub receipts_size: u64,
}

/// An entry whose receipt is to be written.
pub(crate) struct Unreceipted {
    pub index: u64,
    pub submission: String,
    pub entry: Vec<u8>,
}

fn u(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

pub(super) fn i(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn corrupt(what: impl Into<String>) -> Error {
    Error::Corrupt { what: what.into() }
}

fn hash_of(bytes: &[u8]) -> Result<Hash, Error> {
    bytes
        .try_into()
        .map(Hash)
        .map_err(|_| corrupt("log hash (not 32 bytes)"))
}

fn state_of(row: &sqlx::any::AnyRow) -> Result<LogState, Error> {
    Ok(LogState {
        next_index: u(row.try_get("next_index")?),
        tree_size: u(row.try_get("tree_size")?),
        published_size: u(row.try_get("published_size")?),
        receipts_size: u(row.try_get("receipts_size")?),
    })
}

const STATE_COLUMNS: &str = "next_index, tree_size, published_size, receipts_size";

impl Store {
    /// Makes the log's state row, or checks that the database's log is the one of `origin`
    /// with this key: a server with another log key would sign a second history.
    pub(crate) async fn open_log(&self, origin: &str, verifier_key: &str) -> Result<(), Error> {
        sqlx::query(
            "INSERT INTO log_state (id, origin, verifier_key, next_index, tree_size, published_size,
                 receipts_size)
             VALUES (1, $1, $2, 0, 0, 0, 0) ON CONFLICT (id) DO NOTHING",
        )
        .bind(origin)
        .bind(verifier_key)
        .execute(&self.pool)
        .await?;
        let row = sqlx::query("SELECT origin, verifier_key FROM log_state WHERE id = 1")
            .fetch_one(&self.pool)
            .await?;
        let (theirs, their_key): (String, String) =
            (row.try_get("origin")?, row.try_get("verifier_key")?);
        if theirs != origin || their_key != verifier_key {
            return Err(Error::OtherLog {
                database: their_key,
                ours: verifier_key.to_string(),
            });
        }
        Ok(())
    }

    /// The log's state.
    pub(crate) async fn log_state(&self) -> Result<LogState, Error> {
        let row = sqlx::query(&format!(
            "SELECT {STATE_COLUMNS} FROM log_state WHERE id = 1"
        ))
        .fetch_one(&self.pool)
        .await?;
        state_of(&row)
    }

    /// Adds up to `batch` entries to the tree in one transaction: entries sequenced earlier
    /// whose hashes are missing (after a crash between the two, or a history rewritten in the
    /// database), else the oldest pending receipts, under the next indexes. Returns how many it
    /// added (0: nothing to do).
    pub(crate) async fn sequence(&self, batch: usize) -> Result<u64, Error> {
        let mut tx = self.pool.begin().await?;
        // The lock: every sequencing of every server updates this row first.
        let row = sqlx::query(&format!(
            "UPDATE log_state SET next_index = next_index WHERE id = 1 RETURNING {STATE_COLUMNS}"
        ))
        .fetch_one(&mut *tx)
        .await?;
        let state = state_of(&row)?;
        let (mut next, tree) = (state.next_index, state.tree_size);
        let leaves: Vec<Hash> = if tree < next {
            let to = next.min(tree + batch as u64);
            let rows = sqlx::query(
                "SELECT idx, entry FROM log_entries WHERE idx >= $1 AND idx < $2 ORDER BY idx",
            )
            .bind(i(tree))
            .bind(i(to))
            .fetch_all(&mut *tx)
            .await?;
            let mut leaves = Vec::with_capacity(rows.len());
            for (k, r) in rows.iter().enumerate() {
                if u(r.try_get("idx")?) != tree + k as u64 {
                    return Err(corrupt(format!("log entry {} (missing)", tree + k as u64)));
                }
                leaves.push(leaf_hash(&r.try_get::<Vec<u8>, _>("entry")?));
            }
            if leaves.len() as u64 != to - tree {
                return Err(corrupt(format!("log entries {tree}..{to} (missing)")));
            }
            leaves
        } else {
            let rows = sqlx::query(
                "SELECT submission_id, entry FROM log_pending ORDER BY signed_ms, submission_id
                 LIMIT $1",
            )
            .bind(batch as i64)
            .fetch_all(&mut *tx)
            .await?;
            if rows.is_empty() {
                return Ok(0);
            }
            let mut pending = Vec::with_capacity(rows.len());
            for r in &rows {
                let id: String = r.try_get("submission_id")?;
                let entry: Vec<u8> = r.try_get("entry")?;
                pending.push((id, entry));
            }
            for chunk in pending.chunks(INSERT_CHUNK) {
                let values = (0..chunk.len())
                    .map(|k| format!("(${}, ${}, ${})", 3 * k + 1, 3 * k + 2, 3 * k + 3))
                    .collect::<Vec<_>>()
                    .join(", ");
                let sql =
                    format!("INSERT INTO log_entries (idx, submission_id, entry) VALUES {values}");
                let mut q = sqlx::query(&sql);
                for (id, entry) in chunk {
                    q = q.bind(i(next)).bind(id.as_str()).bind(entry.as_slice());
                    next += 1;
                }
                q.execute(&mut *tx).await?;
                let ids = (1..=chunk.len())
                    .map(|k| format!("${k}"))
                    .collect::<Vec<_>>()
                    .join(", ");
                let sql = format!("DELETE FROM log_pending WHERE submission_id IN ({ids})");
                let mut q = sqlx::query(&sql);
                for (id, _) in chunk {
                    q = q.bind(id.as_str());
                }
                q.execute(&mut *tx).await?;
            }
            pending.iter().map(|(_, e)| leaf_hash(e)).collect()
        };
        let mut memo = self.hashes_in(&mut tx, &frontier(tree)).await?;
        let new = append(&mut memo, tree, &leaves).map_err(|e| corrupt(e.to_string()))?;
        for chunk in new.chunks(INSERT_CHUNK) {
            let values = (0..chunk.len())
                .map(|k| format!("(${}, ${}, ${})", 3 * k + 1, 3 * k + 2, 3 * k + 3))
                .collect::<Vec<_>>()
                .join(", ");
            let sql = format!("INSERT INTO log_hashes (level, n, hash) VALUES {values}");
            let mut q = sqlx::query(&sql);
            for (level, n, h) in chunk {
                q = q.bind(i32::from(*level)).bind(i(*n)).bind(h.0.to_vec());
            }
            q.execute(&mut *tx).await?;
        }
        let added = leaves.len() as u64;
        sqlx::query("UPDATE log_state SET next_index = $1, tree_size = $2 WHERE id = 1")
            .bind(i(next))
            .bind(i(tree + added))
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(added)
    }

    /// The stored hashes (level, index) `needs` names, read in one range query per level.
    pub(crate) async fn hashes(&self, needs: &[(u8, u64)]) -> Result<HashMemo, Error> {
        let mut conn = self.pool.acquire().await?;
        self.hashes_in(&mut conn, needs).await
    }

    async fn hashes_in(
        &self,
        conn: &mut sqlx::AnyConnection,
        needs: &[(u8, u64)],
    ) -> Result<HashMemo, Error> {
        let mut ranges: BTreeMap<u8, (u64, u64)> = BTreeMap::new();
        for &(level, n) in needs {
            let r = ranges.entry(level).or_insert((n, n));
            r.0 = r.0.min(n);
            r.1 = r.1.max(n);
        }
        let mut memo = HashMemo::new();
        for (level, (lo, hi)) in ranges {
            let rows = sqlx::query(
                "SELECT n, hash FROM log_hashes WHERE level = $1 AND n >= $2 AND n <= $3",
            )
            .bind(i32::from(level))
            .bind(i(lo))
            .bind(i(hi))
            .fetch_all(&mut *conn)
            .await?;
            for r in rows {
                memo.insert(
                    level,
                    u(r.try_get("n")?),
                    hash_of(&r.try_get::<Vec<u8>, _>("hash")?)?,
                );
            }
        }
        Ok(memo)
    }

    /// The newest published checkpoint: its size and note.
    pub(crate) async fn latest_checkpoint(&self) -> Result<Option<(u64, String)>, Error> {
        let row = sqlx::query("SELECT size, note FROM log_checkpoints ORDER BY size DESC LIMIT 1")
            .fetch_optional(&self.pool)
            .await?;
        row.map(|r| Ok((u(r.try_get("size")?), r.try_get("note")?)))
            .transpose()
    }

    /// Publishes the checkpoint of `size` (its note with the cosignatures gathered). A server
    /// that published a larger one meanwhile wins; the same size twice keeps the first note.
    pub(crate) async fn publish_checkpoint(
        &self,
        size: u64,
        note: &str,
        now_ms: i64,
    ) -> Result<(), Error> {
        let mut tx = self.pool.begin().await?;
        sqlx::query(
            "INSERT INTO log_checkpoints (size, note, published_ms) VALUES ($1, $2, $3)
             ON CONFLICT (size) DO NOTHING",
        )
        .bind(i(size))
        .bind(note)
        .bind(now_ms)
        .execute(&mut *tx)
        .await?;
        sqlx::query(
            "UPDATE log_state SET published_size = $1 WHERE id = 1 AND published_size < $1",
        )
        .bind(i(size))
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// The size of the checkpoint each witness last cosigned, as this log knows it.
    pub(crate) async fn witness_sizes(&self) -> Result<BTreeMap<String, u64>, Error> {
        let rows = sqlx::query("SELECT name, size FROM log_witnesses")
            .fetch_all(&self.pool)
            .await?;
        rows.iter()
            .map(|r| Ok((r.try_get("name")?, u(r.try_get("size")?))))
            .collect()
    }

    /// Records that witness `name` last cosigned a checkpoint of `size`.
    pub(crate) async fn set_witness_size(&self, name: &str, size: u64) -> Result<(), Error> {
        sqlx::query(
            "INSERT INTO log_witnesses (name, size) VALUES ($1, $2)
             ON CONFLICT (name) DO UPDATE SET size = excluded.size",
        )
        .bind(name)
        .bind(i(size))
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Up to `limit` entries from `from` below `to` (the published size), in order.
    pub(crate) async fn entries_to_receipt(
        &self,
        from: u64,
        to: u64,
        limit: usize,
    ) -> Result<Vec<Unreceipted>, Error> {
        let rows = sqlx::query(
            "SELECT idx, submission_id, entry FROM log_entries WHERE idx >= $1 AND idx < $2
             ORDER BY idx LIMIT $3",
        )
        .bind(i(from))
        .bind(i(to))
        .bind(limit as i64)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|r| {
                Ok(Unreceipted {
                    index: u(r.try_get("idx")?),
                    submission: r.try_get("submission_id")?,
                    entry: r.try_get("entry")?,
                })
            })
            .collect()
    }

    /// Writes receipts (submission id, receipt file) and records that every entry below
    /// `upto` has its receipt, in one transaction. A receipt already written is kept.
    pub(crate) async fn write_receipts(
        &self,
        receipts: &[(String, String)],
        upto: u64,
    ) -> Result<(), Error> {
        let mut tx = self.pool.begin().await?;
        for (id, receipt) in receipts {
            sqlx::query("UPDATE submissions SET receipt = $1 WHERE id = $2 AND receipt IS NULL")
                .bind(receipt)
                .bind(id)
                .execute(&mut *tx)
                .await?;
        }
        sqlx::query("UPDATE log_state SET receipts_size = $1 WHERE id = 1 AND receipts_size < $1")
            .bind(i(upto))
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    /// The hashes of tree level `level` from `first`, `width` of them (`None` unless all are
    /// stored).
    pub(crate) async fn hash_run(
        &self,
        level: u8,
        first: u64,
        width: u32,
    ) -> Result<Option<Vec<u8>>, Error> {
        let rows = sqlx::query(
            "SELECT n, hash FROM log_hashes WHERE level = $1 AND n >= $2 AND n < $3 ORDER BY n",
        )
        .bind(i32::from(level))
        .bind(i(first))
        .bind(i(first + u64::from(width)))
        .fetch_all(&self.pool)
        .await?;
        if rows.len() != width as usize {
            return Ok(None);
        }
        let mut out = Vec::with_capacity(rows.len() * 32);
        for r in rows {
            out.extend_from_slice(&hash_of(&r.try_get::<Vec<u8>, _>("hash")?)?.0);
        }
        Ok(Some(out))
    }

    /// Entries `first..first + width` (`None` unless all are there).
    pub(crate) async fn entry_run(
        &self,
        first: u64,
        width: u32,
    ) -> Result<Option<Vec<Vec<u8>>>, Error> {
        let rows =
            sqlx::query("SELECT entry FROM log_entries WHERE idx >= $1 AND idx < $2 ORDER BY idx")
                .bind(i(first))
                .bind(i(first + u64::from(width)))
                .fetch_all(&self.pool)
                .await?;
        if rows.len() != width as usize {
            return Ok(None);
        }
        let entries = rows
            .iter()
            .map(|r| r.try_get::<Vec<u8>, _>("entry"))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Some(entries))
    }
}
