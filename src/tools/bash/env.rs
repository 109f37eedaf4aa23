//! The environment a model's command runs with: versus's own, minus anything secret.
//!
//! A model can print its environment (`env`), so the provider keys versus holds must never reach
//! it. Removal works by name: the variables the providers read, and every name that looks like a
//! credential by its suffix. The check ignores case, so `my_service_token` goes too. Everything
//! else (PATH, HOME, CARGO_HOME, proxies, locale) is kept so builds and tests behave as in the
//! user's shell.

use std::ffi::OsString;

/// Credential variables read by providers or their SDKs that the suffix rule below would miss,
/// plus the well-known ones spelled out for clarity. One list: add new providers here.
const SECRET_NAMES: &[&str] = &[
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_GENERATIVE_AI_API_KEY",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "OPENROUTER_API_KEY",
    "OLLAMA_API_KEY",
    "XAI_API_KEY",
    "MISTRAL_API_KEY",
    "DEEPSEEK_API_KEY",
    "GROQ_API_KEY",
    "TOGETHER_API_KEY",
    "FIREWORKS_API_KEY",
    "CEREBRAS_API_KEY",
    "PERPLEXITY_API_KEY",
    "COHERE_API_KEY",
    "CO_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "AZURE_API_KEY",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_BEARER_TOKEN_BEDROCK",
    "HF_TOKEN",
    "HUGGING_FACE_HUB_TOKEN",
];

/// Name endings that mark a credential, compared without regard to case. A name equal to an
/// ending without its underscore (`TOKEN`, `API_KEY`) counts too.
const SECRET_SUFFIXES: &[&str] = &[
    "_API_KEY",
    "_APIKEY",
    "_TOKEN",
    "_SECRET",
    "_SECRET_KEY",
    "_ACCESS_KEY",
];

/// Whether a variable must be kept from the command.
pub(crate) fn is_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SECRET_NAMES.contains(&upper.as_str())
        || SECRET_SUFFIXES
            .iter()
            .any(|suffix| upper.ends_with(suffix) || upper == suffix[1..])
}

/// The names among `names` to remove from the child's environment.
pub(crate) fn secrets_among(names: impl IntoIterator<Item = OsString>) -> Vec<OsString> {
    names
        .into_iter()
        .filter(|name| is_secret(&name.to_string_lossy()))
        .collect()
}

/// The names to remove from versus's current environment: the secret-looking ones plus
/// `extra` (names configured elsewhere, such as a custom provider's key variable).
pub(crate) fn secrets_in_current_env(extra: &[String]) -> Vec<OsString> {
    let mut names = secrets_among(std::env::vars_os().map(|(name, _)| name));
    names.extend(extra.iter().map(OsString::from));
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configured_extra_names_are_removed_too() {
        let names = secrets_in_current_env(&["MY_LLM_CREDENTIAL".to_string()]);
        assert!(names.iter().any(|n| n == "MY_LLM_CREDENTIAL"));
        assert!(
            !is_secret("MY_LLM_CREDENTIAL"),
            "only removed because it was configured"
        );
    }

    #[test]
    fn provider_keys_are_secret() {
        for name in [
            "OPENAI_API_KEY",
            "ANTHROPIC_API_KEY",
            "GEMINI_API_KEY",
            "GOOGLE_API_KEY",
            "OPENROUTER_API_KEY",
            "AWS_ACCESS_KEY_ID",
            "GOOGLE_APPLICATION_CREDENTIALS",
        ] {
            assert!(is_secret(name), "{name}");
        }
    }

    #[test]
    fn suffixes_match_in_any_case() {
        for name in [
            "MY_SERVICE_TOKEN",
            "my_service_token",
            "GITHUB_TOKEN",
            "Stripe_Secret",
            "FOO_API_KEY",
            "foo_apikey",
            "DB_SECRET_KEY",
            "TOKEN",
            "api_key",
        ] {
            assert!(is_secret(name), "{name}");
        }
    }

    #[test]
    fn ordinary_variables_are_kept() {
        for name in [
            "HOME",
            "PATH",
            "CARGO_HOME",
            "OPENAI_BASE_URL",
            "TOKENIZERS_PARALLELISM",
            "KEYBOARD",
            "SSH_AUTH_SOCK",
            "VERSUS_TEST_VISIBLE",
        ] {
            assert!(!is_secret(name), "{name}");
        }
    }

    #[test]
    fn picks_only_secret_names() {
        let names = ["HOME", "OPENAI_API_KEY", "x_token"].map(OsString::from);
        assert_eq!(
            secrets_among(names),
            vec![OsString::from("OPENAI_API_KEY"), OsString::from("x_token")]
        );
    }
}
