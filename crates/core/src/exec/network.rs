//! Telling a command that failed for want of the network from any other failure, so the
//! error can name the switch that gives it the network.
//!
//! Confined commands run in a network namespace of their own (only a loopback of their own:
//! not even the host's `127.0.0.1`), unless the user's settings say otherwise. A dependency
//! install (`npm ci`, `cargo fetch`, `pip install`) then fails with a resolver or connection
//! error that says nothing of the sandbox; the hint says it, and names the switch for the kind
//! of command that failed.

/// Which kind of command failed: each kind gets the network from its own switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandRole {
    /// A setup command (`--setup`, a recipe's `setup:`): `setup_network`.
    Setup,
    /// A model's bash: the sandbox's `network`.
    Model,
    /// A check or a recipe's `run:` criterion: the sandbox's `network`.
    Check,
}

/// Pieces of output (lower case) that only a failed name lookup or connection prints: curl
/// and git (`Could not resolve host`), glibc (`Temporary failure in name resolution`), npm
/// and node (`EAI_AGAIN`, `ENOTFOUND`), cargo (`failed to download`, `Couldn't resolve host
/// name`), pip (`Failed to establish a new connection`), go (`dial tcp: lookup`), and the
/// kernel's answer when there is no route (`Network is unreachable`).
const NETWORK_FAILURES: &[&str] = &[
    "could not resolve host",
    "couldn't resolve host",
    "couldn't resolve",
    "temporary failure in name resolution",
    "name or service not known",
    "no address associated with hostname",
    "network is unreachable",
    "eai_again",
    "enotfound",
    "enetunreach",
    "failed to download",
    "failed to establish a new connection",
    "failed to lookup address",
    "dial tcp: lookup",
    "getaddrinfo",
    "dns error",
];

/// Whether `output` reads like a command that could not reach the network: one of the
/// messages above, or a refused connection to an address that is not this machine's.
pub fn looks_like_network_failure(output: &str) -> bool {
    output.lines().any(|line| {
        let line = line.to_lowercase();
        NETWORK_FAILURES.iter().any(|m| line.contains(m))
            || (line.contains("connection refused")
                && !["127.0.0.1", "localhost", "::1", "0.0.0.0"]
                    .iter()
                    .any(|local| line.contains(local)))
    })
}

/// What to tell the user when a `role` command whose sandbox had no network failed with
/// `output`: `None` unless the output reads like a network failure.
pub fn network_hint(role: CommandRole, output: &str) -> Option<String> {
    if !looks_like_network_failure(output) {
        return None;
    }
    Some(match role {
        CommandRole::Setup => "this looks like a network failure, and setup commands run \
             without the network: allow it for setup commands only with `--setup-network`, \
             `setup_network = true` under [sandbox] in ~/.config/versus/config.toml, or \
             `setup_network: true` in the recipe's ## Sandbox (the models' own commands stay \
             without it)"
            .to_string(),
        CommandRole::Model | CommandRole::Check => {
            let who = if role == CommandRole::Model {
                "model commands run"
            } else {
                "check and criteria commands run"
            };
            format!(
                "this looks like a network failure, and {who} without the network: \
                 `network = true` under [sandbox] in ~/.config/versus/config.toml or \
                 `network: full` in the recipe's ## Sandbox gives every command the network \
                 (`setup_network` gives it to setup commands only)"
            )
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolver_and_connection_errors_are_network_failures() {
        for output in [
            "curl: (6) Could not resolve host: example.com",
            "npm ERR! code EAI_AGAIN\nnpm ERR! request to https://registry.npmjs.org/x failed",
            "npm ERR! code ENOTFOUND",
            "error: failed to download from `https://index.crates.io/config.json`",
            "[6] Couldn't resolve host name (Could not resolve host: index.crates.io)",
            "pip: Failed to establish a new connection: [Errno -3] Temporary failure in name resolution",
            "connect: Network is unreachable",
            "dial tcp: lookup proxy.golang.org on [::1]:53: read udp",
            "fatal: unable to access 'https://github.com/x/y/': Connection refused to 140.82.121.4",
        ] {
            assert!(looks_like_network_failure(output), "{output}");
            assert!(network_hint(CommandRole::Setup, output).is_some());
        }
    }

    #[test]
    fn other_failures_and_local_refusals_are_not() {
        for output in [
            "error[E0425]: cannot find value `x` in this scope",
            "test result: FAILED. 3 passed; 1 failed",
            "curl: (7) Failed to connect to 127.0.0.1 port 8080: Connection refused",
            "could not connect to server: Connection refused (localhost:5432)",
            "",
        ] {
            assert!(!looks_like_network_failure(output), "{output}");
        }
    }

    #[test]
    fn each_role_names_its_own_switch() {
        let out = "curl: (6) Could not resolve host: example.com";
        let setup = network_hint(CommandRole::Setup, out).unwrap_or_default();
        assert!(setup.contains("--setup-network") && setup.contains("setup_network = true"));
        let model = network_hint(CommandRole::Model, out).unwrap_or_default();
        assert!(model.contains("model commands") && model.contains("network = true"));
        let check = network_hint(CommandRole::Check, out).unwrap_or_default();
        assert!(check.contains("criteria") && check.contains("network: full"));
    }
}
