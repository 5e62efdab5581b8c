//! Who the client is, for the login limits. Behind an ingress every peer
//! address is the ingress's, so the forwarding header is read, but only
//! when the peer is a trusted proxy (`LIGHTBOX_TRUSTED_PROXIES`), only the
//! one header that proxy writes (`LIGHTBOX_FORWARDED_HEADER`), and from the
//! right: each trusted hop vouches for the one before it, and the
//! right-most hop that is not trusted is the client. Anything left of it,
//! and any other forwarding header, was written by the client itself and
//! proves nothing: a proxy that writes `X-Forwarded-For` passes a
//! client's `Forwarded` through untouched.

use ipnet::IpNet;
use std::net::IpAddr;

/// The header a trusted proxy writes; the other one is ignored.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ForwardedHeader {
    #[default]
    XForwardedFor,
    /// RFC 7239's `Forwarded`, its `for=` parameters.
    Forwarded,
}

impl ForwardedHeader {
    /// `x-forwarded-for` or `forwarded`, in any case.
    pub fn parse(text: &str) -> anyhow::Result<ForwardedHeader> {
        match text.trim().to_ascii_lowercase().as_str() {
            "x-forwarded-for" => Ok(ForwardedHeader::XForwardedFor),
            "forwarded" => Ok(ForwardedHeader::Forwarded),
            other => anyhow::bail!("{other:?} is neither x-forwarded-for nor forwarded"),
        }
    }

    /// The header's name as HTTP spells it, lower case.
    pub fn name(self) -> &'static str {
        match self {
            ForwardedHeader::XForwardedFor => "x-forwarded-for",
            ForwardedHeader::Forwarded => "forwarded",
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct TrustedProxies {
    nets: Vec<IpNet>,
    header: ForwardedHeader,
}

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
        Ok(TrustedProxies {
            nets,
            header: ForwardedHeader::default(),
        })
    }

    /// Believes `header` (and only it) from the trusted proxies.
    pub fn reading(self, header: ForwardedHeader) -> TrustedProxies {
        TrustedProxies { header, ..self }
    }

    /// The one header `client` wants the values of.
    pub fn header(&self) -> ForwardedHeader {
        self.header
    }

    pub fn trusts(&self, ip: IpAddr) -> bool {
        let ip = canonical(ip);
        self.nets.iter().any(|n| n.contains(&ip))
    }

    /// The client's address: `values` are those of `self.header()`, in the
    /// order received.
    pub fn client(&self, peer: IpAddr, values: &[&str]) -> IpAddr {
        if !self.trusts(peer) {
            return canonical(peer);
        }
        let elements = values.iter().flat_map(|v| v.split(','));
        let hops: Vec<&str> = match self.header {
            ForwardedHeader::XForwardedFor => elements.collect(),
            ForwardedHeader::Forwarded => elements.filter_map(forwarded_for).collect(),
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
        assert_eq!(none.client(ip("9.9.9.9"), &["1.1.1.1"]), ip("9.9.9.9"));
    }

    #[test]
    fn right_most_untrusted_hop_wins() {
        let t = TrustedProxies::parse("10.0.0.0/8, 127.0.0.1").unwrap();
        let peer = ip("10.1.1.1");
        // The client wrote "6.6.6.6" itself; 5.5.5.5 reached our proxy.
        assert_eq!(
            t.client(peer, &["6.6.6.6, 5.5.5.5, 10.2.2.2"]),
            ip("5.5.5.5")
        );
        assert_eq!(t.client(peer, &["6.6.6.6", "5.5.5.5"]), ip("5.5.5.5"));
        assert_eq!(t.client(peer, &[]), peer);
        assert_eq!(t.client(peer, &["junk"]), peer);
        assert_eq!(t.client(peer, &["10.3.3.3"]), ip("10.3.3.3"));
        let fwd = t.reading(ForwardedHeader::Forwarded);
        let values = ["for=6.6.6.6, for=\"[2001:db8::1]:443\";proto=https"];
        assert_eq!(fwd.client(peer, &values), ip("2001:db8::1"));
        assert_eq!(fwd.client(peer, &["by=10.0.0.1"]), peer);
    }

    #[test]
    fn the_header_is_named_exactly() {
        let parse = |s| ForwardedHeader::parse(s).ok();
        assert_eq!(
            parse("X-Forwarded-For"),
            Some(ForwardedHeader::XForwardedFor)
        );
        assert_eq!(parse(" forwarded "), Some(ForwardedHeader::Forwarded));
        assert_eq!(parse("x-real-ip"), None);
        assert_eq!(parse(""), None);
        assert_eq!(ForwardedHeader::default().name(), "x-forwarded-for");
    }

    #[test]
    fn ipv6_is_keyed_by_its_64() {
        assert_eq!(key(ip("2001:db8:1:2:aaaa::1")), "2001:db8:1:2::/64");
        assert_eq!(key(ip("2001:db8:1:2:bbbb::9")), "2001:db8:1:2::/64");
        assert_eq!(key(ip("::ffff:1.2.3.4")), "1.2.3.4");
        assert_eq!(key(ip("1.2.3.4")), "1.2.3.4");
    }
}
