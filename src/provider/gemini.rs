//! Gemini generateContent adapter.
