//! Anthropic Messages adapter.
