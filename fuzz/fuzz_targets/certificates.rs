//! The X.509 parsers on arbitrary bytes (PEM or DER): time-lock puzzle certificates and
//! institution CA certificates. Neither may panic; a puzzle certificate that parses names a
//! puzzle key whose fingerprint is the one in its time-lock URI.
#![no_main]

use hourglass_timelock::certificate::{CaCertificate, PuzzleCertificate};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(cert) = PuzzleCertificate::from_bytes(data) {
        let again = PuzzleCertificate::from_bytes(cert.to_der()).unwrap();
        assert_eq!(again.to_der(), cert.to_der());
    }
    if let Ok(ca) = CaCertificate::from_bytes(data) {
        let _ = ca.to_pem();
    }
});
