//! Msgpack content of metalayers and vlmetalayers, decoded for display (as JSON text). Depth
//! and sizes are bounded: a hostile metalayer is shown as hex, never expanded.

use std::fmt::Write;

use rmp::Marker;

const MAX_DEPTH: usize = 32;

/// Renders `bytes` as JSON if they are exactly one msgpack value, else `None`.
pub fn to_json(bytes: &[u8]) -> Option<String> {
    let mut rd = bytes;
    let mut out = String::new();
    value(&mut rd, &mut out, 0)?;
    rd.is_empty().then_some(out)
}

fn take<'a>(rd: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
    if n > rd.len() {
        return None;
    }
    let (a, b) = rd.split_at(n);
    *rd = b;
    Some(a)
}

fn be(rd: &mut &[u8], n: usize) -> Option<u64> {
    Some(
        take(rd, n)?
            .iter()
            .fold(0u64, |acc, &b| acc << 8 | u64::from(b)),
    )
}

pub fn json_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn float(f: f64, out: &mut String) {
    if f.is_finite() {
        let _ = write!(out, "{f:?}");
    } else {
        json_string(&f.to_string(), out);
    }
}

fn value(rd: &mut &[u8], out: &mut String, depth: usize) -> Option<()> {
    if depth > MAX_DEPTH {
        return None;
    }
    let m = Marker::from_u8(*take(rd, 1)?.first()?);
    match m {
        Marker::Null => out.push_str("null"),
        Marker::True => out.push_str("true"),
        Marker::False => out.push_str("false"),
        Marker::FixPos(v) => {
            let _ = write!(out, "{v}");
        }
        Marker::FixNeg(v) => {
            let _ = write!(out, "{v}");
        }
        Marker::U8 | Marker::U16 | Marker::U32 | Marker::U64 => {
            let _ = write!(out, "{}", be(rd, int_width(m))?);
        }
        Marker::I8 | Marker::I16 | Marker::I32 | Marker::I64 => {
            let n = int_width(m);
            let shift = 64 - 8 * n as u32;
            let _ = write!(out, "{}", ((be(rd, n)? << shift) as i64) >> shift);
        }
        Marker::F32 => float(f64::from(f32::from_bits(be(rd, 4)? as u32)), out),
        Marker::F64 => float(f64::from_bits(be(rd, 8)?), out),
        Marker::FixStr(n) => string(rd, n as usize, out)?,
        Marker::Str8 => {
            let n = be(rd, 1)? as usize;
            string(rd, n, out)?
        }
        Marker::Str16 => {
            let n = be(rd, 2)? as usize;
            string(rd, n, out)?
        }
        Marker::Str32 => {
            let n = be(rd, 4)? as usize;
            string(rd, n, out)?
        }
        Marker::Bin8 | Marker::Bin16 | Marker::Bin32 => {
            let n = match m {
                Marker::Bin8 => be(rd, 1)?,
                Marker::Bin16 => be(rd, 2)?,
                _ => be(rd, 4)?,
            } as usize;
            let b = take(rd, n)?;
            json_string(&format!("0x{}", hex(b)), out);
        }
        Marker::FixArray(n) => array(rd, n as usize, out, depth)?,
        Marker::Array16 => {
            let n = be(rd, 2)? as usize;
            array(rd, n, out, depth)?
        }
        Marker::Array32 => {
            let n = be(rd, 4)? as usize;
            array(rd, n, out, depth)?
        }
        Marker::FixMap(n) => map(rd, n as usize, out, depth)?,
        Marker::Map16 => {
            let n = be(rd, 2)? as usize;
            map(rd, n, out, depth)?
        }
        Marker::Map32 => {
            let n = be(rd, 4)? as usize;
            map(rd, n, out, depth)?
        }
        Marker::FixExt1
        | Marker::FixExt2
        | Marker::FixExt4
        | Marker::FixExt8
        | Marker::FixExt16
        | Marker::Ext8
        | Marker::Ext16
        | Marker::Ext32 => {
            let n = match m {
                Marker::FixExt1 => 1,
                Marker::FixExt2 => 2,
                Marker::FixExt4 => 4,
                Marker::FixExt8 => 8,
                Marker::FixExt16 => 16,
                Marker::Ext8 => be(rd, 1)? as usize,
                Marker::Ext16 => be(rd, 2)? as usize,
                _ => be(rd, 4)? as usize,
            };
            let ty = take(rd, 1)?[0] as i8;
            let b = take(rd, n)?;
            let _ = write!(out, "{{\"ext\": {ty}, \"data\": \"0x{}\"}}", hex(b));
        }
        Marker::Reserved => return None,
    }
    Some(())
}

/// Bytes of a fixed-width integer marker.
fn int_width(m: Marker) -> usize {
    match m {
        Marker::U8 | Marker::I8 => 1,
        Marker::U16 | Marker::I16 => 2,
        Marker::U32 | Marker::I32 => 4,
        _ => 8,
    }
}

fn string(rd: &mut &[u8], n: usize, out: &mut String) -> Option<()> {
    let b = take(rd, n)?;
    match std::str::from_utf8(b) {
        Ok(s) => json_string(s, out),
        Err(_) => json_string(&format!("0x{}", hex(b)), out),
    }
    Some(())
}

fn array(rd: &mut &[u8], n: usize, out: &mut String, depth: usize) -> Option<()> {
    // Every element takes at least one byte: a count beyond that is a lie.
    if n > rd.len() {
        return None;
    }
    out.push('[');
    for i in 0..n {
        if i > 0 {
            out.push_str(", ");
        }
        value(rd, out, depth + 1)?;
    }
    out.push(']');
    Some(())
}

fn map(rd: &mut &[u8], n: usize, out: &mut String, depth: usize) -> Option<()> {
    if n > rd.len() / 2 {
        return None;
    }
    out.push('{');
    for i in 0..n {
        if i > 0 {
            out.push_str(", ");
        }
        let mut key = String::new();
        value(rd, &mut key, depth + 1)?;
        if key.starts_with('"') {
            out.push_str(&key);
        } else {
            json_string(&key, out);
        }
        out.push_str(": ");
        value(rd, out, depth + 1)?;
    }
    out.push('}');
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_what_python_blosc2_writes() {
        // b2nd metalayer of a (0, 5) int32 array.
        let b = [
            0x97, 0x00, 0x02, 0x92, 0xd3, 0, 0, 0, 0, 0, 0, 0, 0, 0xd3, 0, 0, 0, 0, 0, 0, 0, 5,
            0x92, 0xd2, 0, 0, 0, 2, 0xd2, 0, 0, 0, 5, 0x92, 0xd2, 0, 0, 0, 1, 0xd2, 0, 0, 0, 5,
            0x00, 0xdb, 0, 0, 0, 3, b'<', b'i', b'4',
        ];
        assert_eq!(
            to_json(&b).unwrap(),
            r#"[0, 2, [0, 5], [2, 5], [1, 5], 0, "<i4"]"#
        );
        assert_eq!(
            to_json(&[0x81, 0xa1, b'a', 0xcb, 0x3f, 0xf8, 0, 0, 0, 0, 0, 0]).unwrap(),
            r#"{"a": 1.5}"#
        );
        assert_eq!(to_json(&[0xff]).unwrap(), "-1");
        assert!(to_json(&[0xdd, 0xff, 0xff, 0xff, 0xff]).is_none());
        assert!(to_json(&[0x91, 0x01, 0x02]).is_none());
        let deep = vec![0x91u8; 100];
        assert!(to_json(&deep).is_none());
    }
}
