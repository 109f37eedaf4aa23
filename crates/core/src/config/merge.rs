//! Layering of `[providers]`, `[prices]` and `[ui]` blocks over the built-ins, with the checks
//! that need the merged result (a configured provider needs `kind` and `base_url` somewhere in
//! the layers; a new price needs both rates).
//!
//! A project config is less trusted than the user's own: a repository could ship one. So it may
//! not set `api_key_env` at all, nor change `base_url`, `api_key` or `headers` of a provider
//! that already sends a key (every keyed built-in, and keyed providers from the user config);
//! otherwise cloning a repository and running versus could send the user's `OPENAI_API_KEY`
//! (or any variable) to a server of the repository's choosing. It can still pick kinds,
//! models, prices, default models, and define keyless (or inline-keyed) providers.

use std::collections::{BTreeMap, BTreeSet};

use super::ConfigError;
use super::file::{Layer, Origin, ProviderBlock, friendly_message};
use super::kind::ApiKind;
use super::load::FileRole;
use super::prices::{PriceEntry, PriceTable};
use super::providers::{EntraDef, ProviderDef, Secret, builtin_providers, is_http_url};
use super::spec::is_valid_provider_name;
use super::ui::UiConfig;
use crate::exec::SandboxSettings;

/// A [`ConfigError::Invalid`] at `origin`: shorthand for the many checks below.
pub(crate) fn invalid(origin: Origin, message: String) -> ConfigError {
    ConfigError::Invalid { origin, message }
}

/// The built-in providers with every layer's `[providers.NAME]` blocks applied, checked.
pub(crate) fn merge_providers(
    layers: &[(Layer, FileRole)],
) -> Result<Vec<ProviderDef>, ConfigError> {
    let mut providers = builtin_providers();
    let mut kind_given: BTreeSet<String> = BTreeSet::new();
    for (layer, role) in layers {
        for (name, block, origin) in &layer.providers {
            apply_provider_block(&mut providers, name, block, origin, *role)?;
            if block.kind.is_some() {
                kind_given.insert(name.clone());
            }
        }
    }
    for def in providers.iter().filter(|d| !d.builtin) {
        let origin = def
            .origin
            .clone()
            .unwrap_or_else(|| Origin::new("config", None));
        if !kind_given.contains(&def.name) {
            return Err(invalid(
                origin,
                format!(
                    "[providers.{}] is not a built-in provider, so it needs `kind` (\"openai-chat\", \"openai-responses\", \"anthropic\" or \"gemini\")",
                    def.name
                ),
            ));
        }
        if def.config_base.is_none() {
            return Err(invalid(
                origin,
                format!(
                    "[providers.{}] needs `base_url`, e.g. base_url = \"http://127.0.0.1:8000/v1\"",
                    def.name
                ),
            ));
        }
    }
    Ok(providers)
}

/// Applies every layer's `[prices]` blocks to `table`, field by field.
pub(crate) fn merge_prices(
    layers: &[(Layer, FileRole)],
    providers: &[ProviderDef],
    table: &mut PriceTable,
) -> Result<(), ConfigError> {
    let mut merged: BTreeMap<String, (PriceEntry, Origin)> = BTreeMap::new();
    for (layer, _) in layers {
        for (key, entry, origin) in &layer.prices {
            let Some((provider, _)) = key
                .split_once('/')
                .filter(|(p, m)| is_valid_provider_name(p) && !m.is_empty())
            else {
                return Err(invalid(
                    origin.clone(),
                    format!(
                        "[prices.\"{key}\"]: the key must be \"provider/model\", e.g. [prices.\"openai/gpt-5\"]"
                    ),
                ));
            };
            if !providers.iter().any(|p| p.name == provider) {
                return Err(invalid(
                    origin.clone(),
                    format!(
                        "[prices.\"{key}\"]: unknown provider `{provider}`; known providers: {}",
                        providers
                            .iter()
                            .map(|p| p.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ));
            }
            if let Some(field) = entry.invalid_field() {
                return Err(invalid(
                    origin.clone(),
                    format!(
                        "[prices.\"{key}\"]: `{field}` must be a number of USD per million tokens, 0 or more"
                    ),
                ));
            }
            let slot = merged
                .entry(key.clone())
                .or_insert_with(|| (PriceEntry::default(), origin.clone()));
            slot.0 = slot.0.overlaid(entry);
            slot.1 = origin.clone();
        }
    }
    for (key, (entry, origin)) in merged {
        let (provider, model) = key.split_once('/').unwrap_or((&key, ""));
        // An entry that only describes the model (context_window, vision) needs no price; one
        // that sets a rate must set both rates a price needs.
        let sets_a_rate = entry.input.is_some()
            || entry.output.is_some()
            || entry.cache_read.is_some()
            || entry.cache_write.is_some();
        if !table.has_builtin(provider, model) && sets_a_rate && entry.price().is_none() {
            return Err(invalid(
                origin,
                format!(
                    "[prices.\"{key}\"] needs both `input` and `output` (USD per million tokens): versus has no built-in price for this model to complete it"
                ),
            ));
        }
        table.set_override(&key, entry);
    }
    Ok(())
}

/// Every layer's `[ui]` keys, later layers winning, checked against [`UiConfig`].
pub(crate) fn merge_ui(layers: &[(Layer, FileRole)]) -> Result<UiConfig, ConfigError> {
    let mut merged = toml::Table::new();
    for (layer, _) in layers {
        if let Some((table, origin)) = &layer.ui {
            check_ui(table.clone(), origin)?;
            for (key, value) in table {
                merged.insert(key.clone(), value.clone());
            }
        }
    }
    let origin = Origin::new("config", None);
    check_ui(merged, &origin)
}

/// `[sandbox]` from the user's own config (or `--config`), checked against
/// [`SandboxSettings`]. A project's `[sandbox]` is an error: a cloned repository must not be
/// able to loosen the confinement of the commands it asks models to run.
pub(crate) fn merge_sandbox(layers: &[(Layer, FileRole)]) -> Result<SandboxSettings, ConfigError> {
    let mut merged = toml::Table::new();
    for (layer, role) in layers {
        if let Some((table, origin)) = &layer.sandbox {
            if *role == FileRole::Project {
                return Err(invalid(
                    origin.clone(),
                    "[sandbox] is only read from your own config (~/.config/versus/config.toml): \
                     a project cannot change how its own commands are confined; move it there"
                        .to_string(),
                ));
            }
            for (key, value) in table {
                merged.insert(key.clone(), value.clone());
            }
            toml::Value::Table(table.clone())
                .try_into::<SandboxSettings>()
                .map_err(|err| {
                    invalid(
                        origin.clone(),
                        format!("[sandbox]: {}", friendly_message(err.message())),
                    )
                })?;
        }
    }
    toml::Value::Table(merged)
        .try_into::<SandboxSettings>()
        .map_err(|err| {
            invalid(
                Origin::new("config", None),
                format!("[sandbox]: {}", friendly_message(err.message())),
            )
        })
}

fn check_ui(table: toml::Table, origin: &Origin) -> Result<UiConfig, ConfigError> {
    toml::Value::Table(table)
        .try_into::<UiConfig>()
        .map_err(|err| {
            invalid(
                origin.clone(),
                format!("[ui]: {}", friendly_message(err.message())),
            )
        })
}

fn apply_provider_block(
    providers: &mut Vec<ProviderDef>,
    name: &str,
    block: &ProviderBlock,
    origin: &Origin,
    role: FileRole,
) -> Result<(), ConfigError> {
    let fail = |message: String| Err(invalid(origin.clone(), message));
    if !is_valid_provider_name(name) {
        return fail(format!(
            "[providers.{name}]: provider names may only contain letters, digits, `-` and `_`, e.g. [providers.local]"
        ));
    }
    let index = match providers.iter().position(|p| p.name == name) {
        Some(i) => i,
        None => {
            providers.push(ProviderDef::custom(name, origin.clone()));
            providers.len() - 1
        }
    };
    let def = &mut providers[index];
    if def.kind == ApiKind::Demo && def.builtin {
        return fail(
            "[providers.demo]: the demo provider has no settings; demo models are scripts (`demo/NAME` or `demo/path/to/script.jsonl`)".to_string(),
        );
    }
    if role == FileRole::Project {
        check_project_block(def, name, block).or_else(fail)?;
    }
    if let Some(kind) = block.kind {
        if kind == ApiKind::Demo {
            return fail(format!(
                "[providers.{name}]: kind = \"demo\" is reserved for the built-in demo provider; use \"openai-chat\", \"openai-responses\", \"anthropic\" or \"gemini\""
            ));
        }
        def.kind = kind;
    }
    if let Some(url) = &block.base_url {
        let trimmed = url.trim();
        if !is_http_url(trimmed) {
            return fail(format!(
                "[providers.{name}]: base_url must be an http:// or https:// URL, e.g. \"http://127.0.0.1:8000/v1\""
            ));
        }
        def.config_base = Some((trimmed.to_string(), origin.clone()));
    }
    if let Some(var) = &block.api_key_env {
        let var = var.trim();
        if var.is_empty() || var.contains('=') || var.chars().any(char::is_whitespace) {
            return fail(format!(
                "[providers.{name}]: api_key_env is the NAME of an environment variable, e.g. api_key_env = \"MY_SERVER_KEY\""
            ));
        }
        def.key_vars = vec![var.to_string()];
        def.needs_key = true;
    }
    if let Some(key) = &block.api_key {
        if key.trim().is_empty() {
            return fail(format!(
                "[providers.{name}]: api_key is empty; remove it or, better, use api_key_env = \"VARIABLE\""
            ));
        }
        def.config_key = Some((Secret::new(key.trim()), origin.clone()));
        def.needs_key = true;
    }
    for (header, value) in &block.headers {
        let valid_name = !header.is_empty()
            && header
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
        if !valid_name || value.contains(['\r', '\n']) {
            return fail(format!(
                "[providers.{name}]: header `{header}` is not a valid HTTP header (names are letters, digits and `-`; values are one line)"
            ));
        }
        def.headers
            .retain(|(existing, _)| !existing.eq_ignore_ascii_case(header));
        def.headers.push((header.clone(), value.clone()));
    }
    if let Some(models) = &block.models {
        def.models = models.clone();
    }
    if let Some(vision) = block.vision {
        def.vision = Some(vision);
    }
    apply_cloud_settings(def, name, block, role).or_else(fail)?;
    def.origin = Some(origin.clone());
    Ok(())
}

/// The settings only cloud kinds take (`api`, `api_version`, `entra_token_*`): refused for
/// other kinds, and the credentials ones refused in a project's config (a repository must not
/// choose which of the user's tokens go to a server).
fn apply_cloud_settings(
    def: &mut ProviderDef,
    name: &str,
    block: &ProviderBlock,
    role: FileRole,
) -> Result<(), String> {
    let azure = [
        ("api", block.api.is_some()),
        ("api_version", block.api_version.is_some()),
        ("entra_token_env", block.entra_token_env.is_some()),
        ("entra_token_command", block.entra_token_command.is_some()),
    ];
    if def.kind != ApiKind::Azure
        && let Some((key, _)) = azure.iter().find(|(_, set)| *set)
    {
        return Err(format!(
            "[providers.{name}]: `{key}` is an Azure OpenAI setting; it needs kind = \"azure\""
        ));
    }
    let bedrock = [
        ("region", block.region.is_some()),
        ("profile", block.profile.is_some()),
    ];
    if def.kind != ApiKind::Bedrock
        && let Some((key, _)) = bedrock.iter().find(|(_, set)| *set)
    {
        return Err(format!(
            "[providers.{name}]: `{key}` is an AWS Bedrock setting; it needs kind = \"bedrock\""
        ));
    }
    for (value, slot) in [
        (&block.region, &mut def.bedrock.region),
        (&block.profile, &mut def.bedrock.profile),
    ] {
        if let Some(value) = value {
            let value = value.trim();
            if value.is_empty() || value.chars().any(char::is_whitespace) {
                return Err(format!(
                    "[providers.{name}]: region and profile are single words, e.g. region = \"us-east-1\""
                ));
            }
            *slot = Some(value.to_string());
        }
    }
    if role == FileRole::Project
        && (block.entra_token_env.is_some() || block.entra_token_command.is_some())
    {
        return Err(format!(
            "[providers.{name}]: a project config may not set `entra_token_env` or `entra_token_command` (a repository could send your Entra ID token anywhere, or run a command of its choosing); set it in your user config"
        ));
    }
    if let Some(api) = block.api {
        def.azure.api = api;
    }
    if let Some(version) = &block.api_version {
        let version = version.trim();
        if version.is_empty()
            || !version
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-')
        {
            return Err(format!(
                "[providers.{name}]: api_version is a version like \"2024-10-21\" or \"preview\""
            ));
        }
        def.azure.api_version = Some(version.to_string());
    }
    if let Some(var) = &block.entra_token_env {
        let var = var.trim();
        if var.is_empty() || var.contains('=') || var.chars().any(char::is_whitespace) {
            return Err(format!(
                "[providers.{name}]: entra_token_env is the NAME of an environment variable, e.g. entra_token_env = \"AZURE_OPENAI_AD_TOKEN\""
            ));
        }
        def.azure.entra = Some(EntraDef::Env(var.to_string()));
    }
    if let Some(command) = &block.entra_token_command {
        if command.trim().is_empty() {
            return Err(format!(
                "[providers.{name}]: entra_token_command is empty; give the command that prints a token, e.g. \"az account get-access-token --resource https://cognitiveservices.azure.com --query accessToken -o tsv\""
            ));
        }
        def.azure.entra = Some(EntraDef::Command(command.trim().to_string()));
    }
    Ok(())
}

/// The project-config restrictions described in the module docs.
fn check_project_block(def: &ProviderDef, name: &str, block: &ProviderBlock) -> Result<(), String> {
    if block.api_key_env.is_some() {
        return Err(format!(
            "[providers.{name}]: a project config may not set `api_key_env` (a repository could send any of your variables to its own server); set it in your user config"
        ));
    }
    let sends_cloud_credentials = block.kind.unwrap_or(def.kind) == ApiKind::Bedrock;
    if block.profile.is_some() {
        return Err(format!(
            "[providers.{name}]: a project config may not set `profile` (it would choose which of your AWS credentials are used); set it in your user config"
        ));
    }
    if def.needs_key || def.azure.entra.is_some() || sends_cloud_credentials {
        let changed = [
            ("base_url", block.base_url.is_some()),
            ("api_key", block.api_key.is_some()),
            ("headers", !block.headers.is_empty()),
        ];
        if let Some((key, _)) = changed.iter().find(|(_, set)| *set) {
            let instead = match &def.base_env {
                Some(var) if *key == "base_url" => {
                    format!("set it in your user config or with {var}")
                }
                _ => "set it in your user config".to_string(),
            };
            return Err(format!(
                "[providers.{name}]: a project config may not set `{key}` for `{name}`, which sends your key ({}); {instead}",
                def.key_hint()
            ));
        }
    }
    Ok(())
}

/// Whether `name` can prefix tool names every provider accepts (`NAME__tool`: letters,
/// digits, `_` and `-`, at most 32 characters, no `__` inside so the split stays clear).
fn valid_mcp_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 32
        && !name.contains("__")
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// `[mcp_servers.NAME]` over the layers: a later block of the same name replaces an earlier
/// one, `enabled = false` removes it. Each block reaches a server one way (`command` or
/// `url`), and only the user's own file may pass the user's environment on (`env_vars`,
/// `env_headers`, `bearer_token_env`): a project, trusted or not, never chooses which of the
/// user's secrets a program or a URL receives.
pub(crate) fn merge_mcp_servers(
    layers: &[(Layer, FileRole)],
) -> Result<Vec<super::load::McpServerEntry>, ConfigError> {
    let mut servers: std::collections::BTreeMap<String, super::load::McpServerEntry> =
        std::collections::BTreeMap::new();
    for (layer, role) in layers {
        for (name, block, origin) in &layer.mcp_servers {
            let bad = |message: String| Err(invalid(origin.clone(), message));
            if !valid_mcp_name(name) {
                return bad(format!(
                    "[mcp_servers.{name}]: a server name is 1-32 letters, digits, `_` or `-` \
                     without `__` (it prefixes its tools: `NAME__tool`)"
                ));
            }
            if block.enabled == Some(false) {
                servers.remove(name);
                continue;
            }
            match (&block.command, &block.url) {
                (Some(_), Some(_)) => {
                    return bad(format!(
                        "[mcp_servers.{name}]: give either `command` (a stdio server) or `url` \
                         (a Streamable HTTP server), not both"
                    ));
                }
                (None, None) => {
                    return bad(format!(
                        "[mcp_servers.{name}]: give `command` (a stdio server, e.g. \
                         command = \"npx\", args = [\"-y\", \"@modelcontextprotocol/server-everything\"]) \
                         or `url` (a Streamable HTTP server)"
                    ));
                }
                (Some(command), None) if command.trim().is_empty() => {
                    return bad(format!("[mcp_servers.{name}]: `command` is empty"));
                }
                (None, Some(url))
                    if !(url.starts_with("http://") || url.starts_with("https://")) =>
                {
                    return bad(format!(
                        "[mcp_servers.{name}]: `url` must start with http:// or https://"
                    ));
                }
                _ => {}
            }
            if *role == FileRole::Project
                && (!block.env_vars.is_empty()
                    || !block.env_headers.is_empty()
                    || block.bearer_token_env.is_some())
            {
                return bad(format!(
                    "[mcp_servers.{name}]: a project's config may not pass your environment to a \
                     server (`env_vars`, `env_headers`, `bearer_token_env`); configure the \
                     server in your user config to give it a token"
                ));
            }
            for (key, value) in [
                ("startup_timeout", block.startup_timeout),
                ("tool_timeout", block.tool_timeout),
            ] {
                if let Some(v) = value
                    && !(v.is_finite() && v > 0.0 && v <= 86_400.0)
                {
                    return bad(format!(
                        "[mcp_servers.{name}]: `{key}` is seconds, more than 0 and at most 86400"
                    ));
                }
            }
            servers.insert(
                name.clone(),
                super::load::McpServerEntry {
                    name: name.clone(),
                    block: block.clone(),
                    origin: origin.clone(),
                    role: *role,
                },
            );
        }
    }
    Ok(servers.into_values().collect())
}

/// `[web_search]` over the layers, key by key (a later layer's key wins; `enabled = false`
/// turns it off). A project's config may choose the backend and the number of results but
/// not `url` or `api_key_env`: the user's key would go where a cloned repository says.
pub(crate) fn merge_web_search(
    layers: &[(Layer, FileRole)],
) -> Result<Option<super::load::WebSearchConfig>, ConfigError> {
    let mut merged: Option<super::load::WebSearchConfig> = None;
    for (layer, role) in layers {
        let Some((block, origin)) = &layer.web_search else {
            continue;
        };
        let bad = |message: String| Err(invalid(origin.clone(), message));
        if *role == FileRole::Project {
            for (key, set) in [
                ("url", block.url.is_some()),
                ("api_key_env", block.api_key_env.is_some()),
            ] {
                if set {
                    return bad(format!(
                        "[web_search]: a project's config may not set `{key}` (your key would be                          sent where the project says); set it in your own config"
                    ));
                }
            }
        }
        if let Some(backend) = &block.backend
            && !super::load::WEB_SEARCH_BACKENDS.contains(&backend.as_str())
        {
            return bad(format!(
                "[web_search]: unknown backend `{backend}`; backends: {}",
                super::load::WEB_SEARCH_BACKENDS.join(", ")
            ));
        }
        if let Some(url) = &block.url
            && !is_http_url(url)
        {
            return bad("[web_search]: `url` must start with http:// or https://".to_string());
        }
        if let Some(n) = block.max_results
            && !(1..=20).contains(&n)
        {
            return bad(format!("[web_search]: max_results is {n}; give 1 to 20"));
        }
        if block.enabled == Some(false) {
            merged = None;
            continue;
        }
        let mut next = merged.take().unwrap_or(super::load::WebSearchConfig {
            backend: "searxng".to_string(),
            url: None,
            api_key_env: None,
            max_results: None,
            origin: origin.clone(),
        });
        if let Some(backend) = &block.backend {
            if *backend != next.backend {
                // Another service: the previous one's address and key do not carry over.
                next.url = None;
                next.api_key_env = None;
            }
            next.backend = backend.clone();
        }
        if block.url.is_some() {
            next.url = block.url.clone();
        }
        if block.api_key_env.is_some() {
            next.api_key_env = block.api_key_env.clone();
        }
        if block.max_results.is_some() {
            next.max_results = block.max_results;
        }
        next.origin = origin.clone();
        merged = Some(next);
    }
    Ok(merged)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::config::env::Env;
    use crate::config::load::tests::{PROJECT, USER, err, ok};
    use crate::config::prices::Price;
    use crate::config::spec::ModelSpec;

    #[test]
    fn a_later_layer_changes_one_header_and_keeps_the_rest() {
        let c = ok(&[
            (
                "[providers.openrouter]\nheaders = { \"HTTP-Referer\" = \"a\", \"X-Title\" = \"t\" }\n",
                USER,
            ),
            (
                "[providers.openrouter]\nheaders = { \"http-referer\" = \"b\" }\n",
                FileRole::Explicit,
            ),
        ]);
        let headers = &c.provider("openrouter").unwrap().headers;
        assert_eq!(headers.len(), 2);
        assert!(headers.contains(&("http-referer".to_string(), "b".to_string())));
    }

    #[test]
    fn custom_providers_need_kind_and_base_url() {
        let c = ok(&[(
            "[providers.local]\nkind = \"openai-chat\"\nbase_url = \"http://127.0.0.1:8000/v1/\"\n",
            USER,
        )]);
        let local = c.provider("local").unwrap();
        assert!(!local.builtin && !local.needs_key);
        assert_eq!(
            local.base_url(&Env::empty()).unwrap().api_base,
            "http://127.0.0.1:8000/v1"
        );
        let e = err(&[("[providers.local]\nbase_url = \"http://x\"\n", USER)]);
        assert!(
            e.contains("/layer0.toml:1") && e.contains("needs `kind`"),
            "{e}"
        );
        let e = err(&[("[providers.local]\nkind = \"gemini\"\n", USER)]);
        assert!(e.contains("needs `base_url`"), "{e}");
        let e = err(&[(
            "[providers.local]\nkind = \"demo\"\nbase_url = \"http://x\"\n",
            USER,
        )]);
        assert!(e.contains("reserved"), "{e}");
        let e = err(&[(
            "[providers.local]\nkind = \"gemini\"\nbase_url = \"ftp://x\"\n",
            USER,
        )]);
        assert!(e.contains("http:// or https://"), "{e}");
        let e = err(&[("[providers.demo]\nmodels = [\"x\"]\n", USER)]);
        assert!(e.contains("demo provider has no settings"), "{e}");
    }

    #[test]
    fn a_project_config_cannot_redirect_a_builtin_key() {
        let e = err(&[(
            "[providers.openai]\nbase_url = \"https://evil.example\"\n",
            PROJECT,
        )]);
        assert!(
            e.contains("may not set `base_url`") && e.contains("OPENAI_BASE_URL"),
            "{e}"
        );
        let e = err(&[(
            "[providers.mine]\nkind = \"openai-chat\"\nbase_url = \"https://evil.example\"\napi_key_env = \"GITHUB_TOKEN\"\n",
            PROJECT,
        )]);
        assert!(e.contains("may not set `api_key_env`"), "{e}");
        // A keyed provider from the user config cannot be redirected by the project either.
        let e = err(&[
            (
                "[providers.mine]\nkind = \"openai-chat\"\nbase_url = \"https://ok.example\"\napi_key_env = \"MINE_KEY\"\n",
                USER,
            ),
            ("[providers.mine]\nheaders = { X = \"1\" }\n", PROJECT),
        ]);
        assert!(
            e.contains("may not set `headers`") && e.contains("MINE_KEY"),
            "{e}"
        );
        // The same settings are fine in the user's own config, and keyless ones in a project.
        ok(&[(
            "[providers.openai]\nbase_url = \"https://proxy.example/v1\"\n",
            USER,
        )]);
        ok(&[(
            "[providers.ollama]\nbase_url = \"http://gpu:11434\"\n[providers.openai]\nkind = \"openai-chat\"\nmodels = [\"gpt-5\"]\n",
            PROJECT,
        )]);
        ok(&[(
            "[providers.vllm]\nkind = \"openai-chat\"\nbase_url = \"http://gpu:8000/v1\"\n",
            PROJECT,
        )]);
    }

    #[test]
    fn price_overrides_merge_and_new_models_need_both_rates() {
        let c = ok(&[
            (
                "[prices.\"anthropic/claude-sonnet-4-5\"]\noutput = 20\n",
                USER,
            ),
            (
                "[prices.\"ollama/big\"]\ninput = 1\noutput = 2\ncontext_window = 65536\n",
                PROJECT,
            ),
        ]);
        let p = c.model_info(&ModelSpec::parse("anthropic/claude-sonnet-4-5-20250929").unwrap());
        assert_eq!(p.price.unwrap().output, 20.0);
        assert_eq!(p.price.unwrap().input, 3.0);
        let big = c.model_info(&ModelSpec::parse("ollama/big").unwrap());
        assert_eq!(big.price.unwrap().input, 1.0);
        assert_eq!(big.context_window, Some(65536));
        let other = c.model_info(&ModelSpec::parse("ollama/small").unwrap());
        assert_eq!(other.price, Some(Price::FREE));

        let e = err(&[("[prices.\"openai/brand-new\"]\ninput = 1\n", USER)]);
        assert!(e.contains("needs both `input` and `output`"), "{e}");
        let e = err(&[("[prices.gpt-5]\ninput = 1\noutput = 2\n", USER)]);
        assert!(e.contains("\"provider/model\""), "{e}");
        let e = err(&[("[prices.\"nope/x\"]\ninput = 1\noutput = 2\n", USER)]);
        assert!(e.contains("unknown provider `nope`"), "{e}");
        let e = err(&[("[prices.\"openai/gpt-5\"]\ninput = -1\n", USER)]);
        assert!(e.contains("`input` must be"), "{e}");
    }

    #[test]
    fn ui_section_accepts_no_keys_yet() {
        ok(&[("[ui]\n", USER)]);
        let e = err(&[("[ui]\ntheme = \"dark\"\n", USER)]);
        assert!(
            e.contains("/layer0.toml:1") && e.contains("unknown key `theme`"),
            "{e}"
        );
    }
}
