//! Wall-clock times as RFC 3339 UTC text and as sortable session ids, without a date crate.

use std::time::{SystemTime, UNIX_EPOCH};

/// A point in time, in whole seconds and milliseconds since the Unix epoch (UTC).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Timestamp {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    pub millis: u64,
}

/// The current time.
pub fn now() -> Timestamp {
    let millis = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0);
    Timestamp { millis }
}

impl Timestamp {
    fn parts(self) -> (i64, u32, u32, u64, u64, u64, u64) {
        let secs = self.millis / 1000;
        let days = i64::try_from(secs / 86_400).unwrap_or(i64::MAX);
        let rem = secs % 86_400;
        let (y, m, d) = civil_from_days(days);
        (
            y,
            m,
            d,
            rem / 3600,
            (rem % 3600) / 60,
            rem % 60,
            self.millis % 1000,
        )
    }

    /// `2026-11-21T09:05:03.123Z`.
    pub fn rfc3339(self) -> String {
        let (y, m, d, h, min, s, ms) = self.parts();
        format!("{y:04}-{m:02}-{d:02}T{h:02}:{min:02}:{s:02}.{ms:03}Z")
    }

    /// `20261121-090503`: sorts by time, safe in file names.
    pub fn compact(self) -> String {
        let (y, m, d, h, min, s, _) = self.parts();
        format!("{y:04}{m:02}{d:02}-{h:02}{min:02}{s:02}")
    }
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian (Howard Hinnant).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    (
        y,
        u32::try_from(m).unwrap_or(1),
        u32::try_from(d).unwrap_or(1),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_known_instants() {
        let t = Timestamp {
            millis: 784_111_777_042,
        };
        assert_eq!(t.rfc3339(), "1994-11-06T08:49:37.042Z");
        assert_eq!(t.compact(), "19941106-084937");
        let leap = Timestamp {
            millis: 951_782_400_000,
        };
        assert_eq!(leap.rfc3339(), "2000-02-29T00:00:00.000Z");
    }
}
