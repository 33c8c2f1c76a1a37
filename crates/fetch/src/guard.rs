//! The SSRF guard: which hosts, addresses and ports a fetch may reach.
//!
//! The guard judges three things, all pure:
//! - a URL's host as the WHATWG parser left it ([`judge_host`]): an IP literal in any spelling the
//!   parser accepts (`2130706433`, `0x7f.1`, `0177.0.0.1`, `127.1`, `[::ffff:7f00:1]`, percent
//!   encoding, IDNA full stops) is already an [`IpAddr`] by then, and a name is lowercase ASCII;
//! - every address a name resolves to ([`judge_resolved`]): one blocked address refuses the name;
//! - the port ([`judge_port`]), against the Fetch standard's bad-port list.
//!
//! IPv6 addresses that embed an IPv4 address (IPv4-mapped, IPv4-compatible, IPv4-translated,
//! NAT64 `64:ff9b::/96`, 6to4 `2002::/16`, Teredo `2001::/32`) are judged by the IPv4 address they
//! carry as well as by their own range.
//!
//! [`Reason::is_private_network`] says which refusals `allowPrivateNetwork` lifts; cloud metadata
//! addresses and names, unspecified, multicast, broadcast, reserved and documentation addresses
//! stay refused whatever the settings.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why a host or address is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reason {
    /// `127.0.0.0/8`, `::1`.
    Loopback,
    /// RFC 1918: `10/8`, `172.16/12`, `192.168/16`.
    Private,
    /// RFC 6598 shared address space (carrier-grade NAT), `100.64.0.0/10`.
    SharedAddressSpace,
    /// `169.254.0.0/16`, `fe80::/10`.
    LinkLocal,
    /// `fc00::/7`, and the deprecated site-local `fec0::/10`.
    UniqueLocal,
    /// RFC 2544 benchmarking, `198.18.0.0/15`, `2001:2::/48`; used as private space in practice.
    Benchmarking,
    /// `localhost`, `*.localhost`, `*.local`, `*.internal`, `*.home.arpa`, `*.localdomain`, and
    /// single-label names (resolved through the search domains of the local network).
    LocalName,
    /// `0.0.0.0`, `::`.
    Unspecified,
    /// `224.0.0.0/4`, `ff00::/8`.
    Multicast,
    /// `255.255.255.255`.
    Broadcast,
    /// Reserved or special-purpose space that is never a web server: `0/8`, `240/4`,
    /// `192.0.0/24`, `192.88.99/24`, `100::/64`, IPv6 outside `2000::/3`, and similar.
    Reserved,
    /// Documentation ranges: `192.0.2/24`, `198.51.100/24`, `203.0.113/24`, `2001:db8::/32`,
    /// `3fff::/20`.
    Documentation,
    /// A cloud metadata or platform endpoint (AWS, GCP, Azure, Alibaba, Oracle, ECS/EKS).
    Metadata,
    /// A cloud metadata host name (`metadata.google.internal` and friends).
    MetadataName,
    /// A port on the Fetch standard's bad-port list (SMTP, IRC, SIP, …).
    BadPort,
}

impl Reason {
    /// Whether `allowPrivateNetwork` lifts this refusal. Metadata never is.
    #[must_use]
    pub fn is_private_network(self) -> bool {
        matches!(
            self,
            Self::Loopback
                | Self::Private
                | Self::SharedAddressSpace
                | Self::LinkLocal
                | Self::UniqueLocal
                | Self::Benchmarking
                | Self::LocalName
        )
    }

    /// A short, stable name for the reason (`"loopback"`, `"metadata"`, …).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Loopback => "loopback",
            Self::Private => "private",
            Self::SharedAddressSpace => "shared-address-space",
            Self::LinkLocal => "link-local",
            Self::UniqueLocal => "unique-local",
            Self::Benchmarking => "benchmarking",
            Self::LocalName => "local-name",
            Self::Unspecified => "unspecified",
            Self::Multicast => "multicast",
            Self::Broadcast => "broadcast",
            Self::Reserved => "reserved",
            Self::Documentation => "documentation",
            Self::Metadata => "metadata",
            Self::MetadataName => "metadata-name",
            Self::BadPort => "bad-port",
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Self::Loopback => "a loopback address",
            Self::Private => "a private (RFC 1918) address",
            Self::SharedAddressSpace => "a shared (carrier-grade NAT) address",
            Self::LinkLocal => "a link-local address",
            Self::UniqueLocal => "a unique-local address",
            Self::Benchmarking => "a benchmarking-range address",
            Self::LocalName => "a local-network name",
            Self::Unspecified => "the unspecified address",
            Self::Multicast => "a multicast address",
            Self::Broadcast => "the broadcast address",
            Self::Reserved => "a reserved address",
            Self::Documentation => "a documentation-range address",
            Self::Metadata => "a cloud metadata endpoint",
            Self::MetadataName => "a cloud metadata host name",
            Self::BadPort => "a port that must not be fetched",
        }
    }
}

/// How an IPv6 address carries the IPv4 address it was judged by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Embedding {
    /// `::ffff:a.b.c.d`.
    Mapped,
    /// `::a.b.c.d` (deprecated).
    Compatible,
    /// `::ffff:0:a.b.c.d` (SIIT).
    Translated,
    /// `64:ff9b::a.b.c.d` or `64:ff9b:1::/48`.
    Nat64,
    /// `2002:aabb:ccdd::/48`.
    SixToFour,
    /// `2001:0::/32`, client address inverted in the last 32 bits.
    Teredo,
}

impl Embedding {
    fn name(self) -> &'static str {
        match self {
            Self::Mapped => "IPv4-mapped",
            Self::Compatible => "IPv4-compatible",
            Self::Translated => "IPv4-translated",
            Self::Nat64 => "NAT64",
            Self::SixToFour => "6to4",
            Self::Teredo => "Teredo",
        }
    }
}

/// A refusal: what was refused, why, and which range or rule matched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Blocked {
    /// The refused host or address as judged (an address in canonical form, or a lowercase name).
    pub subject: String,
    /// Why.
    pub reason: Reason,
    /// The matching range or name rule, e.g. `127.0.0.0/8` or `*.localhost`.
    pub rule: &'static str,
    /// The IPv4 address an IPv6 address embeds, when that address decided.
    pub via: Option<(Embedding, Ipv4Addr)>,
}

impl fmt::Display for Blocked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.via {
            Some((embedding, v4)) => write!(
                f,
                "{} embeds {v4} ({}), which is {} ({})",
                self.subject,
                embedding.name(),
                self.reason.describe(),
                self.rule
            ),
            None => write!(
                f,
                "{} is {} ({})",
                self.subject,
                self.reason.describe(),
                self.rule
            ),
        }
    }
}

/// A classification: the reason, the matching rule, and the embedded IPv4 address that decided.
pub type Verdict = (Reason, &'static str, Option<(Embedding, Ipv4Addr)>);

/// A CIDR entry: network, prefix length, verdict, rule text.
type V4Rule = (u32, u8, Reason, &'static str);
type V6Rule = (u128, u8, Reason, &'static str);

/// Single cloud metadata and platform addresses, checked first, always refused.
const V4_METADATA: &[V4Rule] = &[
    // AWS, GCP, Azure, OCI, DigitalOcean, OpenStack IMDS and the AWS time/DNS helpers beside it.
    (0xA9FE_A900, 24, Reason::Metadata, "169.254.169.0/24"),
    // AWS ECS task credentials (169.254.170.2) and EKS pod identity (169.254.170.23).
    (0xA9FE_AA00, 24, Reason::Metadata, "169.254.170.0/24"),
    // Alibaba Cloud metadata, inside the CGNAT block.
    (0x6464_64C8, 32, Reason::Metadata, "100.100.100.200/32"),
    // Azure WireServer / platform endpoint.
    (0xA83F_8110, 32, Reason::Metadata, "168.63.129.16/32"),
    // Oracle Cloud Classic metadata.
    (0xC000_00C0, 32, Reason::Metadata, "192.0.0.192/32"),
];

const V4_RULES: &[V4Rule] = &[
    (0x0000_0000, 32, Reason::Unspecified, "0.0.0.0/32"),
    (0x0000_0000, 8, Reason::Reserved, "0.0.0.0/8"),
    (0x0A00_0000, 8, Reason::Private, "10.0.0.0/8"),
    (0x6440_0000, 10, Reason::SharedAddressSpace, "100.64.0.0/10"),
    (0x7F00_0000, 8, Reason::Loopback, "127.0.0.0/8"),
    (0xA9FE_0000, 16, Reason::LinkLocal, "169.254.0.0/16"),
    (0xAC10_0000, 12, Reason::Private, "172.16.0.0/12"),
    (0xC000_0000, 24, Reason::Reserved, "192.0.0.0/24"),
    (0xC000_0200, 24, Reason::Documentation, "192.0.2.0/24"),
    (0xC058_6300, 24, Reason::Reserved, "192.88.99.0/24"),
    (0xC0A8_0000, 16, Reason::Private, "192.168.0.0/16"),
    (0xC612_0000, 15, Reason::Benchmarking, "198.18.0.0/15"),
    (0xC633_6400, 24, Reason::Documentation, "198.51.100.0/24"),
    (0xCB00_7100, 24, Reason::Documentation, "203.0.113.0/24"),
    (0xE000_0000, 4, Reason::Multicast, "224.0.0.0/4"),
    (0xFFFF_FFFF, 32, Reason::Broadcast, "255.255.255.255/32"),
    (0xF000_0000, 4, Reason::Reserved, "240.0.0.0/4"),
];

const V6_METADATA: &[V6Rule] = &[
    // AWS IMDS over IPv6 (fd00:ec2::254) and EKS pod identity (fd00:ec2::23).
    (
        0xfd00_0ec2_0000_0000_0000_0000_0000_0000,
        64,
        Reason::Metadata,
        "fd00:ec2::/64",
    ),
    // GCP metadata over IPv6.
    (
        0xfd20_00ce_0000_0000_0000_0000_0000_0254,
        128,
        Reason::Metadata,
        "fd20:ce::254/128",
    ),
];

/// Ranges judged by their own prefix, after the embedded-IPv4 forms.
const V6_RULES: &[V6Rule] = &[
    (0, 128, Reason::Unspecified, "::/128"),
    (1, 128, Reason::Loopback, "::1/128"),
    (
        0x0100_0000_0000_0000_0000_0000_0000_0000,
        64,
        Reason::Reserved,
        "100::/64",
    ),
    (
        0x0064_ff9b_0001_0000_0000_0000_0000_0000,
        48,
        Reason::Private,
        "64:ff9b:1::/48",
    ),
    (
        0x2001_0002_0000_0000_0000_0000_0000_0000,
        48,
        Reason::Benchmarking,
        "2001:2::/48",
    ),
    (
        0x2001_0db8_0000_0000_0000_0000_0000_0000,
        32,
        Reason::Documentation,
        "2001:db8::/32",
    ),
    (
        0x2001_0000_0000_0000_0000_0000_0000_0000,
        23,
        Reason::Reserved,
        "2001::/23",
    ),
    (
        0x3fff_0000_0000_0000_0000_0000_0000_0000,
        20,
        Reason::Documentation,
        "3fff::/20",
    ),
    (
        0xfc00_0000_0000_0000_0000_0000_0000_0000,
        7,
        Reason::UniqueLocal,
        "fc00::/7",
    ),
    (
        0xfe80_0000_0000_0000_0000_0000_0000_0000,
        10,
        Reason::LinkLocal,
        "fe80::/10",
    ),
    (
        0xfec0_0000_0000_0000_0000_0000_0000_0000,
        10,
        Reason::UniqueLocal,
        "fec0::/10",
    ),
    (
        0xff00_0000_0000_0000_0000_0000_0000_0000,
        8,
        Reason::Multicast,
        "ff00::/8",
    ),
];

/// Cloud metadata host names, always refused (compared after lowercasing and trailing-dot removal).
const METADATA_NAMES: &[&str] = &[
    "metadata.google.internal",
    "metadata.goog",
    "metadata",
    "instance-data",
    "instance-data.ec2.internal",
];

/// Suffixes of names that only make sense on a local network.
const LOCAL_SUFFIXES: &[(&str, &str)] = &[
    ("localhost", "*.localhost"),
    ("local", "*.local"),
    ("internal", "*.internal"),
    ("home.arpa", "*.home.arpa"),
    ("localdomain", "*.localdomain"),
];

/// The Fetch standard's bad ports (<https://fetch.spec.whatwg.org/#bad-port>).
const BAD_PORTS: &[u16] = &[
    0, 1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101,
    102, 103, 104, 109, 110, 111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427,
    465, 512, 513, 514, 515, 526, 530, 531, 532, 540, 548, 554, 556, 563, 587, 601, 636, 989, 990,
    993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667,
    6668, 6669, 6679, 6697, 10080,
];

fn in_v4(addr: u32, (net, len, ..): &V4Rule) -> bool {
    let mask = if *len == 0 {
        0
    } else {
        u32::MAX << (32 - u32::from(*len))
    };
    addr & mask == *net & mask
}

fn in_v6(addr: u128, (net, len, ..): &V6Rule) -> bool {
    let mask = if *len == 0 {
        0
    } else {
        u128::MAX << (128 - u32::from(*len))
    };
    addr & mask == *net & mask
}

/// Classifies an IPv4 address, ignoring settings: `None` means publicly routable.
#[must_use]
pub fn classify_v4(addr: Ipv4Addr) -> Option<(Reason, &'static str)> {
    let bits = u32::from(addr);
    V4_METADATA
        .iter()
        .chain(V4_RULES)
        .find(|rule| in_v4(bits, rule))
        .map(|&(_, _, reason, rule)| (reason, rule))
}

/// The IPv4 address an IPv6 address carries, and how, if it has one.
#[must_use]
pub fn embedded_v4(addr: Ipv6Addr) -> Option<(Embedding, Ipv4Addr)> {
    let bits = u128::from(addr);
    let low = Ipv4Addr::from(bits as u32);
    let high = bits >> 32;
    if high == 0xffff {
        return Some((Embedding::Mapped, low));
    }
    if high == 0 && bits > 1 {
        return Some((Embedding::Compatible, low));
    }
    if high == 0xffff_0000 {
        return Some((Embedding::Translated, low));
    }
    if bits >> 32 == 0x0064_ff9b_0000_0000_0000_0000 {
        return Some((Embedding::Nat64, low));
    }
    if bits >> 80 == 0x0064_ff9b_0001 {
        // RFC 8215 local-use NAT64: the prefix length is the operator's; /96 is the usual one.
        return Some((Embedding::Nat64, low));
    }
    if bits >> 112 == 0x2002 {
        return Some((Embedding::SixToFour, Ipv4Addr::from((bits >> 80) as u32)));
    }
    if bits >> 96 == 0x2001_0000 {
        return Some((Embedding::Teredo, Ipv4Addr::from(!(bits as u32))));
    }
    None
}

/// Classifies an IPv6 address, ignoring settings: metadata first, then the IPv4 address it
/// embeds, then its own range; `None` means globally routable.
#[must_use]
pub fn classify_v6(addr: Ipv6Addr) -> Option<Verdict> {
    let bits = u128::from(addr);
    if let Some(&(_, _, reason, rule)) = V6_METADATA.iter().find(|rule| in_v6(bits, rule)) {
        return Some((reason, rule, None));
    }
    if let Some((embedding, v4)) = embedded_v4(addr) {
        if let Some((reason, rule)) = classify_v4(v4) {
            return Some((reason, rule, Some((embedding, v4))));
        }
        match embedding {
            // A public address behind NAT64 or 6to4 is an ordinary destination.
            Embedding::Nat64 | Embedding::SixToFour => {}
            Embedding::Mapped => return None,
            Embedding::Compatible => return Some((Reason::Reserved, "::/96", None)),
            Embedding::Translated => return Some((Reason::Reserved, "::ffff:0:0:0/96", None)),
            Embedding::Teredo => return Some((Reason::Reserved, "2001::/32", None)),
        }
    }
    if let Some(&(_, _, reason, rule)) = V6_RULES.iter().find(|rule| in_v6(bits, rule)) {
        return Some((reason, rule, None));
    }
    let global_unicast = bits >> 125 == 0b001;
    let nat64 = bits >> 32 == 0x0064_ff9b_0000_0000_0000_0000;
    if global_unicast || nat64 {
        None
    } else {
        Some((Reason::Reserved, "outside 2000::/3", None))
    }
}

/// Judges one address under the settings' `allow_private_network`.
pub fn judge_ip(addr: IpAddr, allow_private_network: bool) -> Result<(), Blocked> {
    let verdict = match addr {
        IpAddr::V4(v4) => classify_v4(v4).map(|(reason, rule)| (reason, rule, None)),
        IpAddr::V6(v6) => classify_v6(v6),
    };
    match verdict {
        Some((reason, _, _)) if allow_private_network && reason.is_private_network() => Ok(()),
        Some((reason, rule, via)) => Err(Blocked {
            subject: addr.to_string(),
            reason,
            rule,
            via,
        }),
        None => Ok(()),
    }
}

/// Judges a host name (already lowercase ASCII, as the URL parser leaves it).
pub fn judge_name(name: &str, allow_private_network: bool) -> Result<(), Blocked> {
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    let blocked = |reason, rule| Blocked {
        subject: name.clone(),
        reason,
        rule,
        via: None,
    };
    if METADATA_NAMES.contains(&name.as_str()) {
        return Err(blocked(Reason::MetadataName, "cloud metadata name"));
    }
    if allow_private_network {
        return Ok(());
    }
    for &(suffix, rule) in LOCAL_SUFFIXES {
        if name == suffix || name.ends_with(&format!(".{suffix}")) {
            return Err(blocked(Reason::LocalName, rule));
        }
    }
    if !name.contains('.') {
        return Err(blocked(Reason::LocalName, "single-label name"));
    }
    Ok(())
}

/// Judges a parsed URL host: an IP literal by its address, a name by [`judge_name`].
pub fn judge_host(host: &url::Host<&str>, allow_private_network: bool) -> Result<(), Blocked> {
    match host {
        url::Host::Ipv4(v4) => judge_ip(IpAddr::V4(*v4), allow_private_network),
        url::Host::Ipv6(v6) => judge_ip(IpAddr::V6(*v6), allow_private_network),
        url::Host::Domain(name) => judge_name(name, allow_private_network),
    }
}

/// Judges every address `host` resolved to. One blocked address refuses the host (a name that
/// answers with both a public and a private address is treated as hostile), and an empty answer
/// is not an approval. On success returns the distinct addresses in the resolver's order.
pub fn judge_resolved(
    host: &str,
    addresses: &[IpAddr],
    allow_private_network: bool,
) -> Result<Vec<IpAddr>, Blocked> {
    let mut vetted: Vec<IpAddr> = Vec::with_capacity(addresses.len());
    for &addr in addresses {
        judge_ip(addr, allow_private_network).map_err(|mut blocked| {
            blocked.subject = format!("{host} resolves to {}", blocked.subject);
            blocked
        })?;
        if !vetted.contains(&addr) {
            vetted.push(addr);
        }
    }
    Ok(vetted)
}

/// Judges a port against the Fetch standard's bad-port list.
pub fn judge_port(port: u16) -> Result<(), Blocked> {
    if BAD_PORTS.contains(&port) {
        return Err(Blocked {
            subject: format!("port {port}"),
            reason: Reason::BadPort,
            rule: "Fetch standard bad-port list",
            via: None,
        });
    }
    Ok(())
}
