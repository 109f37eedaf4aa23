//! Prices and context windows: the table shipped in the binary (`prices.toml`, embedded at
//! build time) with `[prices."provider/model"]` overrides from the config files on top.
//!
//! Lookups are tolerant of the names providers give snapshots (`claude-sonnet-4-5-20250929`,
//! `gpt-4.1-2025-04-14`, `gemini-2.5-flash-preview-09-2025`): the exact name is tried first,
//! then the name with a date, `-latest` or `-preview` suffix removed, step by step. A model
//! with no price gives `None`, shown as "unknown" and never as $0: a wrong zero would hide
//! real spending.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::model::Usage;

/// The table shipped in the binary. Same shape as the config file's `[prices]` section.
pub const BUILTIN_PRICES_TOML: &str = include_str!("prices.toml");

/// USD per million tokens for one model.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Price {
    /// Uncached input tokens.
    pub input: f64,
    /// Output tokens (reasoning included).
    pub output: f64,
    /// Input tokens read from the prompt cache.
    pub cache_read: f64,
    /// Input tokens written to the prompt cache.
    pub cache_write: f64,
}

impl Price {
    /// Demo and local models: known to cost nothing.
    pub const FREE: Price = Price {
        input: 0.0,
        output: 0.0,
        cache_read: 0.0,
        cache_write: 0.0,
    };

    /// Cost in USD of this usage. Reasoning tokens are not charged again: providers count
    /// them in `output` already (see [`Usage`]).
    pub fn cost(&self, usage: &Usage) -> f64 {
        let per_million = usage.input as f64 * self.input
            + usage.output as f64 * self.output
            + usage.cache_read as f64 * self.cache_read
            + usage.cache_write as f64 * self.cache_write;
        per_million / 1_000_000.0
    }

    /// Whether every rate is zero.
    pub fn is_free(&self) -> bool {
        *self == Price::FREE
    }
}

/// One `[prices."provider/model"]` block: every field optional so a config entry can change
/// one rate of a built-in price. Cache rates left out cost the input rate.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PriceEntry {
    /// USD per million uncached input tokens.
    pub input: Option<f64>,
    /// USD per million output tokens.
    pub output: Option<f64>,
    /// USD per million cache-read tokens (default: `input`).
    pub cache_read: Option<f64>,
    /// USD per million cache-write tokens (default: `input`).
    pub cache_write: Option<f64>,
    /// Context window in tokens.
    pub context_window: Option<u64>,
    /// Whether the model accepts images (see [`crate::config::vision`]); `None`: decided by
    /// the provider's setting or the model's name.
    pub vision: Option<bool>,
}

impl PriceEntry {
    /// `self` with the fields `top` sets replaced.
    pub(crate) fn overlaid(&self, top: &PriceEntry) -> PriceEntry {
        PriceEntry {
            input: top.input.or(self.input),
            output: top.output.or(self.output),
            cache_read: top.cache_read.or(self.cache_read),
            cache_write: top.cache_write.or(self.cache_write),
            context_window: top.context_window.or(self.context_window),
            vision: top.vision.or(self.vision),
        }
    }

    /// The price, when input and output rates are both known.
    pub fn price(&self) -> Option<Price> {
        let input = self.input?;
        let output = self.output?;
        Some(Price {
            input,
            output,
            cache_read: self.cache_read.unwrap_or(input),
            cache_write: self.cache_write.unwrap_or(input),
        })
    }

    /// The first field that is negative or not a number, for error messages.
    pub fn invalid_field(&self) -> Option<&'static str> {
        let fields = [
            ("input", self.input),
            ("output", self.output),
            ("cache_read", self.cache_read),
            ("cache_write", self.cache_write),
        ];
        fields
            .into_iter()
            .find(|(_, v)| v.is_some_and(|v| !v.is_finite() || v < 0.0))
            .map(|(name, _)| name)
    }
}

/// What is known about a model: its price and context window, each possibly unknown.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ModelInfo {
    /// USD per million tokens; `None` is "unknown", never zero.
    pub price: Option<Price>,
    /// Context window in tokens.
    pub context_window: Option<u64>,
    /// Whether it accepts images, when a price entry says so.
    pub vision: Option<bool>,
}

/// The built-in table could not be read (a bug in versus; the unit tests catch it).
#[derive(Debug, Clone, thiserror::Error)]
#[error("the built-in price table is invalid ({0}); this is a bug in versus: please report it")]
pub struct BuiltinTableError(pub String);

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BuiltinFile {
    checked: String,
    prices: BTreeMap<String, PriceEntry>,
}

/// Built-in prices with config overrides on top.
#[derive(Debug, Clone, Default)]
pub struct PriceTable {
    builtin: BTreeMap<String, PriceEntry>,
    overrides: BTreeMap<String, PriceEntry>,
    checked: String,
}

impl PriceTable {
    /// The table shipped in the binary, without overrides.
    pub fn builtin() -> Result<PriceTable, BuiltinTableError> {
        let file: BuiltinFile = toml::from_str(BUILTIN_PRICES_TOML)
            .map_err(|err| BuiltinTableError(err.message().to_string()))?;
        for (key, entry) in &file.prices {
            if !key.contains('/') || entry.price().is_none() || entry.invalid_field().is_some() {
                return Err(BuiltinTableError(format!("entry `{key}` is incomplete")));
            }
        }
        Ok(PriceTable {
            builtin: file.prices,
            overrides: BTreeMap::new(),
            checked: file.checked,
        })
    }

    /// When the built-in prices were last checked against the providers' pages.
    pub fn checked(&self) -> &str {
        &self.checked
    }

    /// Adds (or replaces) an override for `provider/model`.
    pub fn set_override(&mut self, key: &str, entry: PriceEntry) {
        self.overrides.insert(key.to_string(), entry);
    }

    /// Whether the built-in table has an entry matching `provider/model` (tolerantly).
    pub fn has_builtin(&self, provider: &str, model: &str) -> bool {
        find(&self.builtin, provider, model).is_some()
    }

    /// Price and context window of `provider/model`: override fields over built-in ones, each
    /// found by the exact name or a snapshot-suffix-stripped one. OpenRouter's `:free` variants
    /// cost nothing.
    pub fn lookup(&self, provider: &str, model: &str) -> ModelInfo {
        let builtin = find(&self.builtin, provider, model);
        let over = find(&self.overrides, provider, model);
        let merged = match (builtin, over) {
            (Some(b), Some(o)) => b.overlaid(o),
            (Some(b), None) => b.clone(),
            (None, Some(o)) => o.clone(),
            (None, None) if model.ends_with(":free") => {
                return ModelInfo {
                    price: Some(Price::FREE),
                    context_window: None,
                    vision: None,
                };
            }
            (None, None) => return ModelInfo::default(),
        };
        ModelInfo {
            price: merged.price(),
            context_window: merged.context_window,
            vision: merged.vision,
        }
    }

    /// Every `provider/model` with an entry (built in or configured), sorted, with its info.
    pub fn entries(&self) -> Vec<(String, ModelInfo)> {
        let mut keys: Vec<&String> = self.builtin.keys().chain(self.overrides.keys()).collect();
        keys.sort();
        keys.dedup();
        keys.into_iter()
            .filter_map(|key| {
                let (provider, model) = key.split_once('/')?;
                Some((key.clone(), self.lookup(provider, model)))
            })
            .collect()
    }
}

fn find<'a>(
    table: &'a BTreeMap<String, PriceEntry>,
    provider: &str,
    model: &str,
) -> Option<&'a PriceEntry> {
    let mut names = name_candidates(model);
    if provider == "bedrock"
        && let Some(base) = bedrock_base_id(model)
    {
        // A cross-region inference profile costs what its model costs.
        names.extend(name_candidates(base));
    }
    names
        .into_iter()
        .find_map(|name| table.get(&format!("{provider}/{name}")))
}

/// A Bedrock inference profile's model id (`us.anthropic.claude-...` -> `anthropic.claude-...`).
fn bedrock_base_id(model: &str) -> Option<&str> {
    [
        "us.", "eu.", "apac.", "jp.", "au.", "ca.", "us-gov.", "global.",
    ]
    .iter()
    .find_map(|geo| model.strip_prefix(geo))
}

/// The names to try for a model, most specific first: the name itself, then with trailing
/// snapshot markers removed one at a time (`-20250929`, `-2025-04-14`, `-09-2025`, `-05-06`,
/// `@20250929`, `-latest`, `-preview`).
pub fn name_candidates(model: &str) -> Vec<String> {
    let mut out = vec![model.to_string()];
    let mut current = model;
    while let Some(shorter) = strip_snapshot_suffix(current) {
        out.push(shorter.to_string());
        current = shorter;
    }
    out
}

fn strip_snapshot_suffix(name: &str) -> Option<&str> {
    for word in ["-latest", "-preview", "@latest"] {
        if let Some(rest) = name.strip_suffix(word).filter(|r| !r.is_empty()) {
            return Some(rest);
        }
    }
    // Digit groups separated by `-` (or one group after `@`) at the end of the name.
    let shapes: [(&[usize], char); 5] = [
        (&[4, 2, 2], '-'), // -2025-04-14
        (&[8], '-'),       // -20250929
        (&[8], '@'),       // @20250929 (Vertex style)
        (&[2, 4], '-'),    // -09-2025
        (&[2, 2], '-'),    // -05-06
    ];
    shapes
        .into_iter()
        .find_map(|(groups, lead)| strip_digit_groups(name, groups, lead))
}

fn strip_digit_groups<'a>(name: &'a str, groups: &[usize], lead: char) -> Option<&'a str> {
    let tail_len = groups.iter().sum::<usize>() + groups.len();
    let split = name.len().checked_sub(tail_len)?;
    let (rest, tail) = (name.get(..split)?, name.get(split..)?);
    let mut tail = tail.strip_prefix(lead)?;
    for (i, &len) in groups.iter().enumerate() {
        if i > 0 {
            tail = tail.strip_prefix('-')?;
        }
        let (digits, after) = (tail.get(..len)?, tail.get(len..)?);
        if !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        tail = after;
    }
    (!rest.is_empty() && tail.is_empty()).then_some(rest)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn table() -> PriceTable {
        PriceTable::builtin().unwrap()
    }

    #[test]
    fn builtin_table_parses_and_covers_each_provider() {
        let t = table();
        assert!(!t.checked().is_empty());
        for spec in [
            "openai/gpt-5",
            "openai/gpt-5-mini",
            "openai/gpt-4.1",
            "openai/o3",
            "openai/o4-mini",
            "anthropic/claude-opus-4-5",
            "anthropic/claude-sonnet-4-5",
            "anthropic/claude-haiku-4-5",
            "gemini/gemini-2.5-pro",
            "gemini/gemini-2.5-flash",
            "gemini/gemini-2.5-flash-lite",
            "gemini/gemini-3-pro-preview",
            "openrouter/anthropic/claude-sonnet-4.5",
        ] {
            let (p, m) = spec.split_once('/').unwrap();
            let info = t.lookup(p, m);
            let price = info.price.unwrap_or_else(|| panic!("{spec} has no price"));
            assert!(price.input > 0.0 && price.output > price.input, "{spec}");
            assert!(
                info.context_window.is_some(),
                "{spec} has no context window"
            );
        }
    }

    #[test]
    fn dated_snapshots_find_their_family() {
        let t = table();
        let plain = t.lookup("anthropic", "claude-sonnet-4-5");
        assert_eq!(t.lookup("anthropic", "claude-sonnet-4-5-20250929"), plain);
        assert_eq!(t.lookup("anthropic", "claude-sonnet-4-5@20250929"), plain);
        assert_eq!(
            t.lookup("openai", "gpt-4.1-2025-04-14"),
            t.lookup("openai", "gpt-4.1")
        );
        assert_eq!(
            t.lookup("gemini", "gemini-2.5-flash-preview-09-2025"),
            t.lookup("gemini", "gemini-2.5-flash")
        );
        assert_eq!(
            t.lookup("gemini", "gemini-2.5-pro-preview-05-06"),
            t.lookup("gemini", "gemini-2.5-pro")
        );
    }

    #[test]
    fn suffix_stripping_never_eats_version_numbers() {
        assert_eq!(
            name_candidates("claude-sonnet-4-5"),
            vec!["claude-sonnet-4-5"]
        );
        assert_eq!(name_candidates("gpt-5"), vec!["gpt-5"]);
        assert_eq!(name_candidates("-20250929"), vec!["-20250929"]);
        assert_eq!(
            name_candidates("gemini-2.5-flash-lite-preview-09-2025"),
            vec![
                "gemini-2.5-flash-lite-preview-09-2025",
                "gemini-2.5-flash-lite-preview",
                "gemini-2.5-flash-lite"
            ]
        );
    }

    #[test]
    fn unknown_models_have_no_price_rather_than_zero() {
        let t = table();
        assert_eq!(t.lookup("openai", "gpt-9-imaginary"), ModelInfo::default());
        // A model of one provider is not priced under another.
        assert_eq!(t.lookup("anthropic", "gpt-5").price, None);
    }

    #[test]
    fn openrouter_free_variants_cost_nothing() {
        let info = table().lookup("openrouter", "meta-llama/llama-3.3-70b-instruct:free");
        assert_eq!(info.price, Some(Price::FREE));
    }

    #[test]
    fn overrides_replace_only_the_fields_they_set() {
        let mut t = table();
        let before = t.lookup("openai", "gpt-5");
        t.set_override(
            "openai/gpt-5",
            PriceEntry {
                input: Some(2.0),
                ..PriceEntry::default()
            },
        );
        let after = t.lookup("openai", "gpt-5-2025-08-07");
        let (b, a) = (before.price.unwrap(), after.price.unwrap());
        assert_eq!(a.input, 2.0);
        assert_eq!(a.output, b.output);
        assert_eq!(a.cache_read, b.cache_read);
        assert_eq!(after.context_window, before.context_window);
    }

    #[test]
    fn overrides_add_new_models_and_cache_rates_default_to_input() {
        let mut t = table();
        t.set_override(
            "local/my-model",
            PriceEntry {
                input: Some(0.5),
                output: Some(1.5),
                context_window: Some(32_768),
                ..PriceEntry::default()
            },
        );
        let info = t.lookup("local", "my-model");
        let price = info.price.unwrap();
        assert_eq!((price.cache_read, price.cache_write), (0.5, 0.5));
        assert_eq!(info.context_window, Some(32_768));
        assert!(t.entries().iter().any(|(k, _)| k == "local/my-model"));
    }

    #[test]
    fn cost_adds_every_token_class_and_ignores_reasoning() {
        let price = Price {
            input: 3.0,
            output: 15.0,
            cache_read: 0.3,
            cache_write: 3.75,
        };
        let usage = Usage {
            input: 1_000_000,
            output: 100_000,
            cache_read: 2_000_000,
            cache_write: 400_000,
            reasoning: 50_000,
            unreported: 0,
        };
        let cost = price.cost(&usage);
        assert!((cost - (3.0 + 1.5 + 0.6 + 1.5)).abs() < 1e-9, "{cost}");
        assert_eq!(Price::FREE.cost(&usage), 0.0);
        assert!(Price::FREE.is_free() && !price.is_free());
    }

    #[test]
    fn invalid_fields_are_reported_by_name() {
        let entry = PriceEntry {
            output: Some(-1.0),
            ..PriceEntry::default()
        };
        assert_eq!(entry.invalid_field(), Some("output"));
        assert_eq!(PriceEntry::default().invalid_field(), None);
    }
}
