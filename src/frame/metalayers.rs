//! Fixed-length metalayers, stored in the frame header after its fixed part (byte 87):
//! `0x93`, `0xCD` u16 size of the index (from the `0xCD` to the end of the map), `0xDE` u16 n,
//! n × (fixstr name, `0xD2` i32 offset of the value from the frame start), `0xDC` u16 n,
//! n × (`0xC6` u32 length + content). All integers big-endian.
//!
//! The same map-of-offsets layout holds the vlmetalayers in the trailer (see trailer.rs).

use crate::error::Result;

/// Most metalayers a frame holds (c-blosc2's `BLOSC2_MAX_METALAYERS`).
pub const MAX_METALAYERS: usize = 16;
/// Longest metalayer name (31 bytes: a msgpack fixstr).
pub const MAX_NAME_LEN: usize = 31;

/// A named metalayer and its content (raw bytes, usually msgpack). Names are bytes, as in
/// the format (c-blosc2 takes any): usually UTF-8, but a frame with other names still opens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Metalayer {
    pub name: Vec<u8>,
    pub content: Vec<u8>,
}

/// A name for messages (and for callers that want text): invalid UTF-8 replaced.
pub fn show(name: &[u8]) -> String {
    String::from_utf8_lossy(name).into_owned()
}

/// Checks a metalayer name as c-blosc2 requires (it takes the empty name too).
pub fn check_name(name: &[u8]) -> Result<()> {
    if name.len() > MAX_NAME_LEN {
        bail!(
            invalid,
            "metalayer name {:?} is longer than {MAX_NAME_LEN} bytes",
            show(name)
        );
    }
    if name.contains(&0) {
        bail!(
            invalid,
            "metalayer name {:?} contains a NUL byte",
            show(name)
        );
    }
    Ok(())
}

fn u16_at(b: &[u8], at: usize) -> usize {
    usize::from(u16::from_be_bytes([b[at], b[at + 1]]))
}

/// A name → offset map followed by the values array, as used by header and trailer. `start`
/// is where the `0x93` sits; offsets in the map count from `base` (0 for the header, the
/// trailer's start for the trailer). Returns each entry's name and content.
pub fn parse_section(
    b: &[u8],
    start: usize,
    base: usize,
    max: usize,
    what: &str,
) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
    let need = |n: usize, field: &str| -> Result<()> {
        if n > b.len() {
            bail!(
                corrupt,
                "{what}: {field} at byte {} runs past the end ({} bytes)",
                n,
                b.len()
            );
        }
        Ok(())
    };
    need(start + 6, "section header")?;
    // Only the map marker is checked, as c-blosc2 checks it (not the 0x93 and 0xcd before).
    if b[start + 4] != 0xDE {
        bail!(
            corrupt,
            "{what}: map marker 0x{:02x} at byte {}, expected 0xde",
            b[start + 4],
            start + 4
        );
    }
    need(start + 7, "entry count")?;
    let n = u16_at(b, start + 5);
    if n > max {
        bail!(corrupt, "{what}: {n} entries, at most {max} allowed");
    }
    let mut pos = start + 7;
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        need(pos + 1, "name marker")?;
        let marker = b[pos];
        if marker & 0xE0 != 0xA0 {
            bail!(
                corrupt,
                "{what}: entry {i} name marker 0x{marker:02x} is not a fixstr"
            );
        }
        let nlen = usize::from(marker & 0x1F);
        pos += 1;
        need(pos + nlen + 5, "name and offset")?;
        let raw_name = b[pos..pos + nlen].to_vec();
        let name = show(&raw_name);
        pos += nlen;
        if b[pos] != 0xD2 {
            bail!(
                corrupt,
                "{what}: entry {name:?} offset marker 0x{:02x} is not int32",
                b[pos]
            );
        }
        let off = i32::from_be_bytes([b[pos + 1], b[pos + 2], b[pos + 3], b[pos + 4]]);
        pos += 5;
        if off < 0 {
            bail!(
                corrupt,
                "{what}: entry {name:?} has a negative offset {off}"
            );
        }
        let at = base + off as usize;
        if at + 5 > b.len() {
            bail!(
                corrupt,
                "{what}: entry {name:?} offset {off} is outside the section ({} bytes)",
                b.len() - base
            );
        }
        if b[at] != 0xC6 {
            bail!(
                corrupt,
                "{what}: entry {name:?} content marker 0x{:02x} is not bin32",
                b[at]
            );
        }
        let len = u32::from_be_bytes([b[at + 1], b[at + 2], b[at + 3], b[at + 4]]) as usize;
        if len > b.len() - (at + 5) {
            bail!(
                corrupt,
                "{what}: entry {name:?} content of {len} bytes runs past the end ({} bytes left)",
                b.len() - (at + 5)
            );
        }
        if out.iter().any(|(n, _): &(Vec<u8>, Vec<u8>)| *n == raw_name) {
            bail!(corrupt, "{what}: entry {name:?} appears twice");
        }
        out.push((raw_name, b[at + 5..at + 5 + len].to_vec()));
    }
    Ok(out)
}

/// Appends a section (markers, map, values) to `out`. `base` is where offsets count from.
/// c-blosc2 counts the index size from the `0x93` marker in the header and from the `0xCD`
/// marker in the trailer (`size_from_array`).
pub fn encode_section<'a>(
    entries: impl ExactSizeIterator<Item = (&'a [u8], &'a [u8])> + Clone,
    out: &mut Vec<u8>,
    base: usize,
    size_from_array: bool,
) {
    let start = out.len();
    let n = entries.len() as u16;
    out.push(0x93);
    out.push(0xCD);
    out.extend_from_slice(&[0, 0]);
    out.push(0xDE);
    out.extend_from_slice(&n.to_be_bytes());
    let mut offset_slots = Vec::with_capacity(entries.len());
    for (name, _) in entries.clone() {
        out.push(0xA0 | name.len() as u8);
        out.extend_from_slice(name);
        out.push(0xD2);
        offset_slots.push(out.len());
        out.extend_from_slice(&[0; 4]);
    }
    let from = if size_from_array { start } else { start + 1 };
    let idx_size = (out.len() - from) as u16;
    out[start + 2..start + 4].copy_from_slice(&idx_size.to_be_bytes());
    out.push(0xDC);
    out.extend_from_slice(&n.to_be_bytes());
    for ((_, content), slot) in entries.zip(offset_slots) {
        let off = (out.len() - base) as i32;
        out[slot..slot + 4].copy_from_slice(&off.to_be_bytes());
        out.push(0xC6);
        out.extend_from_slice(&(content.len() as u32).to_be_bytes());
        out.extend_from_slice(content);
    }
}

/// Parses the header's metalayer section (`b` is the whole header).
pub fn parse(b: &[u8]) -> Result<Vec<Metalayer>> {
    Ok(parse_section(
        b,
        super::header::FIXED_LEN,
        0,
        MAX_METALAYERS,
        "frame metalayers",
    )?
    .into_iter()
    .map(|(name, content)| Metalayer { name, content })
    .collect())
}

/// Appends the metalayer section to an encoded fixed header.
pub fn encode(metas: &[Metalayer], out: &mut Vec<u8>) {
    encode_section(
        metas
            .iter()
            .map(|m| (m.name.as_slice(), m.content.as_slice())),
        out,
        0,
        true,
    );
}
