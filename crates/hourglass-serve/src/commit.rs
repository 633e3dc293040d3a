//! Group commit of uploads: the submissions that arrive while one transaction commits are stored
//! together in the next, so that a rush of uploads costs one commit (and on SQLite one fsync) per
//! batch rather than one per upload, and the uploads no longer queue for SQLite's write lock.
//!
//! An upload is answered only after the transaction that holds it has committed, as before: a
//! 202 still means the submission is on disk. When a batch fails, each of its submissions is
//! tried again alone, so that one failing row never costs the others their answer.

use tokio::sync::{mpsc, oneshot};

use crate::error::Error;
use crate::store::{NewSubmission, Store};

/// The most submissions one transaction stores.
const MAX_BATCH: usize = 128;
/// Submissions waiting for the committer before senders wait too (a bound on memory: each
/// request also holds its upload budget until it is answered).
const QUEUE: usize = 1024;

/// What the committer answers: whether the submission is new (`false`: it was there).
type Reply = oneshot::Sender<Result<bool, Error>>;

/// The handle of the committer task (cheap to share: a channel sender).
pub(crate) struct Committer {
    queue: mpsc::Sender<(NewSubmission, Reply)>,
}

impl Committer {
    /// Starts the committer on the current runtime; it stops when the last handle is dropped.
    pub(crate) fn start(store: Store) -> Self {
        let (queue, rx) = mpsc::channel(QUEUE);
        tokio::spawn(run(store, rx));
        Self { queue }
    }

    /// Stores `submission` (in a transaction shared with the uploads that arrive meanwhile) and
    /// answers once it has committed: `true` if new, `false` if it was there.
    pub(crate) async fn insert(&self, submission: NewSubmission) -> Result<bool, Error> {
        let stopped = || Error::Serve(std::io::Error::other("the database committer stopped"));
        let (reply, answer) = oneshot::channel();
        self.queue
            .send((submission, reply))
            .await
            .map_err(|_| stopped())?;
        answer.await.map_err(|_| stopped())?
    }
}

/// Takes what waits (up to [`MAX_BATCH`]), stores it in one transaction, answers each sender.
async fn run(store: Store, mut rx: mpsc::Receiver<(NewSubmission, Reply)>) {
    let mut batch = Vec::with_capacity(MAX_BATCH);
    while rx.recv_many(&mut batch, MAX_BATCH).await > 0 {
        let (submissions, replies): (Vec<NewSubmission>, Vec<Reply>) = batch.drain(..).unzip();
        match store.insert_submissions(&submissions).await {
            Ok(inserted) => {
                for (reply, new) in replies.into_iter().zip(inserted) {
                    // A sender that went away (its client hung up) needs no answer: its
                    // submission is stored all the same, as it would have been without batching.
                    let _ = reply.send(Ok(new));
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, size = submissions.len(), "a batch of uploads failed; storing each alone");
                for (submission, reply) in submissions.into_iter().zip(replies) {
                    let alone = store
                        .insert_submissions(std::slice::from_ref(&submission))
                        .await
                        .map(|v| v.first().copied().unwrap_or(false));
                    let _ = reply.send(alone);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::SetRow;

    fn submission(id: &str, set: &str) -> NewSubmission {
        NewSubmission {
            id: id.into(),
            set_name: set.into(),
            received_ms: 1,
            bundle: "{}".into(),
            bundle_sha256: "00".into(),
            document_sha256: "00".into(),
            document_bytes: 3,
            document: Ok(b"doc".to_vec()),
            timestamp_token: vec![1],
        }
    }

    /// Uploads that share a batch with one whose row the database refuses (its set does not
    /// exist) are stored and answered all the same; the refused one gets its error; a second
    /// copy of a stored one is answered "was there".
    #[test]
    fn a_refused_row_costs_no_other_upload_of_its_batch_its_answer() {
        let dir = std::env::temp_dir().join(format!("hourglass-commit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let url = format!("sqlite://{}?mode=rwc", dir.join("hourglass.db").display());
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let store = Store::open(&url, 2).await.unwrap();
            let set = SetRow {
                name: "s".into(),
                kind: "private".into(),
                set_json: "{}".into(),
                set_sha256: "00".into(),
                sealed_keys: None,
                deadline_ms: None,
                created_ms: 0,
            };
            assert!(store.insert_set(&set, &[]).await.unwrap());
            let committer = Committer::start(store.clone());
            // On this one thread, all three are queued before the committer runs: one batch.
            let (good, refused, again) = tokio::join!(
                committer.insert(submission("a", "s")),
                committer.insert(submission("b", "no such set")),
                committer.insert(submission("a", "s")),
            );
            assert!(good.unwrap());
            assert!(refused.is_err());
            assert!(!again.unwrap());
            assert!(store.submission("a").await.unwrap().is_some());
            assert!(store.submission("b").await.unwrap().is_none());
        });
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
