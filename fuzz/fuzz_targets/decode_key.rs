//! Any bytes → `decode_key`: never panics; agrees with `decode_private_key` and
//! `decode_public_key`; whatever it decodes round-trips in every format. An encrypted key is
//! also tried with a passphrase (never panics; a file that is not encrypted reads the same).
#![no_main]

use hourglass_rsa::encoding::{
    decode_key, decode_key_with_passphrase, decode_private_key, decode_public_key, is_encrypted,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let with_passphrase = decode_key_with_passphrase(data, b"fuzz");
    if !is_encrypted(data) {
        assert_eq!(with_passphrase.is_ok(), decode_key(data).is_ok());
    }
    match decode_key(data) {
        Ok(Ok(key)) => {
            let private = decode_private_key(data).expect("decode_key found a private key");
            assert!(hourglass_fuzz::same_private(&key, &private));
            assert_eq!(&decode_public_key(data).expect("public half"), key.public());
            hourglass_fuzz::check_private(&key);
        }
        Ok(Err(public)) => {
            assert!(
                decode_private_key(data).is_err(),
                "decode_key said public, decode_private_key disagrees"
            );
            assert_eq!(
                decode_public_key(data).expect("decode_key found a public key"),
                public
            );
            hourglass_fuzz::check_public(&public);
        }
        Err(e) => {
            hourglass_fuzz::touch_error(&e);
            assert!(decode_private_key(data).is_err());
            assert!(decode_public_key(data).is_err());
        }
    }
});
