//! The "b2nd" metalayer (and the older "caterva" one) that makes a frame an n-dim array.
//!
//! b2nd, as c-blosc2 writes it: `0x97`, version 0, ndim, `0x90+nd` × (`0xD3` int64) shape,
//! `0x90+nd` × (`0xD2` int32) chunkshape, the same for blockshape, dtype_format (0 = NumPy),
//! `0xDB` u32 length + dtype string. caterva: `0x95`, version, ndim, shape, partshape
//! (= chunkshape), blockshape; no dtype. Integers are read in any msgpack integer encoding.

use crate::error::{Error, Result};

/// Most dimensions an array has (c-blosc2's `B2ND_MAX_DIM`).
pub const MAX_DIM: usize = 16;

/// An array's description.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NdMeta {
    pub version: u8,
    pub shape: Vec<i64>,
    pub chunkshape: Vec<i32>,
    pub blockshape: Vec<i32>,
    pub dtype_format: u8,
    /// None for caterva arrays (no dtype stored).
    pub dtype: Option<String>,
}

impl NdMeta {
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }
}

fn err(what: &str, e: impl std::fmt::Display) -> Error {
    Error::corrupt(format_args!("{what} metalayer: {e}"))
}

fn read_len(rd: &mut &[u8], what: &str, field: &str) -> Result<usize> {
    rmp::decode::read_array_len(rd)
        .map(|n| n as usize)
        .map_err(|e| err(what, format_args!("{field}: {e}")))
}

fn read_i64(rd: &mut &[u8], what: &str, field: &str) -> Result<i64> {
    rmp::decode::read_int::<i64, _>(rd).map_err(|e| err(what, format_args!("{field}: {e}")))
}

fn read_dims(rd: &mut &[u8], ndim: usize, what: &str, field: &str) -> Result<Vec<i64>> {
    // c-blosc2 writes the marker 0x90 + ndim, a msgpack fixarray up to 15 dimensions but 0xa0
    // (a fixstr) for 16, and reads it back by skipping it: taken here as it writes it.
    let n = match rd.split_first() {
        Some((&m, rest)) if usize::from(m) == 0x90 + ndim => {
            *rd = rest;
            ndim
        }
        _ => read_len(rd, what, field)?,
    };
    if n != ndim {
        return Err(err(
            what,
            format_args!("{field} has {n} entries for {ndim} dimensions"),
        ));
    }
    (0..n).map(|_| read_i64(rd, what, field)).collect()
}

fn to_i32(v: Vec<i64>, what: &str, field: &str) -> Result<Vec<i32>> {
    v.into_iter()
        .map(|x| {
            i32::try_from(x)
                .map_err(|_| err(what, format_args!("{field} value {x} does not fit int32")))
        })
        .collect()
}

/// Parses a b2nd (`caterva == false`) or caterva metalayer.
pub fn parse(bytes: &[u8], caterva: bool) -> Result<NdMeta> {
    let what = if caterva { "caterva" } else { "b2nd" };
    let mut rd = bytes;
    let n = read_len(&mut rd, what, "top-level array")?;
    let want = if caterva { 5 } else { 7 };
    // b2nd metalayers without the two dtype entries are read too (no dtype).
    if n != want && (caterva || n != 5) {
        return Err(err(
            what,
            format_args!("array of {n} entries, expected {want}"),
        ));
    }
    let version = read_i64(&mut rd, what, "version")?;
    let ndim = read_i64(&mut rd, what, "ndim")?;
    if !(0..=MAX_DIM as i64).contains(&ndim) {
        return Err(err(
            what,
            format_args!("ndim {ndim} is outside 0..={MAX_DIM}"),
        ));
    }
    let ndim = ndim as usize;
    let shape = read_dims(&mut rd, ndim, what, "shape")?;
    let chunkshape = to_i32(
        read_dims(&mut rd, ndim, what, "chunkshape")?,
        what,
        "chunkshape",
    )?;
    let blockshape = to_i32(
        read_dims(&mut rd, ndim, what, "blockshape")?,
        what,
        "blockshape",
    )?;
    let (dtype_format, dtype) = if n == 7 {
        let fmt = read_i64(&mut rd, what, "dtype format")?;
        let len = rmp::decode::read_str_len(&mut rd)
            .map_err(|e| err(what, format_args!("dtype: {e}")))? as usize;
        if len > rd.len() {
            return Err(err(
                what,
                format_args!(
                    "dtype of {len} bytes runs past the metalayer ({} left)",
                    rd.len()
                ),
            ));
        }
        let s = std::str::from_utf8(&rd[..len]).map_err(|_| err(what, "dtype is not UTF-8"))?;
        (
            u8::try_from(fmt).map_err(|_| err(what, format_args!("dtype format {fmt}")))?,
            Some(s.to_string()),
        )
    } else {
        (0, None)
    };
    Ok(NdMeta {
        version: u8::try_from(version).unwrap_or(0),
        shape,
        chunkshape,
        blockshape,
        dtype_format,
        dtype,
    })
}

/// Encodes a b2nd metalayer exactly as c-blosc2's `b2nd_serialize_meta`.
pub fn encode(m: &NdMeta) -> Vec<u8> {
    let nd = m.ndim() as u8;
    let dtype = m.dtype.as_deref().unwrap_or("|u1");
    let mut out = vec![0x97, 0, nd, 0x90 + nd];
    for &s in &m.shape {
        out.push(0xD3);
        out.extend_from_slice(&s.to_be_bytes());
    }
    for dims in [&m.chunkshape, &m.blockshape] {
        out.push(0x90 + nd);
        for &d in dims.iter() {
            out.push(0xD2);
            out.extend_from_slice(&d.to_be_bytes());
        }
    }
    out.push(m.dtype_format);
    out.push(0xDB);
    out.extend_from_slice(&(dtype.len() as u32).to_be_bytes());
    out.extend_from_slice(dtype.as_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sixteen_dimensions_round_trip_as_c_blosc2_writes_them() {
        let m = NdMeta {
            version: 0,
            shape: (1..=16).collect(),
            chunkshape: vec![1; 16],
            blockshape: vec![1; 16],
            dtype_format: 0,
            dtype: Some("<f8".into()),
        };
        let b = encode(&m);
        assert_eq!(b[3], 0xA0, "c-blosc2's marker for 16 entries");
        assert_eq!(parse(&b, false).unwrap(), m);
    }
}
