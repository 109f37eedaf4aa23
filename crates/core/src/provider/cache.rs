//! The prompt-cache key OpenAI's APIs take (`prompt_cache_key`): requests with the same key
//! and a shared prefix are routed to the same cache, so every step of a session reads the
//! conversation before it from the cache instead of paying for it again.
//!
//! The key is derived from what stays fixed for one model through one session: the model's
//! name, its system prompt and the conversation's first message. Every step and every turn of
//! a session share it (the history grows at its end), two models of a run never do, and
//! nothing about the user or the project leaves versus through it (a hash). The same policy
//! holds for every model of a run: Anthropic gets its breakpoints (`anthropic::request`),
//! Gemini caches implicitly; see docs/config.md, "Prompt caching".

use crate::model::ModelRequest;

/// `versus-` and 32 hex digits of a hash of the model, the system prompt and the first
/// message's text.
pub(crate) fn prompt_cache_key(request: &ModelRequest) -> String {
    let mut hasher = blake3::Hasher::new();
    hasher.update(request.model.as_bytes());
    hasher.update(b"\0");
    hasher.update(request.system.as_bytes());
    hasher.update(b"\0");
    if let Some(first) = request.messages.iter().next() {
        hasher.update(first.text().as_bytes());
    }
    let hex = hasher.finalize().to_hex();
    format!("versus-{}", &hex[..32])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Message, Reasoning};

    fn request(model: &str, messages: Vec<Message>) -> ModelRequest {
        ModelRequest {
            model: model.into(),
            system: "be brief".into(),
            messages: messages.into(),
            tools: vec![].into(),
            max_output_tokens: None,
            temperature: None,
            reasoning: Reasoning::Default,
            seed: None,
        }
    }

    #[test]
    fn one_key_per_model_and_conversation_whatever_the_step() {
        let first = request("gpt-5", vec![Message::user("fix it")]);
        let later = request(
            "gpt-5",
            vec![Message::user("fix it"), Message::user("and more")],
        );
        let key = prompt_cache_key(&first);
        assert!(key.starts_with("versus-") && key.len() == 39, "{key}");
        assert_eq!(key, prompt_cache_key(&later));
        assert_ne!(
            key,
            prompt_cache_key(&request("gpt-5-mini", vec![Message::user("fix it")]))
        );
        assert_ne!(
            key,
            prompt_cache_key(&request("gpt-5", vec![Message::user("other task")]))
        );
    }
}
