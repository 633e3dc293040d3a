//! Names in certificates hourglass issues.

use der::asn1::{Any, SetOfVec};
use der::oid::ObjectIdentifier;
use der::Tag;
use x509_cert::attr::AttributeTypeAndValue;
use x509_cert::name::{Name, RdnSequence, RelativeDistinguishedName};

use crate::error::{encoding, CertificateError, EncodedItem, OptionProblem, Result};
use crate::oid::AT_COMMON_NAME;

/// Longest common name (`ub-common-name` in RFC 5280).
const MAX_COMMON_NAME: usize = 64;

/// Checks a subject common name: 1 to 64 characters (`ub-common-name`), no control characters.
pub fn check_common_name(cn: &str) -> Result<()> {
    let chars = cn.chars().count();
    if chars == 0 || chars > MAX_COMMON_NAME {
        return Err(CertificateError::InvalidOptions(
            OptionProblem::CommonNameLength {
                name: cn.to_string(),
                chars,
                max: MAX_COMMON_NAME,
            },
        ));
    }
    if cn.chars().any(char::is_control) {
        return Err(CertificateError::InvalidOptions(
            OptionProblem::CommonNameControl,
        ));
    }
    Ok(())
}

/// A name of one attribute per RDN, in order.
pub fn make_name(attributes: &[(ObjectIdentifier, Tag, &str)]) -> Result<Name> {
    let mut rdns = Vec::with_capacity(attributes.len());
    for &(oid, tag, value) in attributes {
        let atv = AttributeTypeAndValue {
            oid,
            value: Any::new(tag, value.as_bytes()).map_err(encoding(EncodedItem::Name))?,
        };
        let set = SetOfVec::try_from(vec![atv]).map_err(encoding(EncodedItem::Name))?;
        rdns.push(RelativeDistinguishedName(set));
    }
    Ok(RdnSequence(rdns))
}

/// The first common name of `name`, if it is a readable string.
pub fn common_name(name: &Name) -> Option<String> {
    name.0
        .iter()
        .flat_map(|rdn| rdn.0.iter())
        .find(|atv| atv.oid == AT_COMMON_NAME)
        .and_then(|atv| {
            std::str::from_utf8(atv.value.value())
                .ok()
                .map(str::to_string)
        })
}
