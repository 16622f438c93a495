//! Array items as text (`b2f slice --text`), from their NumPy dtype string: numbers, booleans,
//! byte and unicode strings, dates and durations, and structured items as tuples of their
//! fields; anything else as hex.

use crate::msgpack;
use b2frame::ndim::dtype;

/// Formats one item of dtype `dtype` (`item` holds its bytes).
pub fn format_item(dtype: &str, item: &[u8]) -> String {
    if let Some(fields) = dtype::simple_fields(dtype) {
        if let Some(s) = format_record(&fields, item) {
            return s;
        }
    }
    format_simple(dtype, item)
}

/// A structured item as `(field, field, [subarray items])`; `None` if the sizes disagree.
fn format_record(fields: &[dtype::Field], item: &[u8]) -> Option<String> {
    let mut parts = Vec::with_capacity(fields.len());
    let mut at = 0usize;
    for f in fields {
        let size = dtype::simple_itemsize(&f.format)?;
        let end = at.checked_add(size.checked_mul(f.count)?)?;
        let bytes = item.get(at..end)?;
        let text: Vec<String> = bytes
            .chunks_exact(size)
            .map(|b| format_simple(&f.format, b))
            .collect();
        parts.push(if f.count == 1 {
            text.into_iter().next().unwrap_or_default()
        } else {
            format!("[{}]", text.join(", "))
        });
        at = end;
    }
    (at == item.len()).then(|| format!("({})", parts.join(", ")))
}

fn format_simple(dtype: &str, item: &[u8]) -> String {
    let (order, rest) = match dtype.as_bytes().first() {
        Some(b'<' | b'>' | b'|' | b'=') => (dtype.as_bytes()[0], &dtype[1..]),
        _ => (b'<', dtype),
    };
    let big = order == b'>';
    let mut b = item.to_vec();
    let kind = rest.chars().next().unwrap_or('V');
    if big && matches!(kind, 'i' | 'u' | 'f' | 'c' | 'M' | 'm') {
        if kind == 'c' {
            let h = b.len() / 2;
            b[..h].reverse();
            b[h..].reverse();
        } else {
            b.reverse();
        }
    }
    let n = b.len();
    let le = |b: &[u8]| b.iter().rev().fold(0u64, |acc, &x| acc << 8 | u64::from(x));
    match (kind, n) {
        ('b' | '?', 1) => (if b[0] != 0 { "true" } else { "false" }).into(),
        ('i', 1 | 2 | 4 | 8) => {
            let shift = 64 - 8 * n as u32;
            (((le(&b) << shift) as i64) >> shift).to_string()
        }
        ('u', 1 | 2 | 4 | 8) => le(&b).to_string(),
        ('f', 2) => format_half(le(&b) as u16),
        ('f', 4) => f32::from_bits(le(&b) as u32).to_string(),
        ('f', 8) => f64::from_bits(le(&b)).to_string(),
        ('c', 8) => format!(
            "{}{:+}j",
            f32::from_bits(le(&b[..4]) as u32),
            f32::from_bits(le(&b[4..]) as u32)
        ),
        ('c', 16) => format!(
            "{}{:+}j",
            f64::from_bits(le(&b[..8])),
            f64::from_bits(le(&b[8..]))
        ),
        ('S', _) => {
            let end = b.iter().rposition(|&c| c != 0).map_or(0, |p| p + 1);
            format!("{:?}", String::from_utf8_lossy(&b[..end]))
        }
        ('U', _) if n.is_multiple_of(4) => {
            // UTF-32 code points; the byte order was not reversed above.
            let text: String = item
                .chunks_exact(4)
                .map(|c| {
                    let c = [c[0], c[1], c[2], c[3]];
                    if big {
                        u32::from_be_bytes(c)
                    } else {
                        u32::from_le_bytes(c)
                    }
                })
                .take_while(|&c| c != 0)
                .map(|c| char::from_u32(c).unwrap_or(char::REPLACEMENT_CHARACTER))
                .collect();
            format!("{text:?}")
        }
        ('M' | 'm', 8) => {
            let unit = rest
                .find('[')
                .map_or("", |i| rest[i + 1..].trim_end_matches(']'));
            let v = le(&b) as i64;
            if v == i64::MIN {
                "NaT".into()
            } else if kind == 'M' {
                datetime(v, unit).unwrap_or_else(|| format!("{v} {unit}"))
            } else {
                format!("{v} {unit}")
            }
        }
        _ => format!("0x{}", msgpack::hex(&b)),
    }
}

/// A half-precision number as NumPy prints it: the fewest digits that read back as it.
fn format_half(h: u16) -> String {
    let x = half_to_f32(h);
    if !x.is_finite() {
        return x.to_string();
    }
    // With p digits after the first, the rounded value or its neighbour towards x.
    let candidates = (0..5).flat_map(|p| {
        let rounded = format!("{:.p$e}", f64::from(x));
        let y: f64 = rounded.parse().unwrap_or(f64::NAN);
        let exp: i32 = rounded
            .rsplit('e')
            .next()
            .and_then(|e| e.parse().ok())
            .unwrap_or(0);
        let step = 10f64.powi(exp - p as i32);
        let toward = if y < f64::from(x) { y + step } else { y - step };
        [y, format!("{toward:.p$e}").parse().unwrap_or(f64::NAN)]
    });
    candidates
        .map(|y| y as f32)
        .find(|&y| f32_to_half(y) == h)
        .unwrap_or(x)
        .to_string()
}

/// An IEEE 754 half-precision number.
fn half_to_f32(h: u16) -> f32 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((h >> 10) & 0x1f);
    let frac = f32::from(h & 0x3ff);
    sign * match exp {
        0 => frac * 2f32.powi(-24),
        31 if frac == 0.0 => f32::INFINITY,
        31 => f32::NAN,
        e => (1.0 + frac / 1024.0) * 2f32.powi(e - 15),
    }
}

/// The half-precision number nearest `x` (ties to even).
fn f32_to_half(x: f32) -> u16 {
    let b = x.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    let exp = ((b >> 23) & 0xff) as i32;
    let man = b & 0x7f_ffff;
    if exp == 0xff {
        return sign | 0x7c00 | if man != 0 { 0x200 } else { 0 };
    }
    let e = exp - 112; // the exponent rebiased for half precision
    if e >= 31 {
        return sign | 0x7c00;
    }
    // Half precision keeps `kept` bits of the 24-bit significand (fewer for subnormals).
    let (sig, shift) = if e <= 0 {
        if e < -10 {
            return sign;
        }
        (man | 0x80_0000, (14 - e) as u32)
    } else {
        (man, 13)
    };
    let mut kept = sig >> shift;
    let rest = sig & ((1 << shift) - 1);
    let half = 1 << (shift - 1);
    if rest > half || (rest == half && kept & 1 == 1) {
        kept += 1;
    }
    // A carry out of the significand moves into the exponent, as the encoding wants.
    sign | if e <= 0 {
        kept as u16
    } else {
        ((e as u32) << 10) as u16 + kept as u16
    }
}

/// A NumPy datetime64 value of `unit` since 1970-01-01 as NumPy prints it (ISO 8601, to the
/// unit); `None` for units it does not know.
fn datetime(v: i64, unit: &str) -> Option<String> {
    let (per_second, digits): (i64, usize) = match unit {
        "Y" => return Some((1970 + v).to_string()),
        "M" => {
            let (y, m) = (v.div_euclid(12), v.rem_euclid(12));
            return Some(format!("{}-{:02}", 1970 + y, m + 1));
        }
        "W" => return Some(civil_date(v.checked_mul(7)?)),
        "D" => return Some(civil_date(v)),
        "h" => return hms(v.checked_mul(3600)?, 0, 0, 13),
        "m" => return hms(v.checked_mul(60)?, 0, 0, 16),
        "s" => (1, 0),
        "ms" => (1_000, 3),
        "us" => (1_000_000, 6),
        "ns" => (1_000_000_000, 9),
        "ps" => (1_000_000_000_000, 12),
        "fs" => (1_000_000_000_000_000, 15),
        "as" => (1_000_000_000_000_000_000, 18),
        _ => return None,
    };
    hms(
        v.div_euclid(per_second),
        v.rem_euclid(per_second),
        digits,
        19,
    )
}

/// Seconds since the epoch (plus a fraction of `digits` digits) as
/// `YYYY-MM-DDTHH:MM:SS[.fff]`, cut to `width` characters before the fraction.
fn hms(secs: i64, frac: i64, digits: usize, width: usize) -> Option<String> {
    let days = secs.div_euclid(86_400);
    let s = secs.rem_euclid(86_400);
    let mut out = format!(
        "{}T{:02}:{:02}:{:02}",
        civil_date(days),
        s / 3600,
        s / 60 % 60,
        s % 60
    );
    out.truncate(out.len() - (19 - width));
    if digits > 0 {
        out.push_str(&format!(".{frac:0digits$}"));
    }
    Some(out)
}

/// The proleptic Gregorian date `days` after 1970-01-01 (H. Hinnant's civil_from_days).
fn civil_date(days: i64) -> String {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_as_text() {
        assert_eq!(format_item("<f8", &1.5f64.to_le_bytes()), "1.5");
        assert_eq!(format_item(">i4", &(-2i32).to_be_bytes()), "-2");
        assert_eq!(format_item("|u1", &[200]), "200");
        assert_eq!(format_item("|b1", &[1]), "true");
        assert_eq!(format_item("|S4", b"ab\0\0"), "\"ab\"");
        assert_eq!(format_item("<c8", &[0, 0, 128, 63, 0, 0, 0, 64]), "1+2j");
        assert_eq!(format_item("|V2", &[1, 2]), "0x0102");
        assert_eq!(format_item("<f2", &[0x00, 0x3e]), "1.5");
        assert_eq!(format_item(">f2", &[0xc0, 0x00]), "-2");
        // The fewest digits that read back, as NumPy prints: 0.1, not 0.099975586.
        assert_eq!(format_item("<f2", &0x2e66u16.to_le_bytes()), "0.1");
        assert_eq!(format_item("<f2", &0xbc61u16.to_le_bytes()), "-1.095");
        assert_eq!(format_item("<f2", &0x0001u16.to_le_bytes()), "0.00000006");
        assert_eq!(format_item("<f2", &0x7bffu16.to_le_bytes()), "65500");
        assert_eq!(format_item("<f2", &0xfc00u16.to_le_bytes()), "-inf");
        assert_eq!(format_item("<f2", &0x2400u16.to_le_bytes()), "0.01563");
        let u: Vec<u8> = "hé"
            .chars()
            .chain(['\0'])
            .flat_map(|c| (c as u32).to_le_bytes())
            .collect();
        assert_eq!(format_item("<U3", &u), "\"hé\"");
        let u: Vec<u8> = "ok"
            .chars()
            .flat_map(|c| (c as u32).to_be_bytes())
            .collect();
        assert_eq!(format_item(">U2", &u), "\"ok\"");
    }

    #[test]
    fn every_half_reads_back_from_its_text() {
        for h in 0..=u16::MAX {
            let x = half_to_f32(h);
            if x.is_nan() {
                continue;
            }
            assert_eq!(f32_to_half(x), h, "{h:#06x}");
            let text = format_half(h);
            assert_eq!(f32_to_half(text.parse().unwrap()), h, "{h:#06x} as {text}");
        }
    }

    #[test]
    fn dates_and_durations_as_numpy_prints_them() {
        let m8 = |unit: &str, v: i64| format_item(&format!("<M8[{unit}]"), &v.to_le_bytes());
        assert_eq!(m8("s", 2), "1970-01-01T00:00:02");
        assert_eq!(m8("D", 19_000), "2022-01-08");
        assert_eq!(m8("D", -1), "1969-12-31");
        assert_eq!(m8("ms", -1), "1969-12-31T23:59:59.999");
        assert_eq!(
            m8("ns", 1_600_000_000_123_456_789),
            "2020-09-13T12:26:40.123456789"
        );
        assert_eq!(m8("h", 25), "1970-01-02T01");
        assert_eq!(m8("M", 14), "1971-03");
        assert_eq!(m8("Y", 50), "2020");
        assert_eq!(m8("ps", 7), "1970-01-01T00:00:00.000000000007");
        assert_eq!(m8("W", 3), "1970-01-22");
        assert_eq!(m8("xs", 7), "7 xs");
        assert_eq!(m8("s", i64::MIN), "NaT");
        assert_eq!(format_item("<m8[us]", &5i64.to_le_bytes()), "5 us");
    }

    #[test]
    fn structured_items_as_tuples() {
        let dt = "[('a', '<i4'), ('b', '<f8'), ('c', '|S3'), ('d', '<i2', (2,))]";
        let mut item = 3i32.to_le_bytes().to_vec();
        item.extend(1.5f64.to_le_bytes());
        item.extend(b"xy\0");
        item.extend([1, 0, 2, 0]);
        assert_eq!(format_item(dt, &item), "(3, 1.5, \"xy\", [1, 2])");
        // A nested field: hex.
        let nested = "[('a', [('x', '<i2')])]";
        assert_eq!(format_item(nested, &[1, 0]), "0x0100");
    }
}
