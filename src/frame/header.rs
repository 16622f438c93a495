//! The frame header: a msgpack array whose first 87 bytes sit at fixed positions (c-blosc2
//! writes and reads them by position), followed by the fixed-length metalayers.
//!
//! Layout (byte: field): 0 `0x9E` (fixarray 14); 1 `0xA8` + "b2frame\0"; 10 `0xD2` + header_len
//! (i32 BE); 15 `0xCF` + frame_len (u64 BE); 24 `0xA4` + general_flags, frame_type,
//! codec_flags, other_flags; 29 `0xD3` + nbytes (i64); 38 `0xD3` + cbytes (i64); 47 `0xD2` +
//! typesize; 52 `0xD2` + blocksize; 57 `0xD2` + chunksize; 62 `0xD1` + compression threads;
//! 65 `0xD1` + decompression threads; 68 has-vlmetalayers bool; 69 `0xD8` fixext 16 whose
//! type byte (70) is the number of filters, then 71..77 filters, 77 udcodec, 78 compcode_meta,
//! 79..85 filters_meta, 85 other_flags2, 86 reserved.

use super::metalayers::{self, Metalayer};
use crate::error::Result;

pub const MAGIC: &[u8; 8] = b"b2frame\0";
/// Length of the fixed part of the header.
pub const FIXED_LEN: usize = 87;
pub const HEADER_LEN_POS: usize = 11;
pub const FRAME_LEN_POS: usize = 16;
pub const FLAGS_POS: usize = 25;
pub const NBYTES_POS: usize = 30;
pub const CBYTES_POS: usize = 39;
pub const TYPESIZE_POS: usize = 48;
pub const BLOCKSIZE_POS: usize = 53;
pub const CHUNKSIZE_POS: usize = 58;
pub const NTHREADS_C_POS: usize = 63;
pub const NTHREADS_D_POS: usize = 66;
pub const HAS_VLMETA_POS: usize = 68;
pub const FILTERS_POS: usize = 70;

/// general_flags bits.
pub const VARIABLE_CHUNKS: u8 = 0x40;
pub const VL_BLOCKS: u8 = 0x80;
/// Frame format versions (general_flags low nibble).
pub const VERSION_RC1: u8 = 2;
pub const VERSION_VL_BLOCKS: u8 = 3;
/// Frame types.
pub const CONTIGUOUS: u8 = 0;
pub const SPARSE: u8 = 1;
/// other_flags2: use_dict.
pub const USE_DICT: u8 = 0x01;
/// Codec format value meaning "the codec id is in udcodec".
const UDCODEC_FORMAT: u8 = 6;
/// Most chunks an index can describe (c-blosc2's limit: the offsets must fit one chunk).
pub const MAX_NCHUNKS: i64 = 268_435_455;

/// A parsed frame header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameHeader {
    pub general_flags: u8,
    pub frame_type: u8,
    pub codec_flags: u8,
    pub other_flags: u8,
    pub header_len: usize,
    pub frame_len: u64,
    pub nbytes: i64,
    pub cbytes: i64,
    pub typesize: i32,
    pub blocksize: i32,
    /// Bytes per chunk; 0 for variable-length chunks; -1 before the first chunk.
    pub chunksize: i32,
    pub nthreads_c: i16,
    pub nthreads_d: i16,
    pub has_vlmeta: bool,
    pub filters: [u8; 6],
    pub filters_meta: [u8; 6],
    pub udcodec: u8,
    pub compcode_meta: u8,
    pub other_flags2: u8,
    pub metalayers: Vec<Metalayer>,
}

fn be_i32(b: &[u8], at: usize) -> i32 {
    i32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}
fn be_i64(b: &[u8], at: usize) -> i64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    i64::from_be_bytes(x)
}
fn be_i16(b: &[u8], at: usize) -> i16 {
    i16::from_be_bytes([b[at], b[at + 1]])
}

/// The msgpack type markers of the fixed header: (position, marker, field).
const MARKERS: [(usize, u8, &str); 13] = [
    (0, 0x9E, "array of 14 elements"),
    (1, 0xA8, "magic"),
    (10, 0xD2, "header_len"),
    (15, 0xCF, "frame_len"),
    (24, 0xA4, "flags"),
    (29, 0xD3, "nbytes"),
    (38, 0xD3, "cbytes"),
    (47, 0xD2, "typesize"),
    (52, 0xD2, "blocksize"),
    (57, 0xD2, "chunksize"),
    (62, 0xD1, "compression threads"),
    (65, 0xD1, "decompression threads"),
    (69, 0xD8, "filter pipeline"),
];

/// The fixed header's markers (and the has_vlmetalayers bool) that differ from a current
/// frame's: (position, byte, what was expected).
fn wrong_markers(b: &[u8]) -> Vec<(usize, u8, String)> {
    let mut wrong: Vec<(usize, u8, String)> = MARKERS
        .iter()
        .filter(|&&(at, m, _)| b[at] != m)
        .map(|&(at, m, what)| (at, b[at], format!("0x{m:02x} ({what})")))
        .collect();
    if !matches!(b[HAS_VLMETA_POS], 0xC2 | 0xC3) {
        let at = HAS_VLMETA_POS;
        wrong.push((at, b[at], "a bool (has_vlmetalayers)".into()));
    }
    wrong
}

/// Whether the fixed header `b` (at least [`FIXED_LEN`] bytes) has every msgpack marker of the
/// current layout after its first byte: a current frame, whatever that byte says.
pub fn has_current_markers(b: &[u8]) -> bool {
    wrong_markers(b).iter().all(|&(at, ..)| at == 0)
}

impl FrameHeader {
    /// The header length and frame length from the first bytes, before reading the rest.
    pub fn peek_lengths(b: &[u8]) -> Result<(usize, u64)> {
        if b.len() < FIXED_LEN {
            bail!(
                format,
                "not a Blosc2 frame: {} bytes is shorter than a frame header",
                b.len()
            );
        }
        // c-blosc2 reads the fields at their positions and checks neither the magic nor the
        // msgpack markers between them; one of those damaged (a flipped byte) still reads
        // there, and here. More than one, or the magic and a marker, is another file.
        let wrong = wrong_markers(b);
        if &b[2..10] != MAGIC && !wrong.is_empty() {
            bail!(format, "not a Blosc2 frame: no \"b2frame\" magic");
        }
        if wrong.len() > 1 {
            let list: Vec<String> = wrong
                .iter()
                .map(|(at, byte, expected)| format!("byte {at} is 0x{byte:02x}, not {expected}"))
                .collect();
            bail!(
                format,
                "frame header: {}: not a Blosc2 frame of a layout b2frame knows",
                list.join("; ")
            );
        }
        let header_len = be_i32(b, HEADER_LEN_POS);
        let frame_len = u64::from_be_bytes(
            b[FRAME_LEN_POS..FRAME_LEN_POS + 8]
                .try_into()
                .unwrap_or([0; 8]),
        );
        if header_len < FIXED_LEN as i32 {
            bail!(
                corrupt,
                "frame header: header_len {header_len} is smaller than {FIXED_LEN}"
            );
        }
        if frame_len > i64::MAX as u64 {
            bail!(
                corrupt,
                "frame header: frame_len {frame_len} is out of range"
            );
        }
        if header_len as u64 > frame_len {
            bail!(
                corrupt,
                "frame header: header_len {header_len} exceeds frame_len {frame_len}"
            );
        }
        Ok((header_len as usize, frame_len))
    }

    /// Parses a whole header (`b` holds at least `header_len` bytes).
    pub fn parse(b: &[u8]) -> Result<FrameHeader> {
        let (header_len, frame_len) = Self::peek_lengths(b)?;
        if b.len() < header_len {
            bail!(
                corrupt,
                "frame header: {header_len} bytes claimed, {} available",
                b.len()
            );
        }
        // The markers were checked by peek_lengths.
        let h = FrameHeader {
            general_flags: b[FLAGS_POS],
            frame_type: b[FLAGS_POS + 1],
            codec_flags: b[FLAGS_POS + 2],
            other_flags: b[FLAGS_POS + 3],
            header_len,
            frame_len,
            nbytes: be_i64(b, NBYTES_POS),
            cbytes: be_i64(b, CBYTES_POS),
            typesize: be_i32(b, TYPESIZE_POS),
            blocksize: be_i32(b, BLOCKSIZE_POS),
            chunksize: be_i32(b, CHUNKSIZE_POS),
            nthreads_c: be_i16(b, NTHREADS_C_POS),
            nthreads_d: be_i16(b, NTHREADS_D_POS),
            has_vlmeta: b[HAS_VLMETA_POS] == 0xC3,
            filters: b[71..77].try_into().unwrap_or([0; 6]),
            filters_meta: b[79..85].try_into().unwrap_or([0; 6]),
            udcodec: b[77],
            compcode_meta: b[78],
            other_flags2: b[85],
            metalayers: Vec::new(),
        };
        let nfilters = b[FILTERS_POS];
        if nfilters > 6 {
            bail!(corrupt, "frame header: {nfilters} filters (at most 6)");
        }
        h.validate()?;
        let metalayers = if header_len > FIXED_LEN {
            metalayers::parse(&b[..header_len])?
        } else {
            Vec::new()
        };
        Ok(FrameHeader { metalayers, ..h })
    }

    fn validate(&self) -> Result<()> {
        if self.version() > VERSION_VL_BLOCKS {
            bail!(
                format,
                "frame header: format version {} is newer than this library reads (up to {VERSION_VL_BLOCKS})",
                self.version()
            );
        }
        // general_flags bits 4-5 name the offsets' width: c-blosc2 writes 64 bits (0x10) and
        // reads 64 bits whatever they say, and so does this (commits write 0x10 back).
        if self.frame_type != CONTIGUOUS && self.frame_type != SPARSE {
            bail!(
                unsupported,
                "frame header: frame type {} is not contiguous (0) or sparse (1)",
                self.frame_type
            );
        }
        if self.typesize <= 0 {
            bail!(
                corrupt,
                "frame header: typesize {} is not positive",
                self.typesize
            );
        }
        if self.nbytes < 0 || self.cbytes < 0 {
            bail!(
                corrupt,
                "frame header: negative nbytes ({}) or cbytes ({})",
                self.nbytes,
                self.cbytes
            );
        }
        if self.chunksize < -1 {
            bail!(
                corrupt,
                "frame header: chunksize {} is negative",
                self.chunksize
            );
        }
        // A negative blocksize is read as 0 (automatic), as c-blosc2 reads chunks through it:
        // each chunk names its own.
        if self.chunksize > 0 {
            let n = (self.nbytes + i64::from(self.chunksize) - 1) / i64::from(self.chunksize);
            if n > MAX_NCHUNKS {
                bail!(
                    corrupt,
                    "frame header: {n} chunks exceed the maximum ({MAX_NCHUNKS})"
                );
            }
        }
        Ok(())
    }

    pub fn version(&self) -> u8 {
        self.general_flags & 0x0F
    }

    pub fn is_sparse(&self) -> bool {
        self.frame_type == SPARSE
    }

    /// The codec id (compcode).
    pub fn codec(&self) -> u8 {
        match self.codec_flags & 0x0F {
            UDCODEC_FORMAT => self.udcodec,
            // c-blosc2 stores the compcode here; lz4hc (2) is its own value.
            c => c,
        }
    }

    pub fn clevel(&self) -> u8 {
        self.codec_flags >> 4
    }

    pub fn splitmode(&self) -> u8 {
        (self.other_flags & 0x03) + 1
    }

    pub fn use_dict(&self) -> bool {
        self.other_flags2 & USE_DICT != 0
    }

    /// Number of chunks for a fixed chunksize (None for variable-length chunks: the index says).
    pub fn nchunks_from_sizes(&self) -> Option<i64> {
        if self.nbytes == 0 {
            Some(0)
        } else if self.chunksize > 0 {
            Some((self.nbytes + i64::from(self.chunksize) - 1) / i64::from(self.chunksize))
        } else {
            None
        }
    }

    /// Serializes the header (fixed part and metalayers); `header_len` is recomputed.
    pub fn encode(&self) -> Vec<u8> {
        let mut b = vec![0u8; FIXED_LEN];
        b[0] = 0x9E;
        b[1] = 0xA8;
        b[2..10].copy_from_slice(MAGIC);
        b[10] = 0xD2;
        b[15] = 0xCF;
        b[24] = 0xA4;
        b[29] = 0xD3;
        b[38] = 0xD3;
        b[47] = 0xD2;
        b[52] = 0xD2;
        b[57] = 0xD2;
        b[62] = 0xD1;
        b[65] = 0xD1;
        b[69] = 0xD8;
        b[FILTERS_POS] = 6;
        b[71..77].copy_from_slice(&self.filters);
        b[77] = self.udcodec;
        b[78] = self.compcode_meta;
        b[79..85].copy_from_slice(&self.filters_meta);
        b[85] = self.other_flags2;
        metalayers::encode(&self.metalayers, &mut b);
        let header_len = b.len();
        let mut h = self.clone();
        h.header_len = header_len;
        h.write_fixed(&mut b);
        b
    }

    /// Writes the mutable fixed fields (lengths, flags, sizes) into an encoded header.
    pub fn write_fixed(&self, b: &mut [u8]) {
        b[HEADER_LEN_POS..HEADER_LEN_POS + 4]
            .copy_from_slice(&(self.header_len as i32).to_be_bytes());
        b[FRAME_LEN_POS..FRAME_LEN_POS + 8].copy_from_slice(&self.frame_len.to_be_bytes());
        b[FLAGS_POS] = self.general_flags;
        b[FLAGS_POS + 1] = self.frame_type;
        b[FLAGS_POS + 2] = self.codec_flags;
        b[FLAGS_POS + 3] = self.other_flags;
        b[NBYTES_POS..NBYTES_POS + 8].copy_from_slice(&self.nbytes.to_be_bytes());
        b[CBYTES_POS..CBYTES_POS + 8].copy_from_slice(&self.cbytes.to_be_bytes());
        b[TYPESIZE_POS..TYPESIZE_POS + 4].copy_from_slice(&self.typesize.to_be_bytes());
        b[BLOCKSIZE_POS..BLOCKSIZE_POS + 4].copy_from_slice(&self.blocksize.to_be_bytes());
        b[CHUNKSIZE_POS..CHUNKSIZE_POS + 4].copy_from_slice(&self.chunksize.to_be_bytes());
        b[NTHREADS_C_POS..NTHREADS_C_POS + 2].copy_from_slice(&self.nthreads_c.to_be_bytes());
        b[NTHREADS_D_POS..NTHREADS_D_POS + 2].copy_from_slice(&self.nthreads_d.to_be_bytes());
        b[HAS_VLMETA_POS] = if self.has_vlmeta { 0xC3 } else { 0xC2 };
    }

    /// Sets general_flags as c-blosc2 writes them: version 2, or 3 with variable-length chunks
    /// or blocks; 64-bit offsets.
    pub fn set_general_flags(&mut self, vl_blocks: bool) {
        let variable = self.chunksize == 0;
        let mut f = if variable || vl_blocks {
            VERSION_VL_BLOCKS
        } else {
            VERSION_RC1
        };
        f |= 0x10;
        if variable {
            f |= VARIABLE_CHUNKS;
        }
        if vl_blocks {
            f |= VL_BLOCKS;
        }
        self.general_flags = f;
    }

    /// The codec flags byte for a codec id and clevel.
    pub fn codec_flags_for(codec: u8, clevel: u8) -> u8 {
        let c = if codec >= 6 { UDCODEC_FORMAT } else { codec };
        c | (clevel << 4)
    }
}
