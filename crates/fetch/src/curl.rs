//! curl for rungs 2–4: the argument vector, and reading back what curl printed.
//!
//! The driver spawns `argv[0]` with `argv[1..]` directly (`child_process.spawn`, no shell,
//! `windowsHide`), reads at most [`stdout_cap`] bytes of stdout, keeps a bounded tail of stderr,
//! and kills the child at the step's deadline. The argument vector, in order:
//!
//! | Argument | Why |
//! |---|---|
//! | `-q` | First, so `.curlrc` is ignored: a user's `insecure` or `proxy` line cannot undo the rules below. |
//! | `--silent --show-error` | No progress meter; errors on stderr. |
//! | `--globoff` | `[1-3]` and `{a,b}` in a URL are literal, never a fan-out into many requests. |
//! | `--proto =http,https`, `--proto-redir =http,https` | Only HTTP(S), even if something slipped past the checks. |
//! | `--max-redirs 0` (and no `--location`) | curl never follows a redirect; the ladder follows it hop by hop, checking each. |
//! | `--noproxy *` | Never a proxy, whatever `http_proxy`/`HTTPS_PROXY`/`ALL_PROXY` say (see below). |
//! | `--ipv6` / `--ipv4` | Rungs 2 and 3; rung 4 passes neither. |
//! | `--connect-timeout`, `--max-time` | The step's budget, in seconds with millisecond precision. |
//! | `--user-agent`, `--header Accept…`, `--header Accept-Encoding: identity` | Fixed headers, never model text; identity so the byte cap counts the same bytes on every rung. |
//! | `--include` | Status line and headers on stdout before the body; portable to old curl (no `--write-out` `%{json}`, which needs 7.70). |
//! | `--resolve host:port:addr` | Pins the address the guard approved (IPv6 in brackets, curl ≥ 7.57), so DNS cannot change between check and connect. Omitted for an IP-literal host. TLS SNI and certificate checks still use the host name. |
//! | `--url <url>` | Last. curl takes the next argument as a URL even if it starts with `-`. |
//!
//! Never `-k`/`--insecure`, `--proxy`, `--cacert`, `--data`, or a header built from model input.
//! `--max-filesize` is deliberately absent: curl refuses a response whose length exceeds it,
//! which would turn an oversized page into a failure instead of the documented truncation; the
//! driver's stdout cap bounds the bytes instead.
//!
//! Why no proxy at all, even a CONNECT proxy that cannot impersonate the origin: a proxy
//! resolves the name itself, so the guard's check of the resolved addresses and the `--resolve`
//! pin would not apply to the connection it makes; and Node's own request (rung 1) ignores the
//! proxy variables, so rungs would take different paths. Hostile or not, a proxy is out.

use crate::Millis;
use std::net::IpAddr;
use url::Url;

/// Headers sent on every rung.
pub const ACCEPT: &str = "text/html, application/json;q=0.9, text/*;q=0.8, */*;q=0.5";

/// Room for the status lines and headers in curl's stdout, on top of the body cap.
pub const HEADER_ALLOWANCE: usize = 64 * 1024;

/// How many bytes of curl's stdout the driver reads before it stops and kills curl.
#[must_use]
pub fn stdout_cap(max_body_bytes: usize) -> usize {
    max_body_bytes.saturating_add(HEADER_ALLOWANCE)
}

/// Which address family a curl rung is restricted to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// `--ipv6` (rung 2).
    V6,
    /// `--ipv4` (rung 3).
    V4,
    /// Neither (rung 4).
    Any,
}

/// Everything one curl invocation needs.
#[derive(Clone, Debug)]
pub struct CurlRequest<'a> {
    /// The URL, already checked ([`crate::check_url`]).
    pub url: &'a Url,
    /// The rung's family restriction.
    pub family: Family,
    /// The vetted address to pin for a host name; `None` for an IP-literal host.
    pub pin: Option<IpAddr>,
    /// `--max-time`, in milliseconds.
    pub timeout_ms: Millis,
    /// `--connect-timeout`, in milliseconds (capped at `timeout_ms`).
    pub connect_timeout_ms: Millis,
    /// `--user-agent`.
    pub user_agent: &'a str,
}

/// Builds curl's argument vector; `argv[0]` is `curl`.
#[must_use]
pub fn argv(request: &CurlRequest<'_>) -> Vec<String> {
    let mut argv: Vec<String> = [
        "curl",
        "-q",
        "--silent",
        "--show-error",
        "--globoff",
        "--proto",
        "=http,https",
        "--proto-redir",
        "=http,https",
        "--max-redirs",
        "0",
        "--noproxy",
        "*",
    ]
    .iter()
    .map(|&s| s.to_owned())
    .collect();
    match request.family {
        Family::V6 => argv.push("--ipv6".to_owned()),
        Family::V4 => argv.push("--ipv4".to_owned()),
        Family::Any => {}
    }
    let connect = request.connect_timeout_ms.min(request.timeout_ms);
    argv.extend([
        "--connect-timeout".to_owned(),
        seconds(connect),
        "--max-time".to_owned(),
        seconds(request.timeout_ms),
        "--user-agent".to_owned(),
        request.user_agent.to_owned(),
        "--header".to_owned(),
        format!("Accept: {ACCEPT}"),
        "--header".to_owned(),
        "Accept-Encoding: identity".to_owned(),
        "--include".to_owned(),
    ]);
    if let (Some(addr), Some(url::Host::Domain(host))) = (request.pin, request.url.host()) {
        let port = request.url.port_or_known_default().unwrap_or(443);
        let addr = match addr {
            IpAddr::V4(v4) => v4.to_string(),
            IpAddr::V6(v6) => format!("[{v6}]"),
        };
        argv.push("--resolve".to_owned());
        argv.push(format!("{host}:{port}:{addr}"));
    }
    argv.push("--url".to_owned());
    argv.push(request.url.as_str().to_owned());
    argv
}

/// Milliseconds as curl's decimal seconds (`7.5 s` → `7.500`), at least one millisecond.
fn seconds(ms: Millis) -> String {
    let ms = ms.max(1);
    format!("{}.{:03}", ms / 1000, ms % 1000)
}

/// The response curl printed with `--include`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Printed {
    /// The final (non-1xx) status.
    pub status: u16,
    /// The last `Content-Type` header of the final response.
    pub content_type: Option<String>,
    /// The last `Location` header of the final response.
    pub location: Option<String>,
    /// Offset of the body in stdout.
    pub body_start: usize,
}

/// Finds the final response's status and headers in curl's `--include` output: header blocks
/// start with `HTTP/`, end with a blank line, and 1xx blocks (`100 Continue`, `103 Early Hints`)
/// are skipped. `None` if no complete final header block is there.
#[must_use]
pub fn parse_printed(stdout: &[u8]) -> Option<Printed> {
    let mut at = 0;
    loop {
        let block = stdout.get(at..)?;
        if !block.starts_with(b"HTTP/") {
            return None;
        }
        let (head_len, sep_len) = header_end(block)?;
        let head = String::from_utf8_lossy(&block[..head_len]);
        let mut lines = head.lines();
        let status: u16 = lines.next()?.split_whitespace().nth(1)?.parse().ok()?;
        if !(100..=999).contains(&status) {
            return None;
        }
        let body_start = at + head_len + sep_len;
        if (100..200).contains(&status) {
            at = body_start;
            continue;
        }
        let mut content_type = None;
        let mut location = None;
        for line in lines {
            if let Some((name, value)) = line.split_once(':') {
                let value = value.trim().to_owned();
                match name.trim().to_ascii_lowercase().as_str() {
                    "content-type" => content_type = Some(value),
                    "location" => location = Some(value),
                    _ => {}
                }
            }
        }
        return Some(Printed {
            status,
            content_type,
            location,
            body_start,
        });
    }
}

/// Length of the header block and of its terminating blank line (`\r\n\r\n` or `\n\n`).
fn header_end(block: &[u8]) -> Option<(usize, usize)> {
    let crlf = block.windows(4).position(|w| w == b"\r\n\r\n");
    let lf = block.windows(2).position(|w| w == b"\n\n");
    match (crlf, lf) {
        (Some(c), Some(l)) if l < c => Some((l, 2)),
        (Some(c), _) => Some((c, 4)),
        (None, Some(l)) => Some((l, 2)),
        (None, None) => None,
    }
}

/// What a curl exit code means, as a short error code and phrase.
#[must_use]
pub fn exit_meaning(code: i32) -> (&'static str, &'static str) {
    match code {
        2 => ("curl-init", "curl failed to start"),
        3 => ("curl-url", "curl rejected the URL"),
        5 => ("curl-proxy", "could not resolve the proxy"),
        6 => ("dns", "could not resolve the host"),
        7 => ("connect", "could not connect"),
        16 | 92 => ("http2", "HTTP/2 error"),
        18 => ("partial", "the transfer ended early"),
        28 => ("timeout", "timed out"),
        35 => ("tls", "TLS handshake failed"),
        47 => ("redirects", "too many redirects"),
        49 => ("curl-option", "curl rejected an option (curl too old?)"),
        51 | 60 => ("certificate", "certificate verification failed"),
        52 => ("empty-reply", "the server sent nothing"),
        55 => ("send", "sending failed"),
        56 => ("reset", "receiving failed (connection reset?)"),
        58 | 77 | 83 | 90 | 91 => ("tls-setup", "local TLS setup failed"),
        63 => ("too-big", "the response exceeded curl's size limit"),
        _ => ("curl", "curl failed"),
    }
}
