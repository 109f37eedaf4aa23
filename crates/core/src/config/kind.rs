//! [`ApiKind`]: which wire format a provider speaks.
//!
//! Providers are names a user types (`openai`, `openrouter`, `local`); the kind is what the
//! runner needs to pick an adapter. Keeping the two apart is what lets any OpenAI-compatible
//! server be "one config block away": a new name, an existing kind.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The API format a provider speaks, i.e. which adapter talks to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ApiKind {
    /// OpenAI Chat Completions (`{base}/chat/completions`), also OpenRouter, Ollama, vLLM...
    #[serde(rename = "openai-chat")]
    OpenAiChat,
    /// OpenAI Responses API (`{base}/responses`).
    #[serde(rename = "openai-responses")]
    OpenAiResponses,
    /// Anthropic Messages (`{base}/v1/messages`).
    #[serde(rename = "anthropic")]
    Anthropic,
    /// Gemini generateContent (`{base}/v1beta/models/{model}:streamGenerateContent`).
    #[serde(rename = "gemini")]
    Gemini,
    /// Azure OpenAI: the Chat or Responses format at a deployment's URL (or the v1 API),
    /// with an `api-key` header or an Entra ID token (`provider::azure`).
    #[serde(rename = "azure")]
    Azure,
    /// AWS Bedrock Converse (`/model/{id}/converse-stream`), SigV4-signed
    /// (`provider::bedrock`).
    #[serde(rename = "bedrock")]
    Bedrock,
    /// The offline, scripted demo provider.
    #[serde(rename = "demo")]
    Demo,
    /// Google Vertex AI: Gemini models in the Gemini format, Claude models in the Messages
    /// format, with Google credentials (`provider::vertex`).
    #[serde(rename = "vertex")]
    Vertex,
}

impl ApiKind {
    /// Whether the API takes a sampling seed (Chat `seed`, Gemini `generationConfig.seed`);
    /// Responses and Anthropic Messages have no such field, so a seed set for them has no
    /// effect and `versus recipe check` says so.
    pub fn takes_seed(self) -> bool {
        matches!(
            self,
            ApiKind::OpenAiChat | ApiKind::Gemini | ApiKind::Vertex
        )
    }

    /// Whether a seed reaches `model` through this API: as [`ApiKind::takes_seed`], except
    /// that Vertex sends it to Gemini models only (Claude on Vertex speaks Anthropic
    /// Messages, which has no seed).
    pub fn takes_seed_for(self, model: &str) -> bool {
        match self {
            ApiKind::Vertex => !model.starts_with("claude"),
            kind => kind.takes_seed(),
        }
    }

    /// Every kind, in the order shown to users.
    pub const ALL: [ApiKind; 8] = [
        ApiKind::OpenAiResponses,
        ApiKind::OpenAiChat,
        ApiKind::Anthropic,
        ApiKind::Gemini,
        ApiKind::Azure,
        ApiKind::Bedrock,
        ApiKind::Demo,
        ApiKind::Vertex,
    ];

    /// The name used in config files, JSON output and replay tags.
    pub fn as_str(self) -> &'static str {
        match self {
            ApiKind::OpenAiChat => "openai-chat",
            ApiKind::OpenAiResponses => "openai-responses",
            ApiKind::Anthropic => "anthropic",
            ApiKind::Gemini => "gemini",
            ApiKind::Azure => "azure",
            ApiKind::Bedrock => "bedrock",
            ApiKind::Demo => "demo",
            ApiKind::Vertex => "vertex",
        }
    }
}

impl fmt::Display for ApiKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An API kind name that is not one of [`ApiKind::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown API kind `{0}`; use one of: openai-responses, openai-chat, anthropic, gemini, azure, bedrock, vertex"
)]
pub struct UnknownKind(pub String);

impl FromStr for ApiKind {
    type Err = UnknownKind;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ApiKind::ALL
            .into_iter()
            .find(|kind| kind.as_str() == s)
            .ok_or_else(|| UnknownKind(s.to_string()))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_serde_and_from_str() {
        for kind in ApiKind::ALL {
            let json = serde_json::to_string(&kind).unwrap();
            assert_eq!(json, format!("\"{}\"", kind.as_str()));
            assert_eq!(serde_json::from_str::<ApiKind>(&json).unwrap(), kind);
            assert_eq!(kind.as_str().parse::<ApiKind>().unwrap(), kind);
        }
    }

    #[test]
    fn unknown_kind_lists_the_accepted_ones() {
        let err = "openai".parse::<ApiKind>().unwrap_err().to_string();
        assert!(err.contains("`openai`"), "{err}");
        assert!(err.contains("openai-chat"), "{err}");
    }
}
