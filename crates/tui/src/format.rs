//! Short human forms of numbers (sizes, durations, tokens, money) shared by every component,
//! so a panel title and the header never disagree on how a value is written.

/// `850 B`, `1.2 KB`, `3.4 MB`.
pub fn bytes(n: usize) -> String {
    let n = n as f64;
    if n < 1024.0 {
        format!("{n} B")
    } else if n < 1024.0 * 1024.0 {
        format!("{:.1} KB", n / 1024.0)
    } else {
        format!("{:.1} MB", n / (1024.0 * 1024.0))
    }
}

/// `40 ms`, `1.2 s`, `3m05s`.
pub fn duration_ms(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms} ms")
    } else if ms < 60_000 {
        format!("{:.1} s", ms as f64 / 1000.0)
    } else {
        let secs = ms / 1000;
        format!("{}m{:02}s", secs / 60, secs % 60)
    }
}

/// Whole seconds for a live clock: `7s`, `2m05s`.
pub fn clock(ms: u64) -> String {
    let secs = ms / 1000;
    if secs < 60 {
        format!("{secs}s")
    } else {
        format!("{}m{:02}s", secs / 60, secs % 60)
    }
}

/// `950`, `1.2k`, `3.4M`.
pub fn tokens(n: u64) -> String {
    if n < 1000 {
        n.to_string()
    } else if n < 1_000_000 {
        format!("{:.1}k", n as f64 / 1000.0)
    } else {
        format!("{:.1}M", n as f64 / 1_000_000.0)
    }
}

/// A run's tokens (input and output) as [`tokens`] writes them, or `?` when some request's
/// usage was not reported (the sum would only be a lower bound; `Usage::is_known`), the way
/// [`cost`] writes an unknown price: never a misleading count.
pub fn usage_tokens(usage: &versus_core::model::Usage) -> String {
    if usage.is_known() {
        tokens(usage.input.saturating_add(usage.output))
    } else {
        "?".to_string()
    }
}

/// `$0.0123`, or `$?` when the price is unknown (never a misleading `$0`).
pub fn cost(usd: Option<f64>) -> String {
    match usd {
        Some(v) if v >= 1.0 => format!("${v:.2}"),
        Some(v) => format!("${v:.4}"),
        None => "$?".to_string(),
    }
}

/// The first line of `text`, cut to `max` characters with `…`.
pub fn one_line(text: &str, max: usize) -> String {
    let line = text.trim().lines().next().unwrap_or_default();
    let mut cut: String = line.chars().take(max).collect();
    if cut.len() < line.len() || text.trim().lines().nth(1).is_some() {
        cut.push('…');
    }
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_not_reported_is_a_question_mark_not_zero() {
        let mut usage = versus_core::model::Usage {
            input: 1200,
            output: 300,
            ..Default::default()
        };
        assert_eq!(usage_tokens(&usage), "1.5k");
        usage.add(&versus_core::model::Usage::unreported());
        assert_eq!(usage_tokens(&usage), "?");
        assert_eq!(usage_tokens(&versus_core::model::Usage::unreported()), "?");
    }

    #[test]
    fn numbers_read_short() {
        assert_eq!(bytes(850), "850 B");
        assert_eq!(bytes(1229), "1.2 KB");
        assert_eq!(duration_ms(40), "40 ms");
        assert_eq!(duration_ms(1234), "1.2 s");
        assert_eq!(duration_ms(185_000), "3m05s");
        assert_eq!(clock(7_900), "7s");
        assert_eq!(tokens(1234), "1.2k");
        assert_eq!(cost(Some(0.01234)), "$0.0123");
        assert_eq!(cost(None), "$?");
        assert_eq!(one_line("abc\ndef", 10), "abc…");
        assert_eq!(one_line("abcdef", 3), "abc…");
        assert_eq!(one_line("abc", 3), "abc");
    }
}
