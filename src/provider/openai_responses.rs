//! OpenAI Responses API adapter.
