//! Whether a model accepts images: decides if a tool's picture (read_file of a PNG) is sent to
//! it or replaced by a text note. Sending an image to a text-only model makes most servers
//! refuse the whole request, so the default is "no" unless the model's name is known to see.
//!
//! Order: a `vision` key in the model's `[prices."provider/model"]` block, then one in its
//! `[providers.NAME]` block, then [`default_vision`] from the model's name.

/// Whether `model` (as written in a spec, possibly with an OpenRouter-style `vendor/` prefix)
/// accepts images by default: Claude 3 and later, Gemini, OpenAI's GPT-4o / 4.1 / 4.5 / 5 and
/// o-series reasoning models (not the `-mini` o1 / o3), Grok 4, and names that say so (`vision`,
/// `-vl`, `llava`). Everything else (local models, unknown servers) gets the text note until the
/// config says otherwise.
pub fn default_vision(model: &str) -> bool {
    let lower = model.to_ascii_lowercase();
    let name = lower.rsplit('/').next().unwrap_or(&lower);
    if name.contains("vision") || name.contains("-vl") || name.contains("llava") {
        return true;
    }
    if let Some(rest) = name.strip_prefix("claude-") {
        return !(rest.starts_with('1') || rest.starts_with('2') || rest.starts_with("instant"));
    }
    if name.starts_with("gemini-") {
        return !name.contains("embedding");
    }
    if name.starts_with("grok-4") {
        return true;
    }
    const OPENAI: [&str; 9] = [
        "gpt-4o",
        "chatgpt-4o",
        "gpt-4.1",
        "gpt-4.5",
        "gpt-4-turbo",
        "gpt-5",
        "o1",
        "o3",
        "o4",
    ];
    let text_only = ["o1-mini", "o1-preview", "o3-mini"];
    OPENAI.iter().any(|family| name.starts_with(family))
        && !text_only.iter().any(|family| name.starts_with(family))
}

#[cfg(test)]
mod tests {
    use super::default_vision;

    #[test]
    fn known_vision_families_and_text_only_models() {
        for model in [
            "claude-sonnet-4-5",
            "claude-3-5-haiku-latest",
            "gemini-2.5-pro",
            "gemini-3-pro-preview",
            "gpt-5",
            "gpt-5-mini",
            "gpt-4.1",
            "gpt-4o-mini",
            "o3",
            "o4-mini",
            "anthropic/claude-opus-4.1",
            "openai/gpt-5",
            "google/gemini-2.5-flash",
            "x-ai/grok-4",
            "llava:13b",
            "qwen/qwen2.5-vl-72b-instruct",
        ] {
            assert!(default_vision(model), "{model} sees images");
        }
        for model in [
            "o3-mini",
            "o1-mini",
            "gpt-3.5-turbo",
            "claude-2.1",
            "qwen3-coder:30b",
            "deepseek/deepseek-chat",
            "llama3.1",
            "moonshotai/kimi-k2",
            "",
        ] {
            assert!(!default_vision(model), "{model} does not see images");
        }
    }
}
