//! The frame trailer: vlmetalayers and the trailer length, found from the end of the frame.
//!
//! Layout: `0x94`, version 1, then the metalayer-style section (`0x93`, `0xCD` u16, `0xDE` u16
//! n, names with `0xD2` offsets from the trailer start, `0xDC` u16 n, `0xC6` u32 length +
//! content), then `0xCE` u32 trailer_len and `0xD8` fixext 16 (fingerprint type, 16 bytes;
//! c-blosc2 writes type 0 and zeros and ignores them). The `0xCE` byte sits 23 bytes before
//! the end, which is how readers find the trailer's start.
//!
//! Each vlmetalayer's content is stored as a Blosc2 chunk; [`Vlmeta`] keeps it compressed.

use super::metalayers;
use crate::error::Result;

/// Most vlmetalayers c-blosc2 reads (`BLOSC2_MAX_VLMETALAYERS`).
pub const MAX_VLMETALAYERS: usize = 8192;
/// Most vlmetalayers c-blosc2 writes: its trailer writer refuses more than
/// `BLOSC2_MAX_METALAYERS`, and appending to a frame with more crashes it (a double free in
/// python-blosc2 4.14.1). So a frame gets no more from b2frame.
pub const MAX_VLMETALAYERS_WRITTEN: usize = 16;
/// Smallest trailer: no vlmetalayers.
pub const MIN_LEN: usize = 25;
/// Bytes after the trailer length field.
const TAIL: usize = 18;

/// A vlmetalayer: its name and its content as a compressed chunk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Vlmeta {
    pub name: Vec<u8>,
    pub chunk: Vec<u8>,
}

/// The trailer length recorded in the last 23 bytes of a frame.
pub fn trailer_len_from_end(end: &[u8]) -> Result<usize> {
    if end.len() < 23 {
        bail!(corrupt, "frame trailer: frame too short for a trailer");
    }
    // The 0xce marker before it is not checked, as c-blosc2 does not.
    let at = end.len() - 23;
    let len = u32::from_be_bytes([end[at + 1], end[at + 2], end[at + 3], end[at + 4]]) as usize;
    if len < MIN_LEN {
        bail!(
            corrupt,
            "frame trailer: trailer_len {len} is smaller than {MIN_LEN}"
        );
    }
    Ok(len)
}

/// Parses a whole trailer.
pub fn parse(t: &[u8]) -> Result<Vec<Vlmeta>> {
    if t.len() < MIN_LEN {
        bail!(
            corrupt,
            "frame trailer: {} bytes, at least {MIN_LEN} needed",
            t.len()
        );
    }
    // The array marker (0x94) and version byte are not checked, as c-blosc2 does not.
    let entries = metalayers::parse_section(
        &t[..t.len() - TAIL - 5],
        2,
        0,
        MAX_VLMETALAYERS,
        "frame vlmetalayers",
    )?;
    Ok(entries
        .into_iter()
        .map(|(name, chunk)| Vlmeta { name, chunk })
        .collect())
}

/// Serializes a trailer.
pub fn encode(vlmeta: &[Vlmeta]) -> Vec<u8> {
    let mut t = vec![0x94, 1];
    metalayers::encode_section(
        vlmeta
            .iter()
            .map(|v| (v.name.as_slice(), v.chunk.as_slice())),
        &mut t,
        0,
        false,
    );
    let len = (t.len() + 23) as u32;
    t.push(0xCE);
    t.extend_from_slice(&len.to_be_bytes());
    t.push(0xD8);
    t.push(0); // no fingerprint
    t.extend_from_slice(&[0; 16]);
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_trailer_is_35_bytes_as_c_blosc2_writes_it() {
        let t = encode(&[]);
        assert_eq!(t.len(), 35);
        assert_eq!(
            &t[..12],
            &[0x94, 1, 0x93, 0xCD, 0, 6, 0xDE, 0, 0, 0xDC, 0, 0]
        );
        assert_eq!(trailer_len_from_end(&t).unwrap(), 35);
        assert!(parse(&t).unwrap().is_empty());
    }

    #[test]
    fn round_trip() {
        let v = vec![
            Vlmeta {
                name: "a".into(),
                chunk: vec![1, 2, 3],
            },
            Vlmeta {
                name: "bb".into(),
                chunk: vec![9; 100],
            },
        ];
        let t = encode(&v);
        assert_eq!(trailer_len_from_end(&t).unwrap(), t.len());
        assert_eq!(parse(&t).unwrap(), v);
    }
}
