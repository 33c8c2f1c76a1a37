//! The validated fetch settings and the driver's clock unit: a leaf the other modules read.

/// Milliseconds on a monotonic clock chosen by the driver.
pub type Millis = u64;

/// Read at most this many body bytes per response (2 MiB).
pub const DEFAULT_MAX_BODY_BYTES: usize = 2 * 1024 * 1024;

/// Return at most this many characters (UTF-16 code units).
pub const DEFAULT_MAX_TEXT_CHARS: usize = 20_000;

/// Validated fetch settings (the config crate builds them; [`Default`] holds the documented
/// defaults).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// Open loopback, private, shared (CGNAT), link-local, unique-local and benchmarking ranges
    /// and local names. Cloud metadata, unspecified, multicast, broadcast, reserved and
    /// documentation addresses stay closed. Default `false`.
    pub allow_private_network: bool,
    /// The most one rung may take, DNS and redirects included. Default 10 000 ms.
    pub rung_timeout_ms: Millis,
    /// curl's `--connect-timeout` (capped by the rung's budget). Default 5 000 ms.
    pub connect_timeout_ms: Millis,
    /// The most the whole fetch may take. Default 30 000 ms.
    pub deadline_ms: Millis,
    /// Redirects followed per rung. Default 5.
    pub max_redirects: u32,
    /// Body bytes read per response. Default 2 MiB.
    pub max_body_bytes: usize,
    /// Characters returned (UTF-16 code units). Default 20 000.
    pub max_text_chars: usize,
    /// The `User-Agent` sent on every rung.
    pub user_agent: String,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            allow_private_network: false,
            rung_timeout_ms: 10_000,
            connect_timeout_ms: 5_000,
            deadline_ms: 30_000,
            max_redirects: 5,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            max_text_chars: DEFAULT_MAX_TEXT_CHARS,
            user_agent: concat!(
                "dsh-limit-break/",
                env!("CARGO_PKG_VERSION"),
                " (resilient_fetch)"
            )
            .to_owned(),
        }
    }
}
