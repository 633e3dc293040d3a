//! The verifiers of the sets, made once and shared by the workers.

use std::collections::HashMap;

use hourglass_timelock::anyset::AnySet;
use hourglass_timelock::public::OriginPins;
use hourglass_timelock::verdict::Verifier;
use hourglass_timelock::PuzzleKey;
use zeroize::Zeroizing;

use crate::datadir::DataDir;
use crate::error::Error;
use crate::store::SetRow;

/// Each set's verifier, made once (name and digest) and shared by the workers. A private set's
/// verifier holds its parsed keys: parsing checks each key (primality tests and an inverse on
/// the secret primes, in GMP's variable-time code); done for every upload, that let anyone who
/// can upload have it repeated at will (on a shared machine, traces of the same secret
/// computation as often as wanted), and took milliseconds per key. The sets are few (made by
/// the admin); the keys stay in memory for the process's life, as the vault's key does.
#[derive(Default)]
pub(crate) struct VerifierCache(std::sync::Mutex<VerifierMap>);

/// Verifiers by set name and digest.
type VerifierMap = HashMap<(String, String), Verifier>;

impl VerifierCache {
    /// The verifier of set `name` with digest `sha256`, made by `make` on the first call.
    fn get_or_make(
        &self,
        name: &str,
        sha256: &str,
        make: impl FnOnce() -> Result<Verifier, Error>,
    ) -> Result<Verifier, Error> {
        let key = (name.to_owned(), sha256.to_owned());
        if let Some(v) = self.lock().get(&key) {
            return Ok(v.clone());
        }
        // Made outside the lock (slow); two workers may both make a new set's once.
        let verifier = make()?;
        Ok(self.lock().entry(key).or_insert(verifier).clone())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VerifierMap> {
        // A panic while holding the lock leaves the map itself consistent.
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl VerifierCache {
    /// The verifier of a stored set, made on its first use.
    pub(crate) fn of_set(&self, data: &DataDir, set: &SetRow) -> Result<Verifier, Error> {
        self.get_or_make(&set.name, &set.set_sha256, || make_verifier(data, set))
    }
}

/// The verifier of a stored set.
fn make_verifier(data: &DataDir, set: &SetRow) -> Result<Verifier, Error> {
    let unusable = |source| Error::SetUnusable {
        set: set.name.clone(),
        source,
    };
    match AnySet::from_json(&set.set_json).map_err(unusable)? {
        AnySet::Private(_) => {
            let sealed = set.sealed_keys.as_ref().ok_or_else(|| Error::Vault {
                set: set.name.clone(),
            })?;
            let keys = parse_keys(&set.name, &data.open_sealed(&set.name, sealed)?)?;
            Verifier::private(keys).map_err(unusable)
        }
        // The service makes public sets on RSA-2048 only; a set whose origin needs pins it
        // does not hold is refused, never verified as if trusted.
        AnySet::Public(public) => {
            Verifier::public(public, &OriginPins::default()).map_err(unusable)
        }
    }
}

/// The private keys of set `set_name` from the vault's opened bytes (a JSON list of key files).
fn parse_keys(set_name: &str, opened: &[u8]) -> Result<Vec<PuzzleKey>, Error> {
    let texts: Zeroizing<Vec<String>> =
        Zeroizing::new(serde_json::from_slice(opened).map_err(|_| Error::Vault {
            set: set_name.into(),
        })?);
    Ok(texts
        .iter()
        .map(|t| PuzzleKey::from_json(t))
        .collect::<Result<Vec<_>, _>>()?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hourglass_timelock::public::OriginPins;

    fn verifier() -> Verifier {
        let set = hourglass_timelock::public::PublicSet::new(
            "cache",
            hourglass_vdf::group::RsaGroup::rsa_2048().modulus().clone(),
            hourglass_timelock::public::ModulusOrigin::Rsa2048,
            vec![10],
            1.0,
            false,
            hourglass_timelock::PuzzleHash::Sha256,
            hourglass_timelock::public::ProofScheme::Wesolowski,
            "2026-11-27T00:00:00Z",
        )
        .unwrap();
        Verifier::public(set, &OriginPins::default()).unwrap()
    }

    #[test]
    fn a_set_s_verifier_is_made_once_and_a_failure_is_not_kept() {
        let cache = VerifierCache::default();
        let calls = std::cell::Cell::new(0);
        let parse = || {
            calls.set(calls.get() + 1);
            Ok(verifier())
        };
        cache.get_or_make("s", "d1", parse).unwrap();
        cache.get_or_make("s", "d1", parse).unwrap();
        assert_eq!(calls.get(), 1);
        // Another digest (or name) is another entry.
        cache.get_or_make("s", "d2", parse).unwrap();
        cache.get_or_make("t", "d1", parse).unwrap();
        assert_eq!(calls.get(), 3);
        // A set whose keys do not parse is tried again next time.
        let fail = || Err(Error::Vault { set: "u".into() });
        assert!(cache.get_or_make("u", "d", fail).is_err());
        cache.get_or_make("u", "d", parse).unwrap();
        assert_eq!(calls.get(), 4);
    }
}
