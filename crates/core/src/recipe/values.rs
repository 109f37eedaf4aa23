//! Scalar values of recipe keys: booleans, numbers with ranges, sizes, durations, choices.
//!
//! Each reader returns a short reason on failure (`` `abc` is not a number ``) with the kind of
//! problem; the caller adds which key it was and what the key accepts, so every message names
//! the accepted values without each reader knowing the key.

use std::time::Duration;

use super::duration;
use super::model::Choice;
use super::problems::ProblemKind;

/// Why a value was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ValueError {
    /// [`ProblemKind::BadValue`], [`ProblemKind::OutOfRange`] or [`ProblemKind::MissingValue`].
    pub kind: ProblemKind,
    /// What was wrong, without the accepted values.
    pub reason: String,
}

/// The result of reading one value.
pub(crate) type Value<T> = Result<T, ValueError>;

pub(crate) fn bad(reason: impl Into<String>) -> ValueError {
    ValueError {
        kind: ProblemKind::BadValue,
        reason: reason.into(),
    }
}

pub(crate) fn out_of_range(reason: impl Into<String>) -> ValueError {
    ValueError {
        kind: ProblemKind::OutOfRange,
        reason: reason.into(),
    }
}

/// Fails on an empty value.
pub(crate) fn required(text: &str) -> Value<&str> {
    let text = text.trim();
    if text.is_empty() {
        Err(ValueError {
            kind: ProblemKind::MissingValue,
            reason: "no value given".into(),
        })
    } else {
        Ok(text)
    }
}

/// Whether `text` is one of the words that mean "not set" (`none`, `default`).
pub(crate) fn is_unset(text: &str) -> bool {
    let t = text.trim();
    t.eq_ignore_ascii_case("none") || t.eq_ignore_ascii_case("default")
}

/// `None` for `none`/`default`, else the reader's value.
pub(crate) fn optional<T>(text: &str, read: impl Fn(&str) -> Value<T>) -> Value<Option<T>> {
    let text = required(text)?;
    if is_unset(text) {
        Ok(None)
    } else {
        read(text).map(Some)
    }
}

/// `true` or `false`.
pub(crate) fn boolean(text: &str) -> Value<bool> {
    let text = required(text)?;
    match text.to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(bad(format!("`{text}` is not true or false"))),
    }
}

/// A whole number that fits in `T`.
pub(crate) fn whole<T: std::str::FromStr>(text: &str) -> Value<T> {
    let text = required(text)?;
    let digits = text.replace('_', "");
    if digits.chars().all(|c| c.is_ascii_digit()) {
        digits
            .parse()
            .map_err(|_| out_of_range(format!("`{text}` is too large")))
    } else if digits.starts_with('-') && digits[1..].chars().all(|c| c.is_ascii_digit()) {
        Err(out_of_range(format!("`{text}` is negative")))
    } else {
        Err(bad(format!("`{text}` is not a whole number")))
    }
}

/// A whole number of at least `min`.
pub(crate) fn at_least<T: std::str::FromStr + PartialOrd + std::fmt::Display>(
    text: &str,
    min: T,
) -> Value<T> {
    let n: T = whole(text)?;
    if n < min {
        return Err(out_of_range(format!("{n} is below {min}")));
    }
    Ok(n)
}

/// A finite decimal number.
pub(crate) fn decimal(text: &str) -> Value<f64> {
    let text = required(text)?;
    match text.parse::<f64>() {
        Ok(n) if n.is_finite() && !text.contains(['e', 'E', 'i', 'I', 'n', 'N']) => Ok(n),
        _ => Err(bad(format!("`{text}` is not a number"))),
    }
}

/// A decimal in `[min, max]`.
pub(crate) fn decimal_in(text: &str, min: f64, max: f64) -> Value<f64> {
    let n = decimal(text)?;
    if n < min || n > max {
        return Err(out_of_range(format!("{n} is outside [{min}, {max}]")));
    }
    Ok(n)
}

/// A decimal of at least 0.
pub(crate) fn non_negative(text: &str) -> Value<f64> {
    let n = decimal(text)?;
    if n < 0.0 {
        return Err(out_of_range(format!("{n} is negative")));
    }
    Ok(n)
}

/// A decimal above 0.
pub(crate) fn positive(text: &str) -> Value<f64> {
    let n = decimal(text)?;
    if n <= 0.0 {
        return Err(out_of_range(format!("{n} is not above 0")));
    }
    Ok(n)
}

/// A decimal in `(0, 1]`.
pub(crate) fn fraction(text: &str) -> Value<f64> {
    let n = decimal(text)?;
    if n <= 0.0 || n > 1.0 {
        return Err(out_of_range(format!("{n} is outside (0, 1]")));
    }
    Ok(n)
}

/// A duration (see [`duration::parse`]), at least `min`.
pub(crate) fn duration_at_least(text: &str, min: Duration) -> Value<Duration> {
    let text = required(text)?;
    let d = duration::parse(text).map_err(|_| bad(format!("`{text}` is not a duration")))?;
    if d < min {
        return Err(out_of_range(format!(
            "{} is below {}",
            duration::format(d),
            duration::format(min)
        )));
    }
    Ok(d)
}

/// What [`size`] accepts.
pub(crate) const SIZE: &str = "a byte count such as `51200`, `50KB` or `5MB` (KB = 1024 bytes)";

/// A byte count: plain, or with `KB`/`KiB`/`MB`/`MiB` (1024-based), at least 1.
pub(crate) fn size(text: &str) -> Value<usize> {
    let text = required(text)?;
    let lower = text.to_ascii_lowercase();
    let (number, scale) = [
        ("kib", 1024),
        ("kb", 1024),
        ("mib", 1 << 20),
        ("mb", 1 << 20),
        ("b", 1),
    ]
    .iter()
    .find_map(|(suffix, scale)| lower.strip_suffix(suffix).map(|n| (n.trim(), *scale)))
    .unwrap_or((lower.as_str(), 1));
    let n: usize = whole(number).map_err(|e| ValueError {
        reason: if e.kind == ProblemKind::BadValue {
            format!("`{text}` is not a byte count")
        } else {
            e.reason
        },
        ..e
    })?;
    let bytes = n
        .checked_mul(scale)
        .ok_or_else(|| out_of_range(format!("`{text}` is too large")))?;
    if bytes == 0 {
        return Err(out_of_range("0 bytes would keep nothing"));
    }
    Ok(bytes)
}

/// Writes a byte count the way [`size`] reads it (`50KB` when it is a whole number of KB).
pub(crate) fn format_size(bytes: usize) -> String {
    if bytes.is_multiple_of(1 << 20) {
        format!("{}MB", bytes >> 20)
    } else if bytes.is_multiple_of(1024) {
        format!("{}KB", bytes >> 10)
    } else {
        bytes.to_string()
    }
}

/// One of `C`'s spellings.
pub(crate) fn choice<C: Choice>(text: &str) -> Value<C> {
    let text = required(text)?;
    C::from_name(text).ok_or_else(|| bad(format!("`{text}` is not a known value")))
}

/// "`a`, `b` or `c`" for a [`Choice`], for accepted-value lists.
pub(crate) fn choices<C: Choice>() -> String {
    let names: Vec<String> = C::names().iter().map(|n| format!("`{n}`")).collect();
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => names.join(""),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::recipe::model::TaskMode;

    #[test]
    fn numbers_distinguish_wrong_type_from_out_of_range() {
        assert_eq!(whole::<u32>("42").unwrap(), 42);
        assert_eq!(whole::<u32>("1_000").unwrap(), 1000);
        assert_eq!(whole::<u32>("x").unwrap_err().kind, ProblemKind::BadValue);
        assert_eq!(whole::<u32>("4.5").unwrap_err().kind, ProblemKind::BadValue);
        assert_eq!(
            whole::<u32>("-1").unwrap_err().kind,
            ProblemKind::OutOfRange
        );
        assert_eq!(
            whole::<u32>("99999999999").unwrap_err().kind,
            ProblemKind::OutOfRange
        );
        assert_eq!(
            at_least::<u32>("0", 1).unwrap_err().kind,
            ProblemKind::OutOfRange
        );
        assert_eq!(
            whole::<u32>(" ").unwrap_err().kind,
            ProblemKind::MissingValue
        );
    }

    #[test]
    fn decimals_and_ranges() {
        assert_eq!(decimal_in("0.7", 0.0, 2.0).unwrap(), 0.7);
        assert_eq!(
            decimal_in("2.5", 0.0, 2.0).unwrap_err().kind,
            ProblemKind::OutOfRange
        );
        assert_eq!(decimal("warm").unwrap_err().kind, ProblemKind::BadValue);
        assert_eq!(decimal("inf").unwrap_err().kind, ProblemKind::BadValue);
        assert_eq!(decimal("NaN").unwrap_err().kind, ProblemKind::BadValue);
        assert_eq!(fraction("1").unwrap(), 1.0);
        assert_eq!(fraction("0").unwrap_err().kind, ProblemKind::OutOfRange);
        assert_eq!(fraction("1.2").unwrap_err().kind, ProblemKind::OutOfRange);
    }

    #[test]
    fn sizes_read_and_write_alike() {
        assert_eq!(size("51200").unwrap(), 51200);
        assert_eq!(size("50KB").unwrap(), 51200);
        assert_eq!(size("50 kib").unwrap(), 51200);
        assert_eq!(size("5MB").unwrap(), 5 << 20);
        assert_eq!(size("12b").unwrap(), 12);
        assert_eq!(size("lots").unwrap_err().kind, ProblemKind::BadValue);
        assert_eq!(size("0").unwrap_err().kind, ProblemKind::OutOfRange);
        for n in [51200, 5 << 20, 1000, 1] {
            assert_eq!(size(&format_size(n)).unwrap(), n);
        }
    }

    #[test]
    fn booleans_choices_and_unset_words() {
        assert!(boolean("TRUE").unwrap());
        assert_eq!(boolean("yes").unwrap_err().kind, ProblemKind::BadValue);
        assert_eq!(
            choice::<TaskMode>("Sequential").unwrap(),
            TaskMode::Sequential
        );
        assert!(choice::<TaskMode>("parallel").is_err());
        assert_eq!(choices::<TaskMode>(), "`independent` or `sequential`");
        assert_eq!(optional("none", decimal).unwrap(), None);
        assert_eq!(optional("default", decimal).unwrap(), None);
        assert_eq!(optional("0.5", decimal).unwrap(), Some(0.5));
    }

    #[test]
    fn durations_have_a_floor() {
        assert_eq!(
            duration_at_least("5m", Duration::from_secs(1)).unwrap(),
            Duration::from_secs(300)
        );
        assert_eq!(
            duration_at_least("0", Duration::from_secs(1))
                .unwrap_err()
                .kind,
            ProblemKind::OutOfRange
        );
        assert_eq!(
            duration_at_least("soon", Duration::from_secs(1))
                .unwrap_err()
                .kind,
            ProblemKind::BadValue
        );
    }
}
