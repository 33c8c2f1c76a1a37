//! URL-level checks shared by the first request and every redirect hop.

use crate::guard::{self, Blocked};
use std::fmt;
use url::Url;

/// Why a URL (the input's or a redirect's `Location`) may not be requested.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UrlProblem {
    /// The SSRF guard refused the host or port.
    Blocked(Blocked),
    /// The URL carries a user name or password.
    Credentials,
    /// A redirect to a scheme other than http or https.
    Scheme(String),
    /// A redirect from https to http.
    Downgrade,
    /// A redirect whose `Location` does not parse against the current URL.
    BadLocation(String),
}

impl UrlProblem {
    /// The failure code this problem ends a fetch with.
    #[must_use]
    pub fn code(&self) -> &'static str {
        match self {
            Self::Blocked(_) => "fetch.blocked",
            Self::Credentials => "fetch.invalid_url",
            Self::Scheme(_) | Self::Downgrade | Self::BadLocation(_) => "fetch.redirect_refused",
        }
    }
}

impl fmt::Display for UrlProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Blocked(blocked) => write!(f, "refused: {blocked}"),
            Self::Credentials => f.write_str("url must not contain a user name or password"),
            Self::Scheme(scheme) => write!(f, "refused a redirect to a {scheme}: URL"),
            Self::Downgrade => f.write_str("refused a redirect from https to http"),
            Self::BadLocation(location) => {
                write!(
                    f,
                    "refused a redirect to an unparsable Location {location:?}"
                )
            }
        }
    }
}

/// Checks a URL the ladder is about to request and returns the form it requests: trailing dots
/// dropped from a host name (so certificate and `--resolve` matching see the usual name) and no
/// fragment. Order: host (name or literal address), port, credentials.
pub fn check_url(url: &Url, allow_private_network: bool) -> Result<Url, UrlProblem> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(UrlProblem::Scheme(url.scheme().to_owned()));
    }
    let Some(host) = url.host() else {
        return Err(UrlProblem::BadLocation(url.to_string()));
    };
    guard::judge_host(&host, allow_private_network).map_err(UrlProblem::Blocked)?;
    if let Some(port) = url.port() {
        guard::judge_port(port).map_err(UrlProblem::Blocked)?;
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(UrlProblem::Credentials);
    }
    let mut clean = url.clone();
    clean.set_fragment(None);
    if let url::Host::Domain(name) = host {
        let trimmed = name.trim_end_matches('.');
        if trimmed.len() != name.len() && !trimmed.is_empty() {
            let trimmed = trimmed.to_owned();
            // Setting a shorter valid domain cannot fail; keep the original if it somehow does.
            if clean.set_host(Some(&trimmed)).is_err() {
                clean = url.clone();
                clean.set_fragment(None);
            }
        }
    }
    Ok(clean)
}

/// Checks a redirect: resolves `location` against `current`, refuses non-http(s) targets and
/// https→http downgrades, then applies [`check_url`].
pub fn check_redirect(
    current: &Url,
    location: &str,
    allow_private_network: bool,
) -> Result<Url, UrlProblem> {
    let next = current
        .join(location.trim())
        .map_err(|_| UrlProblem::BadLocation(text::clip(location, 200)))?;
    if !matches!(next.scheme(), "http" | "https") {
        return Err(UrlProblem::Scheme(next.scheme().to_owned()));
    }
    if current.scheme() == "https" && next.scheme() == "http" {
        return Err(UrlProblem::Downgrade);
    }
    check_url(&next, allow_private_network)
}

/// The host as a connection names it: a domain, or an address without brackets.
pub(crate) fn host_name(url: &Url) -> String {
    match url.host() {
        Some(url::Host::Domain(name)) => name.to_owned(),
        Some(url::Host::Ipv4(v4)) => v4.to_string(),
        Some(url::Host::Ipv6(v6)) => v6.to_string(),
        None => String::new(),
    }
}
