//! Party identities for the transcript tests: keys of every kind rustls's ring provider signs
//! with, self-signed certificates, and committees of them; and memory transports whose
//! incoming events a test delays, reorders or adds to.
// Each test file uses part of this module.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::time::Instant;

use hourglass_dkg::transcript::TranscriptSigner;
use hourglass_dkg::transport::{Event, MemoryTransport, TrafficStats, Transport};
use hourglass_dkg::PartyId;
use rustls::pki_types::PrivateKeyDer;

/// The kinds of party keys rustls's ring provider signs with.
#[derive(Debug, Clone, Copy)]
pub enum KeyKind {
    P256,
    P384,
    Ed25519,
    /// The RSA-2048 key of `tests/vectors/rsa-2048-party.key.pem` (ring cannot generate RSA).
    Rsa,
}

/// A party's key and self-signed certificate, as `init_cluster` makes them (any kind).
pub struct Identity {
    pub key: PrivateKeyDer<'static>,
    pub certificate: Vec<u8>,
    pub pem: String,
}

pub fn identity(kind: KeyKind, name: &str) -> Identity {
    let key = match kind {
        KeyKind::P256 => rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256),
        KeyKind::P384 => rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P384_SHA384),
        KeyKind::Ed25519 => rcgen::KeyPair::generate_for(&rcgen::PKCS_ED25519),
        KeyKind::Rsa => rcgen::KeyPair::from_pem_and_sign_algo(
            include_str!("../vectors/rsa-2048-party.key.pem"),
            &rcgen::PKCS_RSA_SHA256,
        ),
    }
    .unwrap();
    let params = rcgen::CertificateParams::new(vec![format!("{name}.hourglass.invalid")]).unwrap();
    let cert = params.self_signed(&key).unwrap();
    Identity {
        key: PrivateKeyDer::Pkcs8(key.serialize_der().into()),
        certificate: cert.der().to_vec(),
        pem: cert.pem(),
    }
}

/// A committee of members 1, 2, ... with keys of these kinds: each member's signer, and the
/// certificates (by member, in order).
pub struct Members {
    pub signers: Vec<TranscriptSigner>,
    pub certificates: Vec<Vec<u8>>,
    pub pems: Vec<String>,
    pub keys: Vec<PrivateKeyDer<'static>>,
}

pub fn members(kinds: &[KeyKind], tag: &str) -> Members {
    let identities: Vec<Identity> = kinds
        .iter()
        .enumerate()
        .map(|(i, &k)| identity(k, &format!("{tag}-party-{}", i + 1)))
        .collect();
    let by_id: BTreeMap<PartyId, Vec<u8>> = identities
        .iter()
        .enumerate()
        .map(|(i, id)| (i as PartyId + 1, id.certificate.clone()))
        .collect();
    let signers = identities
        .iter()
        .enumerate()
        .map(|(i, id)| TranscriptSigner::new(i as PartyId + 1, &id.key, by_id.clone()).unwrap())
        .collect();
    Members {
        signers,
        pems: identities.iter().map(|i| i.pem.clone()).collect(),
        keys: identities.iter().map(|i| i.key.clone_key()).collect(),
        certificates: identities.into_iter().map(|i| i.certificate).collect(),
    }
}

/// What a test changes in the events a party receives on a memory transport (delays,
/// reorders, additions); what the party sends is untouched.
pub trait Incoming: Send {
    /// The party's next event, read from `inner` until `deadline` as the test likes.
    fn next(&mut self, inner: &mut MemoryTransport, deadline: Instant) -> Option<Event>;
}

/// A memory transport whose incoming events pass through `filter`.
pub struct Filtered<F> {
    pub inner: MemoryTransport,
    pub filter: F,
}

impl<F: Incoming> Transport for Filtered<F> {
    fn me(&self) -> PartyId {
        self.inner.me()
    }
    fn peers(&self) -> Vec<PartyId> {
        self.inner.peers()
    }
    fn send(&self, to: PartyId, bytes: Vec<u8>) -> hourglass_dkg::Result<()> {
        self.inner.send(to, bytes)
    }
    fn recv_until(&mut self, deadline: Instant) -> Option<Event> {
        self.filter.next(&mut self.inner, deadline)
    }
    fn stats(&self) -> TrafficStats {
        self.inner.stats()
    }
}
