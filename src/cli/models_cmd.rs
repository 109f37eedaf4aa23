//! `versus models [--json]`: what versus can talk to right now: providers (API kind, base
//! URL, whether the key is set, never its value), known models with prices and context
//! windows, the configured default models, and which config files were read.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use serde_json::{Value, json};

use versus::config::remote::{self, Listing};
use versus::config::{
    self, BaseSource, Config, DefaultsFrom, Env, KeySource, KeyStatus, KnownModel, Price,
    ProviderDef,
};

/// Arguments of `versus models`.
#[derive(Debug, Args)]
pub struct ModelsArgs {
    /// Print one JSON object instead of tables (stable field names, for scripts and jq).
    #[arg(long)]
    pub json: bool,
    /// Ask every configured provider which models it offers now (all at once, each within
    /// --timeout), list them and keep them in the cache the interface reads.
    #[arg(long)]
    pub remote: bool,
    /// With --remote: seconds each provider has to answer.
    #[arg(long, value_name = "SECS", default_value_t = 5, requires = "remote")]
    pub timeout: u64,
}

/// Loads the configuration of the project and prints the overview.
pub fn run(
    args: ModelsArgs,
    project: Option<PathBuf>,
    config_file: Option<PathBuf>,
    trust: bool,
) -> anyhow::Result<ExitCode> {
    let dir = match project {
        Some(dir) => dir,
        None => std::env::current_dir().context("reading the current directory")?,
    };
    let (config, env) = config::load(&dir, config_file.as_deref(), trust)?;
    super::print_config_notices(&config, &env);
    if args.remote {
        return remote(&args, config, env);
    }
    let text = if args.json {
        let mut text = serde_json::to_string_pretty(&overview_json(&config, &env))?;
        text.push('\n');
        text
    } else {
        overview_text(&config, &env)
    };
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        // `versus models | head` closes the pipe early: not an error worth reporting.
        Err(err) if err.kind() != std::io::ErrorKind::BrokenPipe => Err(err.into()),
        _ => Ok(ExitCode::SUCCESS),
    }
}

/// `versus models --remote`: every provider asked at once, each within `--timeout`; the lists
/// fetched are kept in the cache; one line per provider that gave none, saying why.
fn remote(args: &ModelsArgs, config: Config, env: Env) -> anyhow::Result<ExitCode> {
    let timeout = Duration::from_secs(args.timeout.max(1));
    let http = versus::provider::http::default_client()?;
    let runtime = super::runtime()?;
    let (config, env, listings) = super::on_runtime_value(&runtime, async move {
        let listings = remote::fetch_all(&config, &env, &http, timeout).await;
        (config, env, listings)
    })?;
    if let Some(path) = remote::cache_path() {
        let mut cache = remote::ModelCache::load(&path);
        cache.update(&config, &env, &listings);
        if let Err(err) = cache.save(&path) {
            let _ = writeln!(
                versus::sanitize::stderr(),
                "versus: could not keep the model lists in {}: {err}",
                path.display()
            );
        }
    }
    let text = if args.json {
        let providers: Vec<Value> = listings.iter().map(listing_json).collect();
        let mut text = versus::sanitize::json::to_string_pretty(&json!({ "remote": providers }))?;
        text.push('\n');
        text
    } else {
        remote_text(&listings, timeout)
    };
    let mut out = versus::sanitize::stdout();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(err) if err.kind() != std::io::ErrorKind::BrokenPipe => Err(err.into()),
        _ => Ok(ExitCode::SUCCESS),
    }
}

fn listing_json(listing: &remote::ProviderListing) -> Value {
    let (status, models, error) = match &listing.listing {
        Listing::Models(models) => ("ok", models.clone(), None),
        Listing::TimedOut(after) => (
            "timed_out",
            Vec::new(),
            Some(format!("no answer within {}s", after.as_secs())),
        ),
        Listing::Failed(why) => ("failed", Vec::new(), Some(why.clone())),
        Listing::NoKey(hint) => ("no_key", Vec::new(), Some(format!("set {hint}"))),
        Listing::NotListable => ("offline", Vec::new(), None),
    };
    json!({"provider": listing.provider, "status": status, "models": models, "error": error})
}

fn remote_text(listings: &[remote::ProviderListing], timeout: Duration) -> String {
    let mut out = format!(
        "Models each provider offers now (asked at once, {}s each)\n",
        timeout.as_secs()
    );
    for listing in listings {
        let name = &listing.provider;
        match &listing.listing {
            Listing::Models(models) => {
                let s = if models.len() == 1 { "" } else { "s" };
                out.push_str(&format!("\n{name}: {} model{s}\n", models.len()));
                for model in models {
                    out.push_str(&format!("  {name}/{model}\n"));
                }
            }
            Listing::TimedOut(after) => out.push_str(&format!(
                "\n{name}: timed out: no answer within {}s (try again, or a longer --timeout)\n",
                after.as_secs()
            )),
            Listing::Failed(why) => out.push_str(&format!("\n{name}: failed: {why}\n")),
            Listing::NoKey(hint) => {
                out.push_str(&format!("\n{name}: not asked: no key (set {hint})\n"))
            }
            Listing::NotListable => {}
        }
    }
    out
}

/// `set`, `missing` or `not needed`, plus where a set key came from (never the key). Vertex
/// has no key but credentials: `set` with the file they were found in, or `missing`.
fn key_words(def: &ProviderDef, env: &Env) -> (&'static str, Option<String>) {
    if def.kind == config::ApiKind::Vertex {
        let status = vertex_credentials(env);
        return if status.usable() {
            ("set", Some(status.describe()))
        } else {
            ("missing", Some(status.describe()))
        };
    }
    if def.kind == config::ApiKind::Bedrock {
        return match bedrock_credentials(def, env) {
            Ok(source) => ("set", Some(source)),
            Err(missing) => ("missing", Some(missing)),
        };
    }
    match def.key_status(env) {
        KeyStatus::NotNeeded => ("not needed", None),
        KeyStatus::Missing => ("missing", None),
        KeyStatus::Set(KeySource::Var { name, dotenv }) => (
            "set",
            Some(if dotenv {
                format!("{name} (.env)")
            } else {
                name
            }),
        ),
        KeyStatus::Set(KeySource::Config(origin)) => ("set", Some(format!("api_key in {origin}"))),
    }
}

/// The Google credentials Vertex would use under `env`.
fn vertex_credentials(env: &Env) -> versus::provider::vertex::auth::CredentialStatus {
    versus::provider::vertex::auth::credential_status(|var| env.non_empty(var).map(str::to_string))
}

/// Where Bedrock's credentials would come from under `env` (nothing run or fetched).
fn bedrock_credentials(def: &ProviderDef, env: &Env) -> Result<String, String> {
    use versus::provider::bedrock::credentials::{AWS_VARS, AwsEnv, describe};
    let aws = AwsEnv::from_pairs(
        AWS_VARS
            .iter()
            .filter_map(|name| Some((*name, env.non_empty(name)?))),
    );
    describe(&aws, &def.bedrock)
}

/// A URL for display: user:password@ parts hidden.
fn display_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let host_end = rest.find('/').unwrap_or(rest.len());
    match rest[..host_end].rfind('@') {
        Some(at) => format!("{scheme}://***@{}", &rest[at + 1..]),
        None => url.to_string(),
    }
}

fn base_words(def: &ProviderDef, env: &Env) -> (Option<String>, String) {
    match def.base_url(env) {
        None => (None, "none".to_string()),
        Some(base) => {
            let source = match base.source {
                BaseSource::Default => "default".to_string(),
                BaseSource::Env(var) => format!("env:{var}"),
                BaseSource::Config(origin) => format!("config:{origin}"),
            };
            (Some(display_url(&base.url)), source)
        }
    }
}

fn price_json(price: Option<Price>) -> Value {
    match price {
        Some(p) => json!({
            "input": p.input,
            "output": p.output,
            "cache_read": p.cache_read,
            "cache_write": p.cache_write,
        }),
        None => Value::Null,
    }
}

fn overview_json(config: &Config, env: &Env) -> Value {
    let providers: Vec<Value> = config
        .providers()
        .iter()
        .map(|def| {
            let (key, key_source) = key_words(def, env);
            let (base_url, base_url_source) = base_words(def, env);
            json!({
                "name": def.name,
                "kind": def.kind.as_str(),
                "builtin": def.builtin,
                "base_url": base_url,
                "base_url_source": base_url_source,
                "key_vars": def.key_vars,
                "key": key.replace(' ', "_"),
                "key_source": key_source,
                "headers": def.headers.iter().map(|(name, _)| name).collect::<Vec<_>>(),
                "models": def.models,
            })
        })
        .collect();
    let models: Vec<Value> = config
        .known_models()
        .iter()
        .map(|known| {
            json!({
                "spec": known.spec.to_string(),
                "provider": known.spec.provider,
                "model": known.spec.model,
                "price": price_json(known.info.price),
                "free": known.info.price.is_some_and(|p| p.is_free()),
                "context_window": known.info.context_window,
            })
        })
        .collect();
    json!({
        "providers": providers,
        "models": models,
        "default_models": config.default_models.iter().map(ToString::to_string).collect::<Vec<_>>(),
        "models_without_flags": models_without_flags(config, env),
        "config_files": config.files,
        "prices_checked": config.prices.checked(),
    })
}

/// What runs when no model is named: the specs and whether they came from the config's
/// `models`, the keys set (with each key's variable), or nothing.
fn models_without_flags(config: &Config, env: &Env) -> Value {
    let defaults = config.default_models_for(env);
    let specs: Vec<String> = defaults.specs.iter().map(ToString::to_string).collect();
    let (from, keys) = match &defaults.from {
        DefaultsFrom::Config => ("config", Vec::new()),
        DefaultsFrom::Keys(picked) => ("keys", picked.iter().map(|(_, k)| k.clone()).collect()),
        DefaultsFrom::Nothing => ("nothing", Vec::new()),
    };
    json!({"specs": specs, "from": from, "keys": keys})
}

/// Left-aligned columns separated by two spaces; `right` marks right-aligned columns.
fn table(rows: &[Vec<String>], right: &[usize]) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|cell| cell.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let mut line = String::from(" ");
        for (c, cell) in row.iter().enumerate() {
            let pad = widths[c].saturating_sub(cell.chars().count());
            line.push(' ');
            if right.contains(&c) {
                line.push_str(&" ".repeat(pad));
                line.push_str(cell);
            } else {
                line.push_str(cell);
                line.push_str(&" ".repeat(pad));
            }
            line.push(' ');
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// `1.25`, `10.00`, `0.125`: two decimals at least, more when the price has them.
fn money(value: f64) -> String {
    let text = format!("{value:.4}");
    let trimmed = text.trim_end_matches('0');
    match trimmed.split_once('.') {
        Some((_, decimals)) if decimals.len() >= 2 => trimmed.to_string(),
        _ => format!("{value:.2}"),
    }
}

fn tokens(window: Option<u64>) -> String {
    match window {
        None => "?".to_string(),
        Some(n) if n >= 1_000_000 => {
            let text = format!("{:.2}", n as f64 / 1_000_000.0);
            format!("{}M", text.trim_end_matches('0').trim_end_matches('.'))
        }
        Some(n) if n >= 1_000 => format!("{}K", (n + 500) / 1_000),
        Some(n) => n.to_string(),
    }
}

fn model_row(known: &KnownModel) -> Vec<String> {
    let mut row = vec![known.spec.to_string()];
    match known.info.price {
        Some(p) if p.is_free() => row.extend([
            "free".to_string(),
            String::new(),
            String::new(),
            String::new(),
        ]),
        Some(p) => row.extend([
            money(p.input),
            money(p.output),
            money(p.cache_read),
            money(p.cache_write),
        ]),
        None => row.extend([
            "unknown".to_string(),
            String::new(),
            String::new(),
            String::new(),
        ]),
    }
    row.push(tokens(known.info.context_window));
    row
}

fn overview_text(config: &Config, env: &Env) -> String {
    let mut out = String::from("Providers\n");
    let mut rows = vec![vec![
        "NAME".to_string(),
        "API".to_string(),
        "BASE URL".to_string(),
        "KEY".to_string(),
    ]];
    for def in config.providers() {
        let (key, source) = key_words(def, env);
        let key_cell = match (def.needs_key, source) {
            _ if def.kind == config::ApiKind::Vertex => vertex_credentials(env).describe(),
            _ if def.kind == config::ApiKind::Bedrock => {
                bedrock_credentials(def, env).unwrap_or_else(|missing| missing)
            }
            (false, _) => "not needed".to_string(),
            (true, Some(source)) => format!("{source}: {key}"),
            (true, None) => format!("{}: {key}", def.key_hint()),
        };
        let (base, base_source) = base_words(def, env);
        let base_cell = match base {
            None => "(offline, built in)".to_string(),
            Some(url) if base_source == "default" => url,
            Some(url) => format!("{url} ({base_source})"),
        };
        rows.push(vec![
            def.name.clone(),
            def.kind.as_str().to_string(),
            base_cell,
            key_cell,
        ]);
    }
    out.push_str(&table(&rows, &[]));

    out.push_str("\nModels (USD per million tokens)\n");
    let mut rows = vec![vec![
        "MODEL".to_string(),
        "INPUT".to_string(),
        "OUTPUT".to_string(),
        "CACHE READ".to_string(),
        "CACHE WRITE".to_string(),
        "CONTEXT".to_string(),
    ]];
    rows.extend(config.known_models().iter().map(model_row));
    out.push_str(&table(&rows, &[1, 2, 3, 4, 5]));
    out.push_str("  Other models of these providers work too: ollama and demo models are free, the rest show\n  their price as unknown until a [prices] entry gives it.\n");

    out.push_str("\nDefault models: ");
    let defaults = config.default_models_for(env);
    match &defaults.from {
        DefaultsFrom::Nothing => out.push_str(
            "none (pass -m PROVIDER/MODEL, set a provider's key, or set models = [...] in the config file)\n",
        ),
        DefaultsFrom::Config => {
            let labels: Vec<String> = defaults.specs.iter().map(ToString::to_string).collect();
            out.push_str(&labels.join(", "));
            out.push('\n');
        }
        DefaultsFrom::Keys(picked) => {
            let labels: Vec<String> = picked
                .iter()
                .map(|(spec, key)| format!("{spec} ({key})"))
                .collect();
            out.push_str(&labels.join(", "));
            out.push_str(" (one per key set; no models = [...] in the config)\n");
        }
    }
    out.push_str("Config files:\n");
    for file in &config.files {
        let state = if file.loaded { "loaded" } else { "not found" };
        out.push_str(&format!("  {} ({state})\n", file.path.display()));
    }
    if let Some(path) = env.dotenv_path() {
        out.push_str(&format!("  {} (.env, read)\n", path.display()));
    }
    out.push_str(&format!(
        "Built-in prices checked {}; change them with [prices.\"provider/model\"] in a config file.\n",
        config.prices.checked()
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn money_keeps_significant_decimals() {
        assert_eq!(money(1.25), "1.25");
        assert_eq!(money(10.0), "10.00");
        assert_eq!(money(0.125), "0.125");
        assert_eq!(money(0.005), "0.005");
    }

    #[test]
    fn token_counts_are_short() {
        assert_eq!(tokens(Some(400_000)), "400K");
        assert_eq!(tokens(Some(1_048_576)), "1.05M");
        assert_eq!(tokens(Some(1_000_000)), "1M");
        assert_eq!(tokens(Some(131_072)), "131K");
        assert_eq!(tokens(None), "?");
    }

    #[test]
    fn urls_hide_credentials() {
        assert_eq!(display_url("https://u:p@host/v1"), "https://***@host/v1");
        assert_eq!(
            display_url("http://127.0.0.1:8000/v1"),
            "http://127.0.0.1:8000/v1"
        );
    }
}
