//! How the storm writes a figure: the number formatting the terminal table and the HTML
//! report share, so both show identical strings.

/// What a figure shows when it does not apply (Box's pool hit rate) or is not a number.
pub const NONE: &str = "—";

/// A duration given in nanoseconds, in the largest unit that keeps it ≥ 1, with three
/// significant digits at most: `48 ns`, `1.2 µs`, `20.4 µs`, `312 µs`, `3.1 ms`, `1.5 s`.
pub fn ns(x: f64) -> String {
    if !x.is_finite() {
        return NONE.to_owned();
    }
    if x < 0.0 {
        return format!("-{}", ns(-x));
    }
    if x < 999.5 {
        return format!("{x:.0} ns");
    }
    for (unit, scale) in [("µs", 1e3), ("ms", 1e6)] {
        let v = x / scale;
        if v < 999.5 {
            return format!("{} {unit}", three_digits(v));
        }
    }
    format!("{} s", three_digits(x / 1e9))
}

/// A duration given in microseconds, formatted as [`ns`] does.
pub fn us(x: f64) -> String {
    ns(x * 1e3)
}

/// A byte count in binary units: `512 B`, `4.0 KiB`, `12.3 MiB`, `1.1 GiB`.
pub fn bytes(b: u64) -> String {
    if b < 1024 {
        return format!("{b} B");
    }
    let mut v = b as f64;
    for unit in ["KiB", "MiB", "GiB"] {
        v /= 1024.0;
        if v < 1023.5 {
            return format!("{} {unit}", three_digits(v));
        }
    }
    format!("{} TiB", three_digits(v / 1024.0))
}

/// A whole number with thousands separators: `123,456`.
pub fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(d);
    }
    out
}

/// A fraction (0–1) as a percentage with one decimal: `97.3%`. Just below 1 it keeps two
/// decimals rounded down (`99.99%`), so a rate with misses never reads `100.0%`.
pub fn percent(fraction: f64) -> String {
    if !fraction.is_finite() {
        return NONE.to_owned();
    }
    let p = fraction * 100.0;
    let one = format!("{p:.1}");
    if one == "100.0" && fraction < 1.0 {
        return format!("{:.2}%", (p * 100.0).floor() / 100.0);
    }
    format!("{one}%")
}

/// A quantity that need not be whole (allocations per spawn or per frame): `0`, `0.003`,
/// `2.00`, `14.5`, `1,234`; below 0.0005 but above zero it reads `<0.001`.
pub fn amount(x: f64) -> String {
    if !x.is_finite() {
        return NONE.to_owned();
    }
    if x < 0.0 {
        return format!("-{}", amount(-x));
    }
    match x {
        0.0 => "0".to_owned(),
        x if x >= 99.5 => count(x.round() as u64),
        x if x >= 9.995 => format!("{x:.1}"),
        x if x >= 0.9995 => format!("{x:.2}"),
        x if x >= 0.0005 => format!("{x:.3}"),
        _ => "<0.001".to_owned(),
    }
}

/// `v` (≥ 0, < 999.5) with three significant digits at most: one decimal below 100.
fn three_digits(v: f64) -> String {
    if v < 99.95 {
        format!("{v:.1}")
    } else {
        format!("{v:.0}")
    }
}

/// A ratio: `1 ×`, `0.05 ×`, `2.1 ×`, `12 ×`; `0 ×` for nothing, `<0.01 ×` for a sliver.
pub fn times(r: f64) -> String {
    match r {
        0.0 => "0 ×".to_owned(),
        r if r < 0.005 => "<0.01 ×".to_owned(),
        r if (r - 1.0).abs() < 0.005 => "1 ×".to_owned(),
        r if r >= 9.95 => format!("{r:.0} ×"),
        r if r >= 0.995 => format!("{r:.1} ×"),
        r => format!("{r:.2} ×"),
    }
}

/// Seconds since 1970 as a UTC date and time: `2025-03-14 09:26 UTC`.
pub fn utc(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let (hour, minute) = ((secs % 86_400) / 3600, (secs % 3600) / 60);
    // Howard Hinnant's days-to-civil.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02} {hour:02}:{minute:02} UTC")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The strings the terminal table and the HTML report both show.
    #[test]
    fn formats_numbers() {
        assert_eq!(ns(48.0), "48 ns");
        assert_eq!(ns(999.4), "999 ns");
        assert_eq!(ns(999.6), "1.0 µs");
        assert_eq!(ns(1_234.0), "1.2 µs");
        assert_eq!(ns(20_400.0), "20.4 µs");
        assert_eq!(ns(99_970.0), "100 µs");
        assert_eq!(ns(312_000.0), "312 µs");
        assert_eq!(ns(3.1e6), "3.1 ms");
        assert_eq!(ns(1.5e9), "1.5 s");
        assert_eq!(ns(f64::NAN), NONE);
        assert_eq!(us(20.4), "20.4 µs");
        assert_eq!(us(3_100.0), "3.1 ms");
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(4096), "4.0 KiB");
        assert_eq!(bytes((12.3 * 1024.0 * 1024.0) as u64), "12.3 MiB");
        assert_eq!(bytes(1023 * 1024), "1023 KiB");
        assert_eq!(bytes(3 << 30), "3.0 GiB");
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(123_456), "123,456");
        assert_eq!(count(1_234_567), "1,234,567");
        assert_eq!(percent(0.973), "97.3%");
        assert_eq!(percent(1.0), "100.0%");
        assert_eq!(percent(0.99996), "99.99%");
        assert_eq!(percent(f64::NAN), NONE);
        assert_eq!(amount(0.0), "0");
        assert_eq!(amount(0.0031), "0.003");
        assert_eq!(amount(2.0), "2.00");
        assert_eq!(amount(14.46), "14.5");
        assert_eq!(amount(1234.4), "1,234");
        assert_eq!(amount(0.0001), "<0.001");
    }

    #[test]
    fn ratios_read_as_their_size() {
        assert_eq!(times(1.0), "1 ×");
        assert_eq!(times(1.004), "1 ×");
        assert_eq!(times(2.14), "2.1 ×");
        assert_eq!(times(0.05), "0.05 ×");
        assert_eq!(times(0.0), "0 ×");
        assert_eq!(times(0.001), "<0.01 ×");
        assert_eq!(times(12.3), "12 ×");
    }

    #[test]
    fn dates_read_as_utc() {
        assert_eq!(utc(0), "1970-01-01 00:00 UTC");
        assert_eq!(utc(951_782_400), "2000-02-29 00:00 UTC");
        assert_eq!(utc(1_710_408_360), "2024-03-14 09:26 UTC");
    }
}
