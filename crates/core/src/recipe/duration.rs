//! Durations as recipes write them: `5m`, `90s`, `1h30m`, `1.5h`, `250ms`, or plain seconds.
//!
//! Errata recipes use Go-style durations and bare seconds; both read the same here. Values are
//! kept to the millisecond, and [`format()`] writes the shortest unit sequence that reads back to
//! the same value, so a written recipe parses to an equal one.

use std::time::Duration;

/// Words for "accepted:" lists in error messages.
pub(crate) const ACCEPTED: &str =
    "a duration such as `90s`, `5m`, `1h30m`, `250ms` or plain seconds";

/// Why a duration could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{text}` is not a duration; accepted: {ACCEPTED}")]
pub struct DurationError {
    /// The text as written.
    pub text: String,
}

/// Reads a duration; plain numbers are seconds. Rounded to the millisecond.
pub fn parse(text: &str) -> Result<Duration, DurationError> {
    let err = || DurationError {
        text: text.to_string(),
    };
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(err());
    }
    if let Some(seconds) = number(trimmed) {
        return Ok(millis(seconds * 1000.0));
    }
    let mut total_ms = 0.0;
    for token in trimmed.split_whitespace() {
        let mut rest = token;
        while !rest.is_empty() {
            let digits = rest
                .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                .ok_or_else(err)?;
            let value = number(&rest[..digits]).ok_or_else(err)?;
            rest = &rest[digits..];
            let unit_len = rest
                .find(|c: char| c.is_ascii_digit() || c == '.')
                .unwrap_or(rest.len());
            let scale = match rest[..unit_len].to_ascii_lowercase().as_str() {
                "ms" => 1.0,
                "s" | "sec" | "secs" => 1000.0,
                "m" | "min" | "mins" => 60_000.0,
                "h" | "hr" | "hrs" => 3_600_000.0,
                _ => return Err(err()),
            };
            total_ms += value * scale;
            rest = &rest[unit_len..];
        }
    }
    Ok(millis(total_ms))
}

/// A non-negative decimal number (no sign, no exponent).
fn number(text: &str) -> Option<f64> {
    let ok = !text.is_empty()
        && text.chars().all(|c| c.is_ascii_digit() || c == '.')
        && text.chars().filter(|c| *c == '.').count() <= 1
        && text != ".";
    if ok { text.parse().ok() } else { None }
}

fn millis(ms: f64) -> Duration {
    Duration::from_millis(ms.round().min(u64::MAX as f64) as u64)
}

/// Writes `d` as `1h30m`, `90s` becomes `1m30s`, zero is `0s`; sub-millisecond parts are
/// dropped (they cannot be written and are never read). The evaluator words its timeouts the
/// same way, so one function writes both (`check::duration_text`).
pub fn format(d: Duration) -> String {
    crate::check::duration_text(d)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn secs(s: u64) -> Duration {
        Duration::from_secs(s)
    }

    #[test]
    fn reads_units_sequences_decimals_and_plain_seconds() {
        assert_eq!(parse("5m").unwrap(), secs(300));
        assert_eq!(parse("90s").unwrap(), secs(90));
        assert_eq!(parse("1h30m").unwrap(), secs(5400));
        assert_eq!(parse("1h 30m").unwrap(), secs(5400));
        assert_eq!(parse("1.5h").unwrap(), secs(5400));
        assert_eq!(parse("120").unwrap(), secs(120));
        assert_eq!(parse("2.5").unwrap(), Duration::from_millis(2500));
        assert_eq!(parse("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse("2m30s").unwrap(), secs(150));
        assert_eq!(parse("0").unwrap(), secs(0));
    }

    #[test]
    fn rejects_what_is_not_a_duration() {
        for bad in ["", "abc", "5x", "m5", "-5s", "5..0s", "1e3", "5 m s"] {
            let err = parse(bad).unwrap_err().to_string();
            assert!(err.contains("accepted"), "{bad}: {err}");
        }
    }

    #[test]
    fn writes_what_it_reads() {
        for (d, text) in [
            (secs(300), "5m"),
            (secs(90), "1m30s"),
            (secs(5400), "1h30m"),
            (secs(0), "0s"),
            (Duration::from_millis(1500), "1s500ms"),
            (secs(7200), "2h"),
        ] {
            assert_eq!(format(d), text);
            assert_eq!(parse(text).unwrap(), d);
        }
    }
}
