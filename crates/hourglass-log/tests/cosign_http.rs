//! The log's half of the witness protocol over HTTP (feature `http`), against a scripted
//! witness on loopback: a 409 is answered by asking again from the size it names (which the
//! log is told, to remember), only the pinned witness's valid cosignature line is taken, and a
//! witness that keeps answering 409 or answers without its line is refused.
#![cfg(feature = "http")]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::time::Duration;

use hourglass_arith::entropy::SeededEntropy;
use hourglass_log::checkpoint::SignedCheckpoint;
use hourglass_log::cosign::{WitnessEndpoint, MAX_CONFLICTS};
use hourglass_log::http::WitnessClient;
use hourglass_log::keys::{KeyRole, SigningKey};
use hourglass_log::tree::{append, leaf_hash, root, HashMemo};
use hourglass_log::LogError;

fn key(name: &str, role: KeyRole) -> SigningKey {
    SigningKey::generate(name, role, &mut SeededEntropy::new(name.as_bytes())).unwrap()
}

/// A witness that answers each request (one per connection) with the next of `answers`
/// (status, content type, body), and returns the request bodies it read.
fn witness(
    answers: Vec<(u16, &'static str, Vec<u8>)>,
) -> (String, std::thread::JoinHandle<Vec<String>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let handle = std::thread::spawn(move || {
        let mut bodies = Vec::new();
        for (status, media, body) in answers {
            let (stream, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut length = 0;
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                if line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap();
                }
            }
            let mut request = vec![0; length];
            reader.read_exact(&mut request).unwrap();
            bodies.push(String::from_utf8(request).unwrap());
            let mut stream = stream;
            write!(
                stream,
                "HTTP/1.1 {status} X\r\nContent-Type: {media}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            )
            .unwrap();
            stream.write_all(&body).unwrap();
        }
        bodies
    });
    (url, handle)
}

struct Log {
    key: SigningKey,
    memo: HashMemo,
    checkpoint: SignedCheckpoint,
}

fn log(size: u64) -> Log {
    let key = key("log.example/log", KeyRole::Log);
    let mut memo = HashMemo::new();
    let leaves: Vec<_> = (0..size).map(|i| leaf_hash(&i.to_be_bytes())).collect();
    append(&mut memo, 0, &leaves).unwrap();
    let checkpoint =
        SignedCheckpoint::sign(key.name(), size, root(&memo, size).unwrap(), &key).unwrap();
    Log {
        key,
        memo,
        checkpoint,
    }
}

fn cosign(l: &Log, endpoint: &WitnessEndpoint, learnt: &mut Vec<u64>) -> Result<Vec<u8>, LogError> {
    WitnessClient::new(Duration::from_secs(10)).cosign(
        endpoint,
        &l.key.verifier(),
        &l.checkpoint,
        0,
        |_| Ok::<_, LogError>(l.memo.clone()),
        |size| learnt.push(size),
    )
}

#[test]
fn a_409_is_answered_from_the_size_it_names_and_only_the_pinned_line_is_taken() {
    let l = log(5);
    let w = key("witness.example", KeyRole::Witness);
    let other = key("other.example", KeyRole::Witness);
    let mine = l.checkpoint.cosignature_line(&w, 100).unwrap();
    let mut answer = l.checkpoint.cosignature_line(&other, 100).unwrap();
    answer.extend_from_slice(&mine);
    let (url, server) = witness(vec![
        (409, "text/x.tlog.size", b"3\n".to_vec()),
        (200, "text/plain; charset=utf-8", answer),
    ]);
    let endpoint = WitnessEndpoint {
        url,
        key: w.verifier(),
    };
    let mut learnt = Vec::new();
    assert_eq!(cosign(&l, &endpoint, &mut learnt).unwrap(), mine);
    assert_eq!(learnt, [3]);
    let bodies = server.join().unwrap();
    assert!(bodies[0].starts_with("old 0\n"), "{}", bodies[0]);
    assert!(bodies[1].starts_with("old 3\n"), "{}", bodies[1]);
}

#[test]
fn a_witness_that_keeps_conflicting_or_answers_without_its_line_is_refused() {
    let l = log(5);
    let w = key("witness.example", KeyRole::Witness);
    let conflicts = (0..MAX_CONFLICTS)
        .map(|_| (409, "text/x.tlog.size", b"2\n".to_vec()))
        .collect();
    let (url, server) = witness(conflicts);
    let endpoint = WitnessEndpoint {
        url,
        key: w.verifier(),
    };
    let e = cosign(&l, &endpoint, &mut Vec::new()).unwrap_err();
    assert!(e.to_string().contains("kept answering 409"), "{e}");
    server.join().unwrap();
    // A witness ahead of the log is not asked again.
    let (url, server) = witness(vec![(409, "text/x.tlog.size", b"9\n".to_vec())]);
    let endpoint = WitnessEndpoint {
        url,
        key: w.verifier(),
    };
    let e = cosign(&l, &endpoint, &mut Vec::new()).unwrap_err();
    assert!(e.to_string().contains("larger than this log's 5"), "{e}");
    server.join().unwrap();
    // Another witness's line is no cosignature of this one.
    let stranger = key("stranger.example", KeyRole::Witness);
    let line = l.checkpoint.cosignature_line(&stranger, 100).unwrap();
    let (url, server) = witness(vec![(200, "text/plain", line)]);
    let endpoint = WitnessEndpoint {
        url,
        key: w.verifier(),
    };
    let e = cosign(&l, &endpoint, &mut Vec::new()).unwrap_err();
    assert!(matches!(e, LogError::WitnessRefused(_)), "{e}");
    server.join().unwrap();
}
