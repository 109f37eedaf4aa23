//! [`ModelSpec`]: `PROVIDER/MODEL[#N]`, the name a user gives a model on the command line, in a
//! recipe or in the config file.
//!
//! Parsing is syntax only, so a spec can be read anywhere (sessions, reports) without a config;
//! whether the provider exists is checked against a [`super::Config`] by
//! [`super::Config::parse_spec`] and again by [`super::resolve`](fn@super::resolve). The provider is everything
//! before the first `/`; the model is the rest, slashes included
//! (`openrouter/meta-llama/llama-3.3-70b-instruct`, `demo/path/to/script.jsonl`).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// One model entry of a run: provider, model name and sample number.
///
/// `#N` makes another sample of the same model (its own workspace, its own answer). Sample 1
/// is the plain spec, so `openai/gpt-5` and `openai/gpt-5#1` are the same entry.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct ModelSpec {
    /// Provider name (`openai`, `ollama`, a `[providers.NAME]` from the config).
    pub provider: String,
    /// Model name as the provider knows it; may contain `/` and `:`.
    pub model: String,
    /// Sample number, 1 for the first (the default).
    pub sample: u32,
}

/// Why a spec could not be read, with an example of the right form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    /// Nothing was given.
    #[error("empty model spec: write PROVIDER/MODEL, e.g. `openai/gpt-5`")]
    Empty,
    /// No `/`: a bare model name.
    #[error("`{spec}` names no provider: write PROVIDER/MODEL, e.g. {}", example(.suggestion, "`openai/gpt-5`"))]
    NoProvider {
        /// The spec as given.
        spec: String,
        /// A full spec with this model name, when one is known.
        suggestion: Option<String>,
    },
    /// `/` with nothing before it.
    #[error("`{spec}` has an empty provider before `/`: write PROVIDER/MODEL, e.g. `openai/gpt-5`")]
    EmptyProvider {
        /// The spec as given.
        spec: String,
    },
    /// `PROVIDER/` with nothing after it.
    #[error("`{spec}` has no model after `/`: write PROVIDER/MODEL, e.g. `{provider}/MODEL`")]
    EmptyModel {
        /// The spec as given.
        spec: String,
        /// The provider part.
        provider: String,
    },
    /// The provider part has characters a provider name cannot have.
    #[error(
        "`{spec}`: provider name `{provider}` may only contain letters, digits, `-` and `_`, e.g. `openai/gpt-5`"
    )]
    BadProviderName {
        /// The spec as given.
        spec: String,
        /// The provider part.
        provider: String,
    },
    /// Spaces or control characters inside the spec.
    #[error("`{spec}` contains whitespace: model specs have none, e.g. `ollama/qwen2.5-coder:7b`")]
    Whitespace {
        /// The spec as given.
        spec: String,
    },
    /// `#` not followed by a positive number.
    #[error(
        "`{spec}`: `#{sample}` is not a sample number; `#N` takes a number from 1, e.g. `openai/gpt-5#2`"
    )]
    BadSample {
        /// The spec as given.
        spec: String,
        /// What followed `#`.
        sample: String,
    },
    /// The provider is neither built in nor defined in the config file.
    #[error(
        "unknown provider `{provider}` in `{spec}`{}; known providers: {}; define others with a [providers.{provider}] block in the config file",
        did_you_mean(.suggestion),
        known.join(", ")
    )]
    UnknownProvider {
        /// The spec as given.
        spec: String,
        /// The provider part.
        provider: String,
        /// Built-in and configured provider names.
        known: Vec<String>,
        /// The closest known name, when one is close.
        suggestion: Option<String>,
    },
}

fn example(suggestion: &Option<String>, fallback: &str) -> String {
    match suggestion {
        Some(s) => format!("`{s}`"),
        None => fallback.to_string(),
    }
}

fn did_you_mean(suggestion: &Option<String>) -> String {
    match suggestion {
        Some(s) => format!(" (did you mean `{s}`?)"),
        None => String::new(),
    }
}

/// Whether `name` can be a provider name (also used for `[providers.NAME]` keys).
pub fn is_valid_provider_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

impl ModelSpec {
    /// Reads `PROVIDER/MODEL[#N]` (syntax only; see [`super::Config::parse_spec`]).
    pub fn parse(text: &str) -> Result<ModelSpec, SpecError> {
        let spec = text.trim();
        if spec.is_empty() {
            return Err(SpecError::Empty);
        }
        let owned = || spec.to_string();
        if spec.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(SpecError::Whitespace { spec: owned() });
        }
        let (body, sample) = match spec.rsplit_once('#') {
            Some((body, n)) => {
                let sample = n.parse::<u32>().ok().filter(|n| *n >= 1).ok_or_else(|| {
                    SpecError::BadSample {
                        spec: owned(),
                        sample: n.to_string(),
                    }
                })?;
                (body, sample)
            }
            None => (spec, 1),
        };
        let Some((provider, model)) = body.split_once('/') else {
            return Err(SpecError::NoProvider {
                spec: owned(),
                suggestion: None,
            });
        };
        if provider.is_empty() {
            return Err(SpecError::EmptyProvider { spec: owned() });
        }
        if !is_valid_provider_name(provider) {
            return Err(SpecError::BadProviderName {
                spec: owned(),
                provider: provider.to_string(),
            });
        }
        if model.is_empty() || model.chars().all(|c| c == '/') {
            return Err(SpecError::EmptyModel {
                spec: owned(),
                provider: provider.to_string(),
            });
        }
        Ok(ModelSpec {
            provider: provider.to_string(),
            model: model.to_string(),
            sample,
        })
    }

    /// `provider/model` without the sample number: what prices, replay tags and "the same
    /// model" comparisons use.
    pub fn base(&self) -> String {
        format!("{}/{}", self.provider, self.model)
    }
}

impl fmt::Display for ModelSpec {
    /// The entry label: `openai/gpt-5`, or `openai/gpt-5#2` for a second sample.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.provider, self.model)?;
        if self.sample > 1 {
            write!(f, "#{}", self.sample)?;
        }
        Ok(())
    }
}

impl FromStr for ModelSpec {
    type Err = SpecError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ModelSpec::parse(s)
    }
}

impl TryFrom<String> for ModelSpec {
    type Error = SpecError;

    fn try_from(value: String) -> Result<Self, Self::Error> {
        ModelSpec::parse(&value)
    }
}

impl From<ModelSpec> for String {
    fn from(spec: ModelSpec) -> String {
        spec.to_string()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn parse(s: &str) -> ModelSpec {
        ModelSpec::parse(s).unwrap()
    }

    #[test]
    fn splits_provider_at_the_first_slash_only() {
        let s = parse("openai/gpt-5");
        assert_eq!(
            (s.provider.as_str(), s.model.as_str(), s.sample),
            ("openai", "gpt-5", 1)
        );
        let s = parse("openrouter/meta-llama/llama-3.3-70b-instruct");
        assert_eq!(s.provider, "openrouter");
        assert_eq!(s.model, "meta-llama/llama-3.3-70b-instruct");
        let s = parse("demo/path/to/script.jsonl");
        assert_eq!(s.model, "path/to/script.jsonl");
        assert_eq!(parse("demo/good").model, "good");
    }

    #[test]
    fn keeps_colons_and_dots_in_model_names() {
        let s = parse("ollama/qwen2.5-coder:7b");
        assert_eq!(s.model, "qwen2.5-coder:7b");
        assert_eq!(s.to_string(), "ollama/qwen2.5-coder:7b");
    }

    #[test]
    fn sample_number_is_part_of_the_label_but_not_the_base() {
        let s = parse("openai/gpt-5#2");
        assert_eq!(s.sample, 2);
        assert_eq!(s.model, "gpt-5");
        assert_eq!(s.to_string(), "openai/gpt-5#2");
        assert_eq!(s.base(), "openai/gpt-5");
        assert_eq!(parse("openai/gpt-5#1"), parse("openai/gpt-5"));
        assert_eq!(parse("openai/gpt-5#1").to_string(), "openai/gpt-5");
    }

    #[test]
    fn surrounding_whitespace_is_trimmed() {
        assert_eq!(
            parse("  anthropic/claude-sonnet-4-5 ").provider,
            "anthropic"
        );
    }

    #[test]
    fn errors_say_what_is_wrong_with_an_example() {
        let cases: &[(&str, &str)] = &[
            ("", "empty model spec"),
            ("gpt-5", "names no provider"),
            ("/gpt-5", "empty provider"),
            ("openai/", "no model after `/`"),
            ("openai/gpt-5#", "is not a sample number"),
            ("openai/gpt-5#0", "is not a sample number"),
            ("openai/gpt-5#two", "`#two`"),
            ("open ai/gpt-5", "whitespace"),
            ("open.ai/gpt-5", "may only contain"),
        ];
        for (input, expected) in cases {
            let err = ModelSpec::parse(input).unwrap_err().to_string();
            assert!(err.contains(expected), "{input:?}: {err}");
            assert!(err.contains("e.g."), "{input:?} gives no example: {err}");
        }
    }

    #[test]
    fn serializes_as_its_label() {
        let s = parse("openai/gpt-5#3");
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(json, "\"openai/gpt-5#3\"");
        assert_eq!(serde_json::from_str::<ModelSpec>(&json).unwrap(), s);
        assert!(serde_json::from_str::<ModelSpec>("\"nope\"").is_err());
    }
}
