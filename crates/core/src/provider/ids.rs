//! Tool call ids that every provider accepts.
//!
//! Anthropic allows `[a-zA-Z0-9_-]{1,64}`; OpenAI ids may contain other characters and Gemini
//! may send none. When a history crosses providers, adapters pass each id through
//! [`normalize_call_id`]; because the mapping is a pure function, a call and its result always
//! end up with the same id.

/// `text` with every character outside `[a-zA-Z0-9_-]` (what every provider accepts in a call
/// id or a tool name) replaced by `_`.
pub fn only_name_characters(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The id with every character outside `[a-zA-Z0-9_-]` replaced by `_`, cut to 64 characters
/// (a short hash of the original keeps cut ids distinct); an empty id becomes `call`.
pub fn normalize_call_id(id: &str) -> String {
    let clean = only_name_characters(id);
    if clean.is_empty() {
        return "call".to_string();
    }
    if clean.len() <= 64 && clean == id {
        return clean;
    }
    if clean.len() <= 64 {
        // Replaced characters could make two ids equal: add a short hash of the original.
        let suffix = short_hash(id);
        let keep = clean.len().min(64 - suffix.len() - 1);
        return format!("{}_{suffix}", &clean[..keep]);
    }
    let suffix = short_hash(id);
    format!("{}_{suffix}", &clean[..64 - suffix.len() - 1])
}

/// A call id for providers that send none (Gemini): unique within a response.
pub fn synthesize_call_id(index: usize, name: &str) -> String {
    normalize_call_id(&format!("call_{index}_{name}"))
}

fn short_hash(text: &str) -> String {
    // FNV-1a, 32 bits: tiny, stable across runs and platforms.
    let mut hash: u32 = 0x811c_9dc5;
    for byte in text.bytes() {
        hash ^= u32::from(byte);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    format!("{hash:08x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_ids_are_kept_and_invalid_ones_mapped_stably() {
        assert_eq!(normalize_call_id("toolu_01ABC-x"), "toolu_01ABC-x");
        let mapped = normalize_call_id("call:abc/1");
        assert!(mapped.starts_with("call_abc_1_"));
        assert_eq!(mapped, normalize_call_id("call:abc/1"));
        assert_ne!(normalize_call_id("a.b"), normalize_call_id("a:b"));
        let long = "x".repeat(200);
        let cut = normalize_call_id(&long);
        assert_eq!(cut.len(), 64);
        assert_eq!(normalize_call_id(""), "call");
        for id in [mapped, cut] {
            assert!(
                id.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            );
        }
    }
}
