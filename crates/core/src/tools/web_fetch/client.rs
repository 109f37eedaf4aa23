//! The HTTP client for one fetch hop: TLS provider, no automatic redirects, pinned addresses.
//!
//! reqwest is built with `rustls-no-provider`, so building a client before a rustls crypto
//! provider is installed panics; [`ensure_crypto_provider`] installs ring once per process. A
//! client is built per hop because the vetted addresses of that hop's host are pinned into it
//! (`resolve_to_addrs`): the connection can only go where the address policy looked. Proxies
//! from the environment are ignored for the same reason (a proxy would resolve the host itself).

use std::sync::Once;
use std::time::Duration;

use reqwest::redirect;

use super::guard::Target;

/// The User-Agent every fetch sends, so servers can tell who is asking.
pub(crate) const USER_AGENT: &str = concat!("versus/", env!("CARGO_PKG_VERSION"));

/// Connecting takes at most this long (the whole fetch has its own, longer limit).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

static PROVIDER: Once = Once::new();

/// Installs the ring crypto provider as the process default, once. Another part of the program
/// (or a test) may have installed one first; that one is kept.
pub(crate) fn ensure_crypto_provider() {
    PROVIDER.call_once(|| {
        // Err means a provider is already installed, which is all we need.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// A client for one hop: redirects are returned (not followed), the host is pinned to the
/// checked addresses, and the request gives up after `timeout`.
pub(crate) fn build(target: &Target, timeout: Duration) -> Result<reqwest::Client, reqwest::Error> {
    ensure_crypto_provider();
    let mut builder = reqwest::Client::builder()
        .user_agent(USER_AGENT)
        .redirect(redirect::Policy::none())
        .no_proxy()
        .connect_timeout(CONNECT_TIMEOUT.min(timeout))
        .timeout(timeout);
    if let Some(domain) = &target.domain {
        builder = builder.resolve_to_addrs(domain, &target.addrs);
    }
    builder.build()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_client_builds_without_panicking() {
        let target = Target {
            domain: Some("example.com".to_string()),
            addrs: vec!["93.184.216.34:443".parse().unwrap()],
        };
        build(&target, Duration::from_secs(5)).unwrap();
        // Twice: the provider is installed once, the second build reuses it.
        build(&target, Duration::from_secs(5)).unwrap();
        assert!(rustls::crypto::CryptoProvider::get_default().is_some());
    }
}
