//! Who the client is, for the login limits. Behind an ingress every peer
//! address is the ingress's, so `Forwarded` / `X-Forwarded-For` are read,
//! but only when the peer is a trusted proxy (`LIGHTBOX_TRUSTED_PROXIES`),
//! and then from the right: each trusted hop vouches for the one before it,
//! and the right-most hop that is not trusted is the client. Anything left
//! of it was written by the client itself and proves nothing.

use ipnet::IpNet;
use std::net::IpAddr;

#[derive(Debug, Clone, Default)]
pub struct TrustedProxies(Vec<IpNet>);

impl TrustedProxies {
    /// Comma-separated addresses or CIDRs; empty means none.
    pub fn parse(text: &str) -> anyhow::Result<TrustedProxies> {
        let mut nets = Vec::new();
        for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let net = match item.parse::<IpNet>() {
                Ok(net) => net,
                Err(_) => IpNet::from(
                    item.parse::<IpAddr>()
                        .map_err(|_| anyhow::anyhow!("not an address or CIDR: {item}"))?,
                ),
            };
            nets.push(net);
        }
        Ok(TrustedProxies(nets))
    }

    pub fn trusts(&self, ip: IpAddr) -> bool {
        let ip = canonical(ip);
        self.0.iter().any(|n| n.contains(&ip))
    }

    /// The client's address: `forwarded` are the `Forwarded` header values,
    /// `xff` the `X-Forwarded-For` ones, each in the order received.
    /// `Forwarded` wins when both are present (it is the standard one).
    pub fn client(&self, peer: IpAddr, forwarded: &[&str], xff: &[&str]) -> IpAddr {
        if !self.trusts(peer) {
            return canonical(peer);
        }
        let hops: Vec<&str> = if forwarded.is_empty() {
            xff.iter().flat_map(|v| v.split(',')).collect()
        } else {
            forwarded
                .iter()
                .flat_map(|v| v.split(','))
                .filter_map(forwarded_for)
                .collect()
        };
        let mut client = canonical(peer);
        for hop in hops.iter().rev() {
            // Junk from a trusted hop: the last address we could vouch for.
            let Some(ip) = parse_hop(hop) else { break };
            client = canonical(ip);
            if !self.trusts(ip) {
                break;
            }
        }
        client
    }
}

/// The `for=` value of one `Forwarded` element.
fn forwarded_for(element: &str) -> Option<&str> {
    element.split(';').find_map(|pair| {
        let (k, v) = pair.split_once('=')?;
        k.trim().eq_ignore_ascii_case("for").then_some(v.trim())
    })
}

/// `1.2.3.4`, `1.2.3.4:80`, `"[2001:db8::1]:443"`, `2001:db8::1`.
fn parse_hop(hop: &str) -> Option<IpAddr> {
    let hop = hop.trim().trim_matches('"');
    if let Ok(ip) = hop.parse() {
        return Some(ip);
    }
    if let Some(rest) = hop.strip_prefix('[') {
        return rest.split(']').next()?.parse().ok();
    }
    hop.rsplit_once(':')?.0.parse().ok()
}

fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// The throttle key of an address: IPv4 whole, IPv6 by its /64 (one
/// subscriber usually holds a whole /64, and rotates within it freely).
pub fn key(ip: IpAddr) -> String {
    match canonical(ip) {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => {
            let s = v6.segments();
            let net = std::net::Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0);
            format!("{net}/64")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn untrusted_peers_are_the_client_whatever_they_claim() {
        let none = TrustedProxies::default();
        assert_eq!(none.client(ip("9.9.9.9"), &[], &["1.1.1.1"]), ip("9.9.9.9"));
    }

    #[test]
    fn right_most_untrusted_hop_wins() {
        let t = TrustedProxies::parse("10.0.0.0/8, 127.0.0.1").unwrap();
        let peer = ip("10.1.1.1");
        // The client wrote "6.6.6.6" itself; 5.5.5.5 reached our proxy.
        assert_eq!(
            t.client(peer, &[], &["6.6.6.6, 5.5.5.5, 10.2.2.2"]),
            ip("5.5.5.5")
        );
        assert_eq!(t.client(peer, &[], &["6.6.6.6", "5.5.5.5"]), ip("5.5.5.5"));
        let fwd = ["for=6.6.6.6, for=\"[2001:db8::1]:443\";proto=https"];
        assert_eq!(t.client(peer, &fwd, &["7.7.7.7"]), ip("2001:db8::1"));
        assert_eq!(t.client(peer, &[], &[]), peer);
        assert_eq!(t.client(peer, &[], &["junk"]), peer);
        assert_eq!(t.client(peer, &[], &["10.3.3.3"]), ip("10.3.3.3"));
    }

    #[test]
    fn ipv6_is_keyed_by_its_64() {
        assert_eq!(key(ip("2001:db8:1:2:aaaa::1")), "2001:db8:1:2::/64");
        assert_eq!(key(ip("2001:db8:1:2:bbbb::9")), "2001:db8:1:2::/64");
        assert_eq!(key(ip("::ffff:1.2.3.4")), "1.2.3.4");
        assert_eq!(key(ip("1.2.3.4")), "1.2.3.4");
    }
}
