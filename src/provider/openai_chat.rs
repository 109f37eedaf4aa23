//! OpenAI Chat Completions adapter (also OpenRouter, Ollama and OpenAI-compatible servers).
