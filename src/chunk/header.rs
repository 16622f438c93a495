//! Chunk header: 16 bytes (Blosc1), extended to 32 (Blosc2) when `flags` has both shuffle bits.
//!
//! Parsing validates every field against the buffer before anything indexes with it, with the
//! checks c-blosc2's `read_chunk_header` makes and a few it does not.

use super::{EXTENDED_HEADER_LEN, MAX_BLOCKSIZE, MIN_HEADER_LEN};
use crate::error::{Error, Result};
use crate::filters;

/// `flags` bits.
pub const DOSHUFFLE: u8 = 0x01;
pub const MEMCPYED: u8 = 0x02;
pub const DOBITSHUFFLE: u8 = 0x04;
pub const DODELTA: u8 = 0x08;
pub const DONT_SPLIT: u8 = 0x10;
/// `blosc2_flags` bits.
pub const USEDICT: u8 = 0x01;
pub const BIGENDIAN: u8 = 0x02;
pub const LAZY: u8 = 0x08;
pub const INSTR_CODEC: u8 = 0x80;
/// The special value's kind ([`SpecialValue`]).
const SPECIAL_BITS: u8 = 0x70;
/// `blosc2_flags2` bits.
pub const VL_BLOCKS: u8 = 0x01;

/// Chunk format versions (`version` byte).
pub const VERSION_BLOSC1: u8 = 2;
pub const VERSION_ALPHA: u8 = 3;
pub const VERSION_STABLE: u8 = 5;
pub const VERSION_VL_BLOCKS: u8 = 6;

/// Codec formats stored in `flags` bits 5-7.
pub const FORMAT_BLOSCLZ: u8 = 0;
pub const FORMAT_LZ4: u8 = 1;
pub const FORMAT_ZLIB: u8 = 3;
pub const FORMAT_ZSTD: u8 = 4;
pub const FORMAT_UDCODEC: u8 = 6;

/// The special value a whole chunk stands for (bits 4-6 of `blosc2_flags`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpecialValue {
    None = 0,
    Zero = 1,
    Nan = 2,
    Value = 3,
    Uninit = 4,
}

impl SpecialValue {
    fn from_bits(bits: u8) -> Result<SpecialValue> {
        Ok(match bits {
            0 => SpecialValue::None,
            1 => SpecialValue::Zero,
            2 => SpecialValue::Nan,
            3 => SpecialValue::Value,
            4 => SpecialValue::Uninit,
            n => {
                return Err(Error::corrupt(format_args!(
                    "chunk header: unknown special value kind {n}"
                )))
            }
        })
    }
}

/// A parsed and validated chunk header.
///
/// The header's bytes are kept as stored, in one array, and read through accessors: built
/// field by field, single bytes at a time, the struct was later copied (or a field of it
/// read) with wider loads than those stores, and each such load stalled (store forwarding
/// fails when a load spans several stores), several nanoseconds per chunk decoded.
///
/// The sizes too are read from those bytes. Kept beside them as `usize` fields, written by
/// three 8-byte stores, they were copied into the decoder with a 16-byte load over two of
/// those stores: after a 64 KiB chunk stored raw, that load waited for the previous call's
/// copy to leave the store buffer, 40 ns a call (2% of the chunk's decode).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChunkHeader {
    /// The 32 bytes of a Blosc2 header as stored; for a Blosc1 header its 16, then the
    /// filter pipeline its flags stand for, the rest zero. The sizes in it are validated
    /// as not negative (or set from a `usize` by this library's writer), so they read as
    /// stored.
    raw: [u8; EXTENDED_HEADER_LEN],
}

/// Where each field lives in the header (and in [`ChunkHeader`]'s copy of it).
const AT_VERSION: usize = 0;
const AT_VERSIONLZ: usize = 1;
const AT_FLAGS: usize = 2;
const AT_TYPESIZE: usize = 3;
const AT_NBYTES: usize = 4;
const AT_BLOCKSIZE: usize = 8;
const AT_CBYTES: usize = 12;
const AT_FILTERS: usize = 16;
const AT_UDCODEC: usize = 22;
const AT_COMPCODE_META: usize = 23;
const AT_FILTERS_META: usize = 24;
const AT_FLAGS2: usize = 30;
const AT_BLOSC2_FLAGS: usize = 31;

fn le_i32(b: &[u8], at: usize) -> i32 {
    i32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

impl ChunkHeader {
    /// A Blosc2 header for a chunk this library writes: format version 5, no flags but the
    /// extended-header pair (the writer adds the rest), cbytes of the header alone.
    pub fn new_extended(
        typesize: u8,
        nbytes: usize,
        blocksize: usize,
        filters: [u8; 6],
        filters_meta: [u8; 6],
        udcodec: u8,
    ) -> ChunkHeader {
        let mut raw = [0u8; EXTENDED_HEADER_LEN];
        raw[AT_VERSION] = VERSION_STABLE;
        raw[AT_VERSIONLZ] = 1;
        raw[AT_FLAGS] = DOSHUFFLE | DOBITSHUFFLE;
        raw[AT_TYPESIZE] = typesize;
        raw[AT_FILTERS..AT_FILTERS + 6].copy_from_slice(&filters);
        raw[AT_UDCODEC] = udcodec;
        raw[AT_FILTERS_META..AT_FILTERS_META + 6].copy_from_slice(&filters_meta);
        let mut h = ChunkHeader { raw };
        h.set_size(AT_NBYTES, nbytes);
        h.set_size(AT_BLOCKSIZE, blocksize);
        h.set_size(AT_CBYTES, EXTENDED_HEADER_LEN);
        h
    }

    /// A header with every field zero, to [`ChunkHeader::parse_into`].
    pub const EMPTY: ChunkHeader = ChunkHeader {
        raw: [0; EXTENDED_HEADER_LEN],
    };

    /// Parses the header at the start of `chunk`, validating it against `chunk.len()`.
    #[inline(always)]
    pub fn parse(chunk: &[u8]) -> Result<ChunkHeader> {
        let mut h = Self::EMPTY;
        Self::parse_into(chunk, &mut h)?;
        Ok(h)
    }

    /// [`ChunkHeader::parse`] into `h`, which is left unspecified on an error.
    ///
    /// For a caller that keeps the header in place: returned in a `Result`, the header went
    /// through six copies, one per `Result` and `?` on the way, each of its loads waiting on
    /// the store before it (a third of `Decoder::new`'s perf samples).
    #[inline(always)]
    pub fn parse_into(chunk: &[u8], h: &mut ChunkHeader) -> Result<()> {
        Self::parse_prefix_into(chunk, h)?;
        if h.cbytes() > chunk.len() {
            bail!(
                corrupt,
                "chunk header: cbytes {} is larger than the buffer ({} bytes)",
                h.cbytes(),
                chunk.len()
            );
        }
        Ok(())
    }

    /// Parses and validates a header from the first bytes of a chunk (at least its header),
    /// without requiring the whole chunk to be present.
    #[inline(always)]
    pub fn parse_prefix(chunk: &[u8]) -> Result<ChunkHeader> {
        let mut h = Self::EMPTY;
        Self::parse_prefix_into(chunk, &mut h)?;
        Ok(h)
    }

    /// [`ChunkHeader::parse_prefix`] into `h`, which is left unspecified on an error.
    ///
    /// Always inlined: out of line, its result was copied with 16-byte loads over its 8-byte
    /// stores, a store-forwarding stall that cost shuffled 1 KiB decodes 12-15%.
    #[inline(always)]
    fn parse_prefix_into(chunk: &[u8], h: &mut ChunkHeader) -> Result<()> {
        if chunk.len() < MIN_HEADER_LEN {
            bail!(
                corrupt,
                "chunk header: {MIN_HEADER_LEN} bytes needed, buffer has {}",
                chunk.len()
            );
        }
        let nbytes = le_i32(chunk, AT_NBYTES);
        let blocksize = le_i32(chunk, AT_BLOCKSIZE);
        let cbytes = le_i32(chunk, AT_CBYTES);
        if nbytes < 0 {
            bail!(corrupt, "chunk header: negative nbytes ({nbytes})");
        }
        if cbytes < MIN_HEADER_LEN as i32 {
            bail!(
                corrupt,
                "chunk header: cbytes {cbytes} is smaller than the header"
            );
        }
        if blocksize <= 0 {
            bail!(
                corrupt,
                "chunk header: blocksize {blocksize} is not positive"
            );
        }
        if blocksize as usize > MAX_BLOCKSIZE {
            bail!(
                corrupt,
                "chunk header: blocksize {blocksize} exceeds the maximum ({MAX_BLOCKSIZE})"
            );
        }
        if chunk[AT_TYPESIZE] == 0 {
            bail!(corrupt, "chunk header: typesize is 0");
        }
        let flags = chunk[AT_FLAGS];
        if flags & (DOSHUFFLE | DOBITSHUFFLE) == (DOSHUFFLE | DOBITSHUFFLE) {
            if (cbytes as usize) < EXTENDED_HEADER_LEN {
                bail!(
                    corrupt,
                    "chunk header: cbytes {cbytes} is smaller than the extended header"
                );
            }
            let Some(raw) = chunk.first_chunk::<EXTENDED_HEADER_LEN>() else {
                bail!(
                    corrupt,
                    "chunk header: {EXTENDED_HEADER_LEN} bytes needed for the extended header, buffer has {}",
                    chunk.len()
                );
            };
            h.raw = *raw;
            // Blosc2 alpha chunks did not initialize the last slot.
            if h.version() == VERSION_ALPHA {
                h.raw[AT_FILTERS + 5] = 0;
                h.raw[AT_FILTERS_META + 5] = 0;
            }
            h.check_extended()?;
        } else {
            h.fill_blosc1(chunk);
        }
        debug_assert_eq!(
            (h.nbytes(), h.blocksize(), h.cbytes()),
            (nbytes as usize, blocksize as usize, cbytes as usize)
        );
        if h.version() > VERSION_VL_BLOCKS && h.blosc2_flags2() & !VL_BLOCKS != 0 {
            bail!(
                unsupported,
                "chunk header: format version {} with unknown features (flags2 0x{:02x})",
                h.version(),
                h.blosc2_flags2()
            );
        }
        if h.vl_blocks() && h.memcpyed() {
            bail!(
                corrupt,
                "chunk header: variable-length-block chunks cannot be memcpyed"
            );
        }
        if !h.vl_blocks() && nbytes > 0 && blocksize > nbytes {
            h.set_blocksize(nbytes as usize);
        }
        Ok(())
    }

    /// The raw bytes of a Blosc1 header (`chunk` holds at least its 16), with the pipeline its
    /// flags stand for. Out of line: older releases' chunks, kept off the common path.
    #[cold]
    #[inline(never)]
    fn fill_blosc1(&mut self, chunk: &[u8]) {
        self.raw = [0; EXTENDED_HEADER_LEN];
        self.raw[..MIN_HEADER_LEN].copy_from_slice(&chunk[..MIN_HEADER_LEN]);
        let pipeline = filters_from_flags(self.flags());
        self.raw[AT_FILTERS..AT_FILTERS + 6].copy_from_slice(&pipeline);
    }

    /// The checks only an extended header's fields call for. Inlined for the common case,
    /// neither special nor lazy, where nothing applies: out of line it was a call on every
    /// chunk, its result returned through memory (20 instructions a 1 KiB decode).
    #[inline(always)]
    fn check_extended(&self) -> Result<()> {
        if self.blosc2_flags() & (SPECIAL_BITS | LAZY) == 0 {
            return Ok(());
        }
        self.check_special_or_lazy()
    }

    /// [`ChunkHeader::check_extended`] of a special or lazy chunk.
    #[inline(never)]
    fn check_special_or_lazy(&self) -> Result<()> {
        let special = self.special()?;
        if self.vl_blocks() && special != SpecialValue::None {
            bail!(
                corrupt,
                "chunk header: variable-length-block chunks cannot be special"
            );
        }
        match special {
            SpecialValue::None => {}
            SpecialValue::Value => {
                let item = self.cbytes() - EXTENDED_HEADER_LEN;
                if item == 0 {
                    bail!(
                        corrupt,
                        "chunk header: repeated-value chunk without a value"
                    );
                }
                if item > self.nbytes() || !self.nbytes().is_multiple_of(item) {
                    bail!(
                        corrupt,
                        "chunk header: nbytes {} is not a multiple of the repeated value's size {item}",
                        self.nbytes()
                    );
                }
            }
            SpecialValue::Zero => {}
            SpecialValue::Nan | SpecialValue::Uninit => {
                if !self.nbytes().is_multiple_of(usize::from(self.typesize())) {
                    bail!(
                        corrupt,
                        "chunk header: nbytes {} is not a multiple of typesize {}",
                        self.nbytes(),
                        self.typesize()
                    );
                }
            }
        }
        if self.blosc2_flags() & LAZY != 0 && special == SpecialValue::None {
            bail!(
                unsupported,
                "chunk header: lazy chunks exist only inside c-blosc2's memory, not in files"
            );
        }
        Ok(())
    }

    pub fn version(&self) -> u8 {
        self.raw[AT_VERSION]
    }

    pub fn versionlz(&self) -> u8 {
        self.raw[AT_VERSIONLZ]
    }

    pub fn flags(&self) -> u8 {
        self.raw[AT_FLAGS]
    }

    /// Sets `bits` in `flags`.
    pub fn add_flags(&mut self, bits: u8) {
        self.raw[AT_FLAGS] |= bits;
    }

    /// The typesize byte as stored (for special `Value` chunks see [`ChunkHeader::item_size`]).
    pub fn typesize(&self) -> u8 {
        self.raw[AT_TYPESIZE]
    }

    /// The filter pipeline (for Blosc1 headers, derived from `flags` as c-blosc2 does).
    pub fn filters(&self) -> [u8; 6] {
        let mut f = [0; 6];
        f.copy_from_slice(&self.raw[AT_FILTERS..AT_FILTERS + 6]);
        f
    }

    pub fn filters_meta(&self) -> [u8; 6] {
        let mut m = [0; 6];
        m.copy_from_slice(&self.raw[AT_FILTERS_META..AT_FILTERS_META + 6]);
        m
    }

    pub fn udcodec(&self) -> u8 {
        self.raw[AT_UDCODEC]
    }

    pub fn compcode_meta(&self) -> u8 {
        self.raw[AT_COMPCODE_META]
    }

    pub fn blosc2_flags2(&self) -> u8 {
        self.raw[AT_FLAGS2]
    }

    pub fn blosc2_flags(&self) -> u8 {
        self.raw[AT_BLOSC2_FLAGS]
    }

    /// Sets `bits` in `blosc2_flags`.
    pub fn add_blosc2_flags(&mut self, bits: u8) {
        self.raw[AT_BLOSC2_FLAGS] |= bits;
    }

    /// Clears `bits` in `blosc2_flags`.
    pub fn remove_blosc2_flags(&mut self, bits: u8) {
        self.raw[AT_BLOSC2_FLAGS] &= !bits;
    }

    /// Reads only nbytes, cbytes and blocksize, as `blosc2_cbuffer_sizes` does.
    pub fn sizes(chunk: &[u8]) -> Result<(usize, usize, usize)> {
        let h = ChunkHeader::parse(chunk)?;
        Ok((h.nbytes(), h.cbytes(), h.blocksize()))
    }

    /// Whether this is a 32-byte Blosc2 header.
    pub fn is_extended(&self) -> bool {
        self.flags() & (DOSHUFFLE | DOBITSHUFFLE) == (DOSHUFFLE | DOBITSHUFFLE)
    }

    pub fn header_len(&self) -> usize {
        if self.is_extended() {
            EXTENDED_HEADER_LEN
        } else {
            MIN_HEADER_LEN
        }
    }

    pub fn memcpyed(&self) -> bool {
        self.flags() & MEMCPYED != 0
    }

    /// Whether blocks are stored as one stream (not split by byte of the type).
    pub fn dont_split(&self) -> bool {
        self.flags() & DONT_SPLIT != 0
    }

    pub fn vl_blocks(&self) -> bool {
        self.blosc2_flags2() & VL_BLOCKS != 0
    }

    pub fn use_dict(&self) -> bool {
        self.is_extended() && self.blosc2_flags() & USEDICT != 0
    }

    #[inline]
    pub fn special(&self) -> Result<SpecialValue> {
        let bits = self.blosc2_flags() & SPECIAL_BITS;
        if bits == 0 || !self.is_extended() {
            return Ok(SpecialValue::None);
        }
        SpecialValue::from_bits(bits >> 4)
    }

    /// The codec format in `flags` bits 5-7.
    pub fn compformat(&self) -> u8 {
        self.flags() >> 5
    }

    /// The codec id (compcode): the format, or the user codec byte for format 6.
    pub fn compcode(&self) -> u8 {
        match self.compformat() {
            FORMAT_BLOSCLZ => crate::codecs::BLOSCLZ,
            FORMAT_LZ4 => {
                if self.is_extended() && self.udcodec() == crate::codecs::LZ4HC {
                    crate::codecs::LZ4HC
                } else {
                    crate::codecs::LZ4
                }
            }
            FORMAT_ZLIB => crate::codecs::ZLIB,
            FORMAT_ZSTD => crate::codecs::ZSTD,
            FORMAT_UDCODEC => self.udcodec(),
            other => other,
        }
    }

    /// Size of one item: the stored typesize, or for a repeated-value chunk the value's size.
    pub fn item_size(&self) -> usize {
        if self.special().ok() == Some(SpecialValue::Value) {
            self.cbytes() - EXTENDED_HEADER_LEN
        } else {
            usize::from(self.typesize())
        }
    }

    /// Writes the header into the first 16 or 32 bytes of `out`.
    pub fn write(&self, out: &mut [u8]) {
        let n = self.header_len();
        out[..n].copy_from_slice(&self.raw[..n]);
    }

    /// Uncompressed bytes.
    #[inline(always)]
    pub fn nbytes(&self) -> usize {
        self.size(AT_NBYTES)
    }

    /// Bytes per block (capped at nbytes when that is not 0); for variable-length-block
    /// chunks, the number of blocks.
    #[inline(always)]
    pub fn blocksize(&self) -> usize {
        self.size(AT_BLOCKSIZE)
    }

    /// Bytes of the whole chunk, header included.
    #[inline(always)]
    pub fn cbytes(&self) -> usize {
        self.size(AT_CBYTES)
    }

    pub fn set_blocksize(&mut self, blocksize: usize) {
        self.set_size(AT_BLOCKSIZE, blocksize);
    }

    pub fn set_cbytes(&mut self, cbytes: usize) {
        self.set_size(AT_CBYTES, cbytes);
    }

    #[inline(always)]
    fn size(&self, at: usize) -> usize {
        le_i32(&self.raw, at) as usize
    }

    /// Sizes are written by this library's compressor, which keeps buffers under 2 GiB.
    fn set_size(&mut self, at: usize, n: usize) {
        let n = i32::try_from(n).expect("chunk sizes fit in an i32");
        self.raw[at..at + 4].copy_from_slice(&n.to_le_bytes());
    }
}

/// The pipeline a Blosc1 header's flags stand for (c-blosc2's `flags_to_filters`).
fn filters_from_flags(flags: u8) -> [u8; 6] {
    let mut f = [0u8; 6];
    if flags & DOSHUFFLE != 0 {
        f[5] = filters::SHUFFLE;
    }
    if flags & DOBITSHUFFLE != 0 {
        f[5] = filters::BITSHUFFLE;
    }
    if flags & DODELTA != 0 {
        f[4] = filters::DELTA;
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 32-byte header of `nbytes` and `blocksize` (shuffle, typesize 4), header only.
    fn header_bytes(nbytes: usize, blocksize: usize) -> [u8; EXTENDED_HEADER_LEN] {
        let h = ChunkHeader::new_extended(4, nbytes, blocksize, [0, 0, 0, 0, 0, 1], [0; 6], 0);
        let mut out = [0u8; EXTENDED_HEADER_LEN];
        h.write(&mut out);
        out
    }

    #[test]
    fn sizes_are_read_from_and_written_to_the_stored_bytes() {
        let mut h = ChunkHeader::new_extended(8, 70_000, 16_384, [0; 6], [0; 6], 0);
        h.set_cbytes(1_234);
        h.set_blocksize(8_192);
        let mut out = [0u8; EXTENDED_HEADER_LEN];
        h.write(&mut out);
        assert_eq!(le_i32(&out, AT_NBYTES), 70_000);
        assert_eq!(le_i32(&out, AT_BLOCKSIZE), 8_192);
        assert_eq!(le_i32(&out, AT_CBYTES), 1_234);
        let mut chunk = out.to_vec();
        chunk.resize(1_234, 0);
        let parsed = ChunkHeader::parse(&chunk).unwrap();
        assert_eq!(
            (parsed.nbytes(), parsed.blocksize(), parsed.cbytes()),
            (70_000, 8_192, 1_234)
        );
        assert_eq!(parsed, h);
    }

    #[test]
    fn a_blocksize_over_nbytes_is_capped_and_written_capped() {
        let raw = header_bytes(100, 400);
        let h = ChunkHeader::parse(&raw).unwrap();
        assert_eq!((h.nbytes(), h.blocksize(), h.cbytes()), (100, 100, 32));
        let mut out = [0u8; EXTENDED_HEADER_LEN];
        h.write(&mut out);
        assert_eq!(le_i32(&out, AT_BLOCKSIZE), 100);
        // With nbytes 0 nothing caps it.
        let h = ChunkHeader::parse(&header_bytes(0, 400)).unwrap();
        assert_eq!(h.blocksize(), 400);
    }

    #[test]
    fn blosc1_headers_keep_their_sizes() {
        let mut raw = [0u8; MIN_HEADER_LEN];
        raw[AT_VERSION] = 2;
        raw[AT_VERSIONLZ] = 1;
        raw[AT_FLAGS] = DOSHUFFLE;
        raw[AT_TYPESIZE] = 4;
        raw[AT_NBYTES..AT_NBYTES + 4].copy_from_slice(&4_000i32.to_le_bytes());
        raw[AT_BLOCKSIZE..AT_BLOCKSIZE + 4].copy_from_slice(&1_024i32.to_le_bytes());
        raw[AT_CBYTES..AT_CBYTES + 4].copy_from_slice(&16i32.to_le_bytes());
        let h = ChunkHeader::parse(&raw).unwrap();
        assert_eq!((h.nbytes(), h.blocksize(), h.cbytes()), (4_000, 1_024, 16));
        assert_eq!(h.filters(), [0, 0, 0, 0, 0, filters::SHUFFLE]);
    }
}
