//! The distributed key generation's share-file and transcript parsers on arbitrary bytes: never
//! panic; whatever parses serialises and parses back to the same share (cluster, session,
//! party, members, public key and exponent share) or transcript (v1, or v2 with its
//! signatures), and serialising that gives the same text; likewise a version 2 (threshold)
//! share file. Verifying a parsed transcript against
//! no pinned certificate, or against a fixed unrelated one, never panics and never succeeds.
#![no_main]

use hourglass_dkg::keyshare::KeyShare;
use hourglass_dkg::threshold::ThresholdShare;
use hourglass_dkg::transcript::{PublicTranscript, SignedTranscript};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(share) = KeyShare::from_json(&text) {
        let json = share.to_json();
        let again = match KeyShare::from_json(&json) {
            Ok(s) => s,
            Err(e) => panic!(
                "a parsed share does not parse after to_json: {e}\n{}",
                *json
            ),
        };
        assert_eq!(again.cluster, share.cluster);
        assert_eq!(again.session, share.session);
        assert_eq!(again.party, share.party);
        assert_eq!(again.members, share.members);
        assert_eq!(again.public.n(), share.public.n());
        assert_eq!(again.public.e(), share.public.e());
        assert_eq!(again.d_share(), share.d_share());
        assert_eq!(*again.to_json(), *json);
        let t = PublicTranscript::of(&share);
        assert_eq!(PublicTranscript::from_json(&t.to_json()).unwrap(), t);
    }
    if let Ok(share) = ThresholdShare::from_json(&text) {
        let json = share.to_json();
        let again = match ThresholdShare::from_json(&json) {
            Ok(s) => s,
            Err(e) => panic!("a parsed v2 share does not parse after to_json: {e}\n{}", *json),
        };
        assert_eq!(again.public, share.public);
        assert_eq!(again.party, share.party);
        assert_eq!(again.share(), share.share());
        assert_eq!(*again.to_json(), *json);
    }
    if let Ok(t) = PublicTranscript::from_json(&text) {
        assert_eq!(PublicTranscript::from_json(&t.to_json()).unwrap(), t);
    }
    if let Ok(signed) = SignedTranscript::from_json(&text) {
        let json = signed.to_json();
        let again = match SignedTranscript::from_json(&json) {
            Ok(s) => s,
            Err(e) => panic!("a parsed transcript does not parse after to_json: {e}\n{json}"),
        };
        assert_eq!(again, signed);
        assert_eq!(again.to_json(), json);
        assert_eq!(
            PublicTranscript::from_json(&text).unwrap().fingerprint_hex(),
            signed.fingerprint_hex()
        );
        // Nobody is pinned: a v2 transcript with members is never trusted.
        assert!(signed.verify(&[]).is_err());
        assert!(signed.verify(&[data.to_vec()]).is_err());
    }
});
