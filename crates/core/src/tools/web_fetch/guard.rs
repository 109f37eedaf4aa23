//! Address policy: which URLs web_fetch may reach, decided before any connection is made.
//!
//! A model that can fetch URLs could otherwise read the user's local services, the LAN or a
//! cloud metadata endpoint (credentials). The check is done on addresses, not on host names: the
//! host is resolved here, EVERY resolved address is checked, and the caller pins the connection
//! to exactly those addresses, so a DNS answer that changes between check and connect (DNS
//! rebinding) cannot slip a refused address in. The same [`AddressPolicy::vet`] runs for the
//! first URL and for every redirect hop.
//!
//! The policy is a value (not a global) so tests can build one that trusts a single test server
//! address while still refusing everything else local.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use reqwest::Url;

/// Host names of cloud metadata services, refused by name even before resolving them.
const METADATA_HOSTS: &[&str] = &[
    "metadata.google.internal",
    "metadata.goog",
    "metadata",
    "instance-data",
    "instance-data.ec2.internal",
];

/// One row of the address table: a block and what it is.
struct Block {
    /// The block's first address.
    net: IpAddr,
    /// Its prefix length.
    len: u8,
    /// What an address in it is.
    kind: Blocked,
}

const fn v4(a: u8, b: u8, c: u8, d: u8, len: u8, kind: Blocked) -> Block {
    Block {
        net: IpAddr::V4(Ipv4Addr::new(a, b, c, d)),
        len,
        kind,
    }
}

#[allow(clippy::too_many_arguments)]
const fn v6(s: [u16; 8], len: u8, kind: Blocked) -> Block {
    Block {
        net: IpAddr::V6(Ipv6Addr::new(
            s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7],
        )),
        len,
        kind,
    }
}

const fn special(name: &'static str, block: &'static str) -> Blocked {
    Blocked::Special { name, block }
}

/// Every address web_fetch refuses, in one place: IANA's IPv4 and IPv6 Special-Purpose Address
/// Registries (all entries, globally reachable or not: none is a web page a model needs), the
/// multicast and reserved space, and the cloud metadata addresses. The most specific block
/// wins (metadata before link-local and private). IPv4-mapped and NAT64 addresses are judged
/// by the IPv4 address they carry (see [`embedded_v4`]).
const BLOCKS: &[Block] = &[
    // Cloud metadata: AWS/GCP/Azure/OpenStack, AWS over IPv6, Oracle, Alibaba.
    v4(169, 254, 169, 254, 32, Blocked::Metadata),
    v6(
        [0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254],
        128,
        Blocked::Metadata,
    ),
    v4(192, 0, 0, 192, 32, Blocked::Metadata),
    v4(100, 100, 100, 200, 32, Blocked::Metadata),
    // IPv4 Special-Purpose Address Registry.
    v4(0, 0, 0, 0, 8, Blocked::Unspecified),
    v4(10, 0, 0, 0, 8, Blocked::Private),
    v4(100, 64, 0, 0, 10, Blocked::SharedNat),
    v4(127, 0, 0, 0, 8, Blocked::Loopback),
    v4(169, 254, 0, 0, 16, Blocked::LinkLocal),
    v4(172, 16, 0, 0, 12, Blocked::Private),
    v4(
        192,
        0,
        0,
        0,
        24,
        special("IETF Protocol Assignments", "192.0.0.0/24"),
    ),
    v4(
        192,
        0,
        2,
        0,
        24,
        special("Documentation (TEST-NET-1)", "192.0.2.0/24"),
    ),
    v4(192, 31, 196, 0, 24, special("AS112-v4", "192.31.196.0/24")),
    v4(192, 52, 193, 0, 24, special("AMT", "192.52.193.0/24")),
    v4(
        192,
        88,
        99,
        0,
        24,
        special("Deprecated 6to4 Relay Anycast", "192.88.99.0/24"),
    ),
    v4(192, 168, 0, 0, 16, Blocked::Private),
    v4(
        192,
        175,
        48,
        0,
        24,
        special("Direct Delegation AS112 Service", "192.175.48.0/24"),
    ),
    v4(198, 18, 0, 0, 15, special("Benchmarking", "198.18.0.0/15")),
    v4(
        198,
        51,
        100,
        0,
        24,
        special("Documentation (TEST-NET-2)", "198.51.100.0/24"),
    ),
    v4(
        203,
        0,
        113,
        0,
        24,
        special("Documentation (TEST-NET-3)", "203.0.113.0/24"),
    ),
    v4(224, 0, 0, 0, 4, Blocked::Multicast),
    v4(255, 255, 255, 255, 32, Blocked::Broadcast),
    v4(240, 0, 0, 0, 4, Blocked::Reserved),
    // IPv6 Special-Purpose Address Registry (::ffff:0:0/96 and 64:ff9b::/96 carry IPv4).
    v6([0; 8], 128, Blocked::Unspecified),
    v6([0, 0, 0, 0, 0, 0, 0, 1], 128, Blocked::Loopback),
    v6(
        [0x64, 0xff9b, 1, 0, 0, 0, 0, 0],
        48,
        special("Local-Use IPv4/IPv6 Translation", "64:ff9b:1::/48"),
    ),
    v6(
        [0x100, 0, 0, 0, 0, 0, 0, 0],
        64,
        special("Discard-Only Address Block", "100::/64"),
    ),
    v6(
        [0x100, 0, 0, 1, 0, 0, 0, 0],
        64,
        special("Dummy IPv6 Prefix", "100:0:0:1::/64"),
    ),
    v6(
        [0x2001, 0xdb8, 0, 0, 0, 0, 0, 0],
        32,
        special("Documentation", "2001:db8::/32"),
    ),
    v6(
        [0x2001, 0, 0, 0, 0, 0, 0, 0],
        23,
        special(
            "IETF Protocol Assignments (Teredo, benchmarking, ORCHID, ...)",
            "2001::/23",
        ),
    ),
    v6(
        [0x2002, 0, 0, 0, 0, 0, 0, 0],
        16,
        special("6to4", "2002::/16"),
    ),
    v6(
        [0x2620, 0x4f, 0x8000, 0, 0, 0, 0, 0],
        48,
        special("Direct Delegation AS112 Service", "2620:4f:8000::/48"),
    ),
    v6(
        [0x3fff, 0, 0, 0, 0, 0, 0, 0],
        20,
        special("Documentation", "3fff::/20"),
    ),
    v6(
        [0x5f00, 0, 0, 0, 0, 0, 0, 0],
        16,
        special("Segment Routing (SRv6) SIDs", "5f00::/16"),
    ),
    v6([0xfc00, 0, 0, 0, 0, 0, 0, 0], 7, Blocked::Private),
    v6([0xfe80, 0, 0, 0, 0, 0, 0, 0], 10, Blocked::LinkLocal),
    v6([0xfec0, 0, 0, 0, 0, 0, 0, 0], 10, Blocked::Private),
    v6([0xff00, 0, 0, 0, 0, 0, 0, 0], 8, Blocked::Multicast),
    // Deprecated IPv4-compatible addresses (::a.b.c.d) are judged by their IPv4 part below.
];

fn contains(block: &Block, ip: IpAddr) -> bool {
    match (block.net, ip) {
        (IpAddr::V4(net), IpAddr::V4(ip)) => {
            let mask = u32::MAX.checked_shl(32 - u32::from(block.len)).unwrap_or(0);
            u32::from(net) & mask == u32::from(ip) & mask
        }
        (IpAddr::V6(net), IpAddr::V6(ip)) => {
            let mask = u128::MAX
                .checked_shl(128 - u32::from(block.len))
                .unwrap_or(0);
            u128::from(net) & mask == u128::from(ip) & mask
        }
        _ => false,
    }
}

/// How web_fetch decides whether an address may be contacted.
#[derive(Debug, Clone)]
pub(crate) struct AddressPolicy {
    /// The recipe or config allowed local fetch: nothing is refused.
    allow_local: bool,
    /// Addresses trusted despite being local (tests only: the test server).
    #[cfg(test)]
    exempt: Vec<IpAddr>,
}

/// What kind of address was refused, worded for the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Blocked {
    /// 127.0.0.0/8, ::1.
    Loopback,
    /// 10/8, 172.16/12, 192.168/16, fc00::/7, fec0::/10.
    Private,
    /// 169.254/16, fe80::/10.
    LinkLocal,
    /// 169.254.169.254 or a metadata host name.
    Metadata,
    /// 0.0.0.0/8, ::.
    Unspecified,
    /// 100.64/10 (carrier-grade NAT).
    SharedNat,
    /// 224/4, ff00::/8.
    Multicast,
    /// 255.255.255.255.
    Broadcast,
    /// 240/4 (reserved for future use).
    Reserved,
    /// Another block of IANA's special-purpose registries (benchmarking, documentation,
    /// protocol assignments, 6to4, Teredo, ...): never a web server a model should reach.
    Special {
        /// The registry's name for the block.
        name: &'static str,
        /// The block, as written in the registry.
        block: &'static str,
    },
}

impl fmt::Display for Blocked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Blocked::Loopback => "a loopback address",
            Blocked::Private => "a private network address",
            Blocked::LinkLocal => "a link-local address",
            Blocked::Metadata => "a cloud metadata service address",
            Blocked::Unspecified => "an unspecified address",
            Blocked::SharedNat => "a carrier-grade NAT (shared) address",
            Blocked::Multicast => "a multicast address",
            Blocked::Broadcast => "the broadcast address",
            Blocked::Reserved => "a reserved address",
            Blocked::Special { name, block } => {
                return write!(f, "a special-purpose address ({name}, {block})");
            }
        })
    }
}

impl Blocked {
    /// What `allow_local_fetch` opens: the user's own machine and networks. Link-local,
    /// metadata and every other special block stay refused even then.
    fn is_local(self) -> bool {
        matches!(self, Blocked::Loopback | Blocked::Private)
    }
}

/// Why a URL was not fetched. The display text is what the model reads.
#[derive(Debug, thiserror::Error)]
pub(crate) enum GuardError {
    /// Not http or https.
    #[error("web_fetch only fetches http:// and https:// URLs, not `{scheme}:` ({url}); {hint}")]
    Scheme {
        /// The refused scheme.
        scheme: String,
        /// The URL as given.
        url: String,
        /// What to do instead.
        hint: &'static str,
    },
    /// The URL has no host to connect to.
    #[error("{url} has no host name; give an absolute URL such as https://example.com/page")]
    NoHost {
        /// The URL as given.
        url: String,
    },
    /// A host name or address the policy refuses.
    #[error(
        "refused to fetch {url}: {subject} {kind}. web_fetch reaches loopback and private \
         addresses only when local fetch is allowed in the recipe or config \
         (`allow_local_fetch`), and link-local, metadata and other special-purpose addresses \
         never; fetch a public URL instead"
    )]
    Refused {
        /// The URL being fetched.
        url: String,
        /// "127.0.0.1 is" or "localhost resolves to ::1, which is".
        subject: String,
        /// The kind of address.
        kind: Blocked,
    },
    /// The host name did not resolve.
    #[error(
        "could not resolve the host `{host}` of {url}: {reason}; check the spelling of the URL"
    )]
    Resolve {
        /// The host name.
        host: String,
        /// The URL being fetched.
        url: String,
        /// The resolver's answer.
        reason: String,
    },
    /// A redirect's Location header could not be used.
    #[error(
        "{url} redirected to `{location}`, which is not a valid URL ({reason}); the redirect \
         cannot be followed, try another URL"
    )]
    BadLocation {
        /// The URL that answered with the redirect.
        url: String,
        /// The Location header value.
        location: String,
        /// Why it is invalid.
        reason: String,
    },
}

/// Where a vetted URL may connect: the checked addresses, to pin the connection to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Target {
    /// The host name to pin (`None` for an IP literal, which needs no resolution).
    pub(crate) domain: Option<String>,
    /// Every address the host resolved to, all of them allowed by the policy.
    pub(crate) addrs: Vec<SocketAddr>,
}

impl AddressPolicy {
    /// The policy for a run: refuse local addresses unless `allow_local`.
    pub(crate) fn new(allow_local: bool) -> Self {
        Self {
            allow_local,
            #[cfg(test)]
            exempt: Vec::new(),
        }
    }

    /// A strict policy that still trusts one address (the test server).
    #[cfg(test)]
    pub(crate) fn strict_except(ip: IpAddr) -> Self {
        Self {
            allow_local: false,
            exempt: vec![ip],
        }
    }

    fn exempted(&self, _ip: IpAddr) -> bool {
        #[cfg(test)]
        {
            self.exempt.contains(&_ip)
        }
        #[cfg(not(test))]
        {
            false
        }
    }

    /// The reason `ip` may not be contacted, or `None` when it may. `allow_local` opens
    /// loopback and private networks only ([`Blocked::is_local`]).
    pub(crate) fn check_ip(&self, ip: IpAddr) -> Option<Blocked> {
        if self.exempted(ip) {
            return None;
        }
        let kind = classify(ip)?;
        if self.allow_local && kind.is_local() {
            return None;
        }
        Some(kind)
    }

    /// Checks the scheme, the host name and every address the host resolves to. Returns the
    /// addresses the connection must be pinned to.
    pub(crate) async fn vet(&self, url: &Url) -> Result<Target, GuardError> {
        check_scheme(url)?;
        let port = url.port_or_known_default().unwrap_or(80);
        let refuse = |subject: String, kind: Blocked| GuardError::Refused {
            url: url.to_string(),
            subject,
            kind,
        };
        let Some(host) = url.host_str().filter(|h| !h.is_empty()) else {
            return Err(GuardError::NoHost {
                url: url.to_string(),
            });
        };
        // The URL parser has already normalised IP literals (IPv6 keeps its brackets).
        let literal = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host)
            .parse::<IpAddr>();
        if let Ok(ip) = literal {
            return match self.check_ip(ip) {
                Some(kind) => Err(refuse(format!("{ip} is"), kind)),
                None => Ok(Target {
                    domain: None,
                    addrs: vec![SocketAddr::new(ip, port)],
                }),
            };
        }
        let normalized = host.trim_end_matches('.').to_ascii_lowercase();
        if METADATA_HOSTS.contains(&normalized.as_str()) {
            return Err(refuse(format!("the host `{host}` is"), Blocked::Metadata));
        }
        let addrs = resolve(host, port, url).await?;
        for addr in &addrs {
            if let Some(kind) = self.check_ip(addr.ip()) {
                return Err(refuse(
                    format!("the host `{host}` resolves to {}, which is", addr.ip()),
                    kind,
                ));
            }
        }
        Ok(Target {
            domain: Some(host.to_string()),
            addrs,
        })
    }
}

async fn resolve(name: &str, port: u16, url: &Url) -> Result<Vec<SocketAddr>, GuardError> {
    let error = |reason: String| GuardError::Resolve {
        host: name.to_string(),
        url: url.to_string(),
        reason,
    };
    let mut addrs: Vec<SocketAddr> = tokio::net::lookup_host((name, port))
        .await
        .map_err(|e| error(e.to_string()))?
        .collect();
    addrs.dedup();
    if addrs.is_empty() {
        return Err(error("the name has no addresses".to_string()));
    }
    Ok(addrs)
}

/// Refuses every scheme but http and https, with a hint for the common mistakes.
pub(crate) fn check_scheme(url: &Url) -> Result<(), GuardError> {
    match url.scheme() {
        "http" | "https" => Ok(()),
        other => Err(GuardError::Scheme {
            scheme: other.to_string(),
            url: url.to_string(),
            hint: match other {
                "file" => "to read a project file use read_file",
                "ftp" | "ftps" | "sftp" => "look for an https:// mirror of the file",
                _ => "give an http:// or https:// URL",
            },
        }),
    }
}

/// The URL a redirect points to: `location` resolved against the URL that answered, with its
/// scheme checked. The address check happens when the hop is fetched ([`AddressPolicy::vet`]).
pub(crate) fn next_hop(current: &Url, location: &str) -> Result<Url, GuardError> {
    let next = current
        .join(location.trim())
        .map_err(|e| GuardError::BadLocation {
            url: current.to_string(),
            location: location.to_string(),
            reason: e.to_string(),
        })?;
    check_scheme(&next)?;
    Ok(next)
}

/// The kind of a local or special address, `None` for an ordinary public address.
pub(crate) fn classify(ip: IpAddr) -> Option<Blocked> {
    if let IpAddr::V6(v6) = ip
        && let Some(v4) = embedded_v4(v6)
    {
        // ::, ::1 look IPv4-compatible but are their own entries.
        if !(v6.is_unspecified() || v6.is_loopback()) {
            return classify(IpAddr::V4(v4));
        }
    }
    BLOCKS
        .iter()
        .filter(|block| contains(block, ip))
        .max_by_key(|block| block.len)
        .map(|block| block.kind)
}

/// The IPv4 address carried inside an IPv6 one that reaches it: IPv4-mapped (::ffff:a.b.c.d),
/// IPv4-compatible (::a.b.c.d) and the NAT64 well-known prefix (64:ff9b::a.b.c.d).
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return Some(v4);
    }
    let s = ip.segments();
    let low = Ipv4Addr::new(
        (s[6] >> 8) as u8,
        (s[6] & 0xff) as u8,
        (s[7] >> 8) as u8,
        (s[7] & 0xff) as u8,
    );
    let compatible = s[..6].iter().all(|&x| x == 0);
    let nat64 = s[0] == 0x64 && s[1] == 0xff9b && s[2..6].iter().all(|&x| x == 0);
    (compatible || nat64).then_some(low)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn local_and_special_addresses_are_classified() {
        let cases = [
            ("127.0.0.1", Blocked::Loopback),
            ("127.255.0.9", Blocked::Loopback),
            ("::1", Blocked::Loopback),
            ("10.0.0.1", Blocked::Private),
            ("172.16.0.1", Blocked::Private),
            ("172.31.255.255", Blocked::Private),
            ("192.168.1.1", Blocked::Private),
            ("fc00::1", Blocked::Private),
            ("fd12:3456::1", Blocked::Private),
            ("169.254.1.1", Blocked::LinkLocal),
            ("169.254.169.254", Blocked::Metadata),
            ("fe80::1", Blocked::LinkLocal),
            ("0.0.0.0", Blocked::Unspecified),
            ("::", Blocked::Unspecified),
            ("100.64.0.1", Blocked::SharedNat),
            ("100.127.255.254", Blocked::SharedNat),
            ("224.0.0.1", Blocked::Multicast),
            ("ff02::1", Blocked::Multicast),
            ("255.255.255.255", Blocked::Broadcast),
            ("240.0.0.1", Blocked::Reserved),
            ("::ffff:127.0.0.1", Blocked::Loopback),
            ("::ffff:10.1.2.3", Blocked::Private),
            ("::ffff:169.254.169.254", Blocked::Metadata),
            ("64:ff9b::c0a8:101", Blocked::Private),
            ("fd00:ec2::254", Blocked::Metadata),
            ("192.0.0.192", Blocked::Metadata),
            ("100.100.100.200", Blocked::Metadata),
            ("fec0::1", Blocked::Private),
        ];
        for (addr, kind) in cases {
            assert_eq!(classify(ip(addr)), Some(kind), "{addr}");
        }
    }

    #[test]
    fn every_special_purpose_block_is_refused_at_both_ends() {
        // One row per registry entry: the first and the last address of the block.
        let cases = [
            ("192.0.0.1", "192.0.0.255", "192.0.0.0/24"),
            ("192.0.2.0", "192.0.2.255", "192.0.2.0/24"),
            ("192.31.196.0", "192.31.196.255", "192.31.196.0/24"),
            ("192.52.193.0", "192.52.193.255", "192.52.193.0/24"),
            ("192.88.99.0", "192.88.99.255", "192.88.99.0/24"),
            ("192.175.48.0", "192.175.48.255", "192.175.48.0/24"),
            ("198.18.0.0", "198.19.255.255", "198.18.0.0/15"),
            ("198.51.100.0", "198.51.100.255", "198.51.100.0/24"),
            ("203.0.113.0", "203.0.113.255", "203.0.113.0/24"),
            (
                "64:ff9b:1::",
                "64:ff9b:1:ffff:ffff:ffff:ffff:ffff",
                "64:ff9b:1::/48",
            ),
            ("100::", "100::ffff:ffff:ffff:ffff", "100::/64"),
            (
                "100:0:0:1::",
                "100:0:0:1:ffff:ffff:ffff:ffff",
                "100:0:0:1::/64",
            ),
            (
                "2001::",
                "2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff",
                "2001::/23",
            ),
            (
                "2001:db8::",
                "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff",
                "2001:db8::/32",
            ),
            (
                "2002::",
                "2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
                "2002::/16",
            ),
            (
                "2620:4f:8000::",
                "2620:4f:8000:ffff:ffff:ffff:ffff:ffff",
                "2620:4f:8000::/48",
            ),
            (
                "3fff::",
                "3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff",
                "3fff::/20",
            ),
            (
                "5f00::",
                "5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
                "5f00::/16",
            ),
        ];
        for (first, last, block) in cases {
            for addr in [first, last] {
                match classify(ip(addr)) {
                    Some(Blocked::Special { block: b, .. }) => assert_eq!(b, block, "{addr}"),
                    other => panic!("{addr}: {other:?}"),
                }
            }
        }
        // Just outside: public.
        for addr in [
            "198.17.255.255",
            "198.20.0.0",
            "2001:200::1",
            "2003::1",
            "3fff:1000::1",
        ] {
            assert_eq!(classify(ip(addr)), None, "{addr}");
        }
        // 6to4 and Teredo are refused whatever IPv4 address they carry.
        assert!(classify(ip("2002:0808:0808::1")).is_some());
        assert!(classify(ip("2001:0:4136:e378:8000:63bf:3fff:fdd2")).is_some());
    }

    #[test]
    fn public_addresses_pass() {
        for addr in [
            "93.184.216.34",
            "8.8.8.8",
            "172.32.0.1",
            "172.15.255.255",
            "100.128.0.1",
            "100.63.255.255",
            "192.169.0.1",
            "2606:2800:220:1:248:1893:25c8:1946",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
        ] {
            assert_eq!(classify(ip(addr)), None, "{addr}");
        }
    }

    #[test]
    fn allow_local_opens_loopback_and_private_networks_only() {
        let policy = AddressPolicy::new(true);
        for addr in ["127.0.0.1", "::1", "10.0.0.1", "192.168.1.5", "fd12::1"] {
            assert_eq!(policy.check_ip(ip(addr)), None, "{addr}");
        }
        for (addr, kind) in [
            ("169.254.169.254", Blocked::Metadata),
            ("fd00:ec2::254", Blocked::Metadata),
            ("169.254.1.1", Blocked::LinkLocal),
            ("fe80::1", Blocked::LinkLocal),
            ("100.100.100.200", Blocked::Metadata),
            ("0.0.0.0", Blocked::Unspecified),
        ] {
            assert_eq!(policy.check_ip(ip(addr)), Some(kind), "{addr}");
        }
        assert!(policy.check_ip(ip("198.18.0.1")).is_some());
        assert_eq!(
            AddressPolicy::new(false).check_ip(ip("127.0.0.1")),
            Some(Blocked::Loopback)
        );
    }

    #[tokio::test]
    async fn ip_literals_are_refused_without_resolving() {
        let policy = AddressPolicy::new(false);
        for (u, shown) in [
            ("http://127.0.0.1/", "127.0.0.1"),
            ("http://[::1]:8080/x", "::1"),
            ("http://10.0.0.1/", "10.0.0.1"),
            ("http://169.254.169.254/latest/meta-data", "169.254.169.254"),
            ("http://[::ffff:127.0.0.1]/", "127.0.0.1"),
            // The URL parser reads these forms as 127.0.0.1 too.
            ("http://2130706433/", "127.0.0.1"),
            ("http://0x7f.1/", "127.0.0.1"),
        ] {
            let err = policy.vet(&url(u)).await.unwrap_err();
            let text = err.to_string();
            assert!(matches!(err, GuardError::Refused { .. }), "{u}: {text}");
            assert!(text.contains(shown), "{u}: {text}");
            assert!(text.contains("allow_local_fetch"), "{text}");
        }
    }

    #[tokio::test]
    async fn host_names_are_checked_on_every_resolved_address() {
        let policy = AddressPolicy::new(false);
        let err = policy.vet(&url("http://localhost:9/")).await.unwrap_err();
        let text = err.to_string();
        assert!(text.contains("`localhost` resolves to"), "{text}");
        assert!(text.contains("loopback"), "{text}");
        let allowed = AddressPolicy::new(true)
            .vet(&url("http://localhost:9/"))
            .await
            .unwrap();
        assert_eq!(allowed.domain.as_deref(), Some("localhost"));
        assert!(!allowed.addrs.is_empty());
        assert!(allowed.addrs.iter().all(|a| a.port() == 9));
    }

    #[tokio::test]
    async fn metadata_host_names_are_refused_by_name() {
        let err = AddressPolicy::new(false)
            .vet(&url("http://metadata.google.internal/computeMetadata/v1/"))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("metadata"), "{err}");
        assert!(matches!(
            err,
            GuardError::Refused {
                kind: Blocked::Metadata,
                ..
            }
        ));
        let err = AddressPolicy::new(true)
            .vet(&url("http://metadata.google.internal/computeMetadata/v1/"))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("metadata"), "{err}");
    }

    #[tokio::test]
    async fn ip_literal_targets_are_pinned_with_the_default_port() {
        let policy = AddressPolicy::strict_except(ip("127.0.0.1"));
        let t = policy.vet(&url("https://127.0.0.1/")).await.unwrap();
        assert_eq!(t.domain, None);
        assert_eq!(t.addrs, vec!["127.0.0.1:443".parse().unwrap()]);
        // The exemption is for that address only.
        assert!(policy.vet(&url("http://127.0.0.2/")).await.is_err());
    }

    #[test]
    fn other_schemes_are_refused_with_the_scheme_named() {
        for (u, scheme) in [
            ("ftp://example.com/f", "ftp"),
            ("file:///etc/passwd", "file"),
            ("gopher://x/", "gopher"),
        ] {
            let err = check_scheme(&url(u)).unwrap_err().to_string();
            assert!(err.contains(&format!("`{scheme}:`")), "{err}");
        }
        assert!(check_scheme(&url("https://example.com")).is_ok());
    }

    #[tokio::test]
    async fn a_redirect_hop_is_checked_like_the_first_url() {
        // An allowed first hop (the trusted test address) redirecting to refused addresses.
        let policy = AddressPolicy::strict_except(ip("127.0.0.1"));
        let first = url("http://127.0.0.1:8080/start");
        assert!(policy.vet(&first).await.is_ok());
        for location in [
            "http://169.254.169.254/latest/meta-data",
            "http://10.0.0.1/",
            "http://[::1]/",
            "http://127.0.0.2:8080/admin",
        ] {
            let hop = next_hop(&first, location).unwrap();
            let err = policy.vet(&hop).await.unwrap_err();
            assert!(
                matches!(err, GuardError::Refused { .. }),
                "{location}: {err}"
            );
        }
        // A relative Location stays on the trusted host and passes.
        let hop = next_hop(&first, "/next?x=1").unwrap();
        assert_eq!(hop.as_str(), "http://127.0.0.1:8080/next?x=1");
        assert!(policy.vet(&hop).await.is_ok());
        // Scheme changes are refused at the hop.
        let err = next_hop(&first, "file:///etc/passwd").unwrap_err();
        assert!(matches!(err, GuardError::Scheme { .. }));
    }
}
