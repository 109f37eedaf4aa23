//! The HTTP client for one fetch hop: TLS provider, no automatic redirects, pinned addresses.
//!
//! reqwest is built with `rustls-no-provider`, so building a client before a rustls crypto
//! provider is installed panics; [`ensure_crypto_provider`] installs ring once per process. A
//! client is made per vetted target because the vetted addresses of that hop's host are pinned
//! into it (`resolve_to_addrs`): the connection can only go where the address policy looked.
//! Clients are kept and reused for the same host, addresses and timeout (see [`build`]). Proxies
//! from the environment are ignored for the same reason (a proxy would resolve the host itself).

use std::net::SocketAddr;
use std::sync::{LazyLock, Mutex, Once};
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

/// Clients kept for reuse, most recently used last.
type Kept = Vec<((Option<String>, Vec<SocketAddr>, Duration), reqwest::Client)>;
static CLIENTS: LazyLock<Mutex<Kept>> = LazyLock::new(|| Mutex::new(Vec::new()));

/// Clients kept at most (one per vetted host and its addresses).
const KEPT: usize = 16;

/// A client for one hop: redirects are returned (not followed), the host is pinned to the
/// checked addresses, and the request gives up after `timeout`.
///
/// Building one loads the system's root certificates (tens of milliseconds, spent on the
/// thread that polls the call, so parallel calls of a step would wait for each other's), so a
/// client is kept per vetted target (host, the very addresses it was pinned to, timeout) and
/// reused: the same pinning, and the connection to a search backend stays open between
/// searches. A host that resolves to other addresses later gets a client of its own.
pub(crate) fn build(target: &Target, timeout: Duration) -> Result<reqwest::Client, reqwest::Error> {
    let key = (target.domain.clone(), target.addrs.clone(), timeout);
    if let Ok(mut kept) = CLIENTS.lock()
        && let Some(at) = kept.iter().position(|(k, _)| *k == key)
    {
        let entry = kept.remove(at);
        let client = entry.1.clone();
        kept.push(entry);
        return Ok(client);
    }
    let client = fresh(target, timeout)?;
    if let Ok(mut kept) = CLIENTS.lock() {
        kept.push((key, client.clone()));
        if kept.len() > KEPT {
            kept.remove(0);
        }
    }
    Ok(client)
}

fn fresh(target: &Target, timeout: Duration) -> Result<reqwest::Client, reqwest::Error> {
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
