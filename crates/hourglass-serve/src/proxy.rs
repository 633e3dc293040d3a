//! Who a request comes from, behind trusted reverse proxies, for the per-client rate limit.

use std::net::IpAddr;

use axum::http::HeaderMap;
use ipnet::IpNet;

/// The client a request comes from ([`client_address`]), which the rate-limit middleware puts
/// in every request's extensions for the handlers (the upload quota).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ClientAddress(pub IpAddr);

/// The address a request comes from, for the per-client rate limit. A connection from a trusted
/// proxy (`trusted`) carries the client's address in `X-Forwarded-For`, which each proxy
/// appends to: the client is the rightmost entry that is not itself a trusted proxy, read from
/// the right, so that entries a client wrote into the header (left of what the proxies added)
/// are never believed. A connection from anywhere else is the client itself, whatever its
/// headers say. When every entry is a trusted proxy, or one does not parse, the last trusted hop
/// read stands for the client (as without the header).
pub fn client_address(peer: IpAddr, headers: &HeaderMap, trusted: &[IpNet]) -> IpAddr {
    let is_trusted = |ip: &IpAddr| trusted.iter().any(|net| net.contains(ip));
    let mut client = peer.to_canonical();
    if !is_trusted(&client) {
        return client;
    }
    let hops: Vec<&str> = headers
        .get_all("x-forwarded-for")
        .iter()
        .flat_map(|v| v.to_str().unwrap_or("").split(','))
        .collect();
    for hop in hops.iter().rev() {
        let Ok(ip) = hop.trim().parse::<IpAddr>() else {
            break;
        };
        client = ip.to_canonical();
        if !is_trusted(&client) {
            break;
        }
    }
    client
}

/// A `--trusted-proxy` value: an address range (`10.0.0.0/8`, `fd00::/8`) or one address.
pub fn parse_trusted_proxy(text: &str) -> Result<IpNet, String> {
    text.parse::<IpNet>()
        .or_else(|_| text.parse::<IpAddr>().map(IpNet::from))
        .map(|net| net.trunc())
        .map_err(|_| format!("{text:?} is neither an address nor an address/prefix range"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(values: &[&str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in values {
            h.append("x-forwarded-for", HeaderValue::from_str(v).unwrap());
        }
        h
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn only_a_trusted_proxy_is_believed_about_the_client() {
        let trusted = [
            parse_trusted_proxy("10.0.0.0/8").unwrap(),
            parse_trusted_proxy("::1").unwrap(),
        ];
        let from = |peer: &str, xff: &[&str]| client_address(ip(peer), &headers(xff), &trusted);
        // No trusted proxy: the peer, whatever the header says.
        assert_eq!(from("203.0.113.9", &["198.51.100.1"]), ip("203.0.113.9"));
        assert_eq!(
            client_address(ip("10.0.0.1"), &headers(&["198.51.100.1"]), &[]),
            ip("10.0.0.1")
        );
        // Behind the proxy: the address it appended.
        assert_eq!(from("10.0.0.1", &["198.51.100.1"]), ip("198.51.100.1"));
        assert_eq!(from("::1", &["198.51.100.1"]), ip("198.51.100.1"));
        // A client writing its own header cannot choose its bucket: the proxy's entry is last.
        assert_eq!(
            from("10.0.0.1", &["1.2.3.4, 5.6.7.8", "198.51.100.1"]),
            ip("198.51.100.1")
        );
        assert_eq!(
            from("10.0.0.1", &["1.2.3.4, 198.51.100.1"]),
            ip("198.51.100.1")
        );
        // Chains of trusted proxies are walked through.
        assert_eq!(
            from("10.0.0.1", &["198.51.100.1, 10.1.2.3, 10.9.9.9"]),
            ip("198.51.100.1")
        );
        // Junk or an all-proxy chain: the last trusted hop, never an address the client chose.
        assert_eq!(from("10.0.0.1", &["198.51.100.1, junk"]), ip("10.0.0.1"));
        assert_eq!(
            from("10.0.0.1", &["1.2.3.4, junk, 10.2.2.2"]),
            ip("10.2.2.2")
        );
        assert_eq!(from("10.0.0.1", &["10.3.3.3"]), ip("10.3.3.3"));
        assert_eq!(from("10.0.0.1", &[]), ip("10.0.0.1"));
        // IPv4 peers seen through an IPv6 socket count as IPv4.
        assert_eq!(
            from("::ffff:10.0.0.1", &["198.51.100.1"]),
            ip("198.51.100.1")
        );
    }

    #[test]
    fn trusted_proxy_values_parse_or_are_refused() {
        assert_eq!(
            parse_trusted_proxy("10.1.2.3/8").unwrap().to_string(),
            "10.0.0.0/8"
        );
        assert_eq!(parse_trusted_proxy("::1").unwrap().to_string(), "::1/128");
        assert_eq!(
            parse_trusted_proxy("192.0.2.7").unwrap().to_string(),
            "192.0.2.7/32"
        );
        for bad in ["", "10.0.0.0/33", "proxy.example", "10.0.0"] {
            assert!(parse_trusted_proxy(bad).is_err(), "{bad}");
        }
    }
}
