//! The frame layout of c-blosc2 up to 2.0.0-beta.1 (frame-format-legacy.rst), read only:
//! an 11-element header (12 with metalayers) with no blocksize and no filter pipeline, then
//! the chunks, then the index chunk with offsets of 16, 32 or 64 bits. There is no trailer.
//!
//! Layout (byte: field): 0 `0x9B`/`0x9C`; 1 `0xA8` + "b2frame\0"; 10 `0xD2` header_size;
//! 15 `0xCF` frame_size; 24 `0xA4` general_flags, filter_flags, codec_flags, reserved;
//! 29 `0xD3` nbytes; 38 `0xD3` cbytes; 47 `0xD2` typesize; 52 `0xD2` chunksize; 57 `0xD1`
//! compression threads; 60 `0xD1` decompression threads; 63 has-metalayers bool; 64 the
//! metalayer section (as in current frames). general_flags: bits 0-1 version, bits 2-3 frame
//! type (2 = frame), bits 4-5 offset size (0: 16, 1: 32, 2: 64 bits), bit 6 variable chunks.
//! Offsets count from the end of the header, as in current frames.

use super::header::{self, FrameHeader};
use super::{metalayers, Frame, Store};
use crate::chunk::{self, ChunkHeader};
use crate::error::Result;

/// Where the metalayer section starts in a legacy header.
const METALAYERS_POS: usize = 64;

fn be<const N: usize>(b: &[u8], at: usize) -> [u8; N] {
    let mut x = [0u8; N];
    x.copy_from_slice(&b[at..at + N]);
    x
}

fn expect(b: &[u8], at: usize, marker: u8, what: &str) -> Result<()> {
    if b[at] != marker {
        bail!(
            format,
            "legacy frame header: {what} at byte {at} has marker 0x{:02x}, expected 0x{marker:02x}",
            b[at]
        );
    }
    Ok(())
}

/// Reads a legacy frame whose bytes (from the frame start) number `avail`.
pub fn parse(store: Store, avail: u64) -> Result<Frame> {
    let start = store.read(0, METALAYERS_POS as u64)?;
    let with_metas = start[0] == 0x9C;
    for (at, m, what) in [
        (1, 0xA8, "magic"),
        (10, 0xD2, "header_size"),
        (15, 0xCF, "frame_size"),
        (24, 0xA4, "flags"),
        (29, 0xD3, "nbytes"),
        (38, 0xD3, "cbytes"),
        (47, 0xD2, "typesize"),
        (52, 0xD2, "chunksize"),
        (57, 0xD1, "compression threads"),
        (60, 0xD1, "decompression threads"),
    ] {
        expect(&start, at, m, what)?;
    }
    let header_len = i32::from_be_bytes(be(&start, 11));
    let frame_len = u64::from_be_bytes(be(&start, 16));
    let (gflags, codec_flags) = (start[25], start[27]);
    let nbytes = i64::from_be_bytes(be(&start, 30));
    let cbytes = i64::from_be_bytes(be(&start, 39));
    let typesize = i32::from_be_bytes(be(&start, 48));
    let chunksize = i32::from_be_bytes(be(&start, 53));
    let nthreads_c = i16::from_be_bytes(be(&start, 58));
    let nthreads_d = i16::from_be_bytes(be(&start, 61));
    drop(start);
    if (gflags >> 2) & 3 != 2 {
        bail!(
            format,
            "legacy frame header: frame type {} is not a frame (2)",
            (gflags >> 2) & 3
        );
    }
    let offset_size = match (gflags >> 4) & 3 {
        0 => 2,
        1 => 4,
        2 => 8,
        _ => bail!(unsupported, "legacy frame header: reserved offset size"),
    };
    if header_len < METALAYERS_POS as i32 || header_len as u64 > frame_len || frame_len > avail {
        bail!(
            corrupt,
            "legacy frame header: header_size {header_len} / frame_size {frame_len} inconsistent with {avail} bytes"
        );
    }
    if typesize <= 0 || nbytes < 0 || cbytes < 0 || chunksize < 0 {
        bail!(corrupt, "legacy frame header: negative or zero sizes");
    }
    let header_len = header_len as usize;
    let metas = if with_metas && header_len > METALAYERS_POS {
        let hb = store.read(0, header_len as u64)?;
        metalayers::parse_section(
            &hb,
            METALAYERS_POS,
            0,
            metalayers::MAX_METALAYERS,
            "legacy frame metalayers",
        )?
        .into_iter()
        .map(|(name, content)| metalayers::Metalayer { name, content })
        .collect()
    } else {
        Vec::new()
    };
    let ipos = header_len as u64 + cbytes as u64;
    let mut offsets = Vec::new();
    if nbytes > 0 {
        if ipos + chunk::EXTENDED_HEADER_LEN as u64 > frame_len {
            bail!(
                corrupt,
                "legacy frame index: position {ipos} is past the frame ({frame_len} bytes)"
            );
        }
        let ih = ChunkHeader::parse_prefix(&store.read(ipos, chunk::EXTENDED_HEADER_LEN as u64)?)?;
        if ipos + ih.cbytes() as u64 > frame_len {
            bail!(
                corrupt,
                "legacy frame index: {} bytes at {ipos} run past the frame",
                ih.cbytes()
            );
        }
        let nchunks = if chunksize > 0 {
            nbytes.div_euclid(i64::from(chunksize)) + i64::from(nbytes % i64::from(chunksize) != 0)
        } else {
            (ih.nbytes() / offset_size) as i64
        };
        if nchunks > header::MAX_NCHUNKS || nchunks as usize * offset_size != ih.nbytes() {
            bail!(
                corrupt,
                "legacy frame index: {} bytes of {offset_size}-byte offsets for {nchunks} chunks",
                ih.nbytes()
            );
        }
        super::index::check_size(ih.nbytes(), ih.cbytes())?;
        let raw = chunk::decompress_to_vec(&store.read(ipos, ih.cbytes() as u64)?, ih.nbytes())?;
        for (i, o) in raw.chunks_exact(offset_size).enumerate() {
            let v = match offset_size {
                2 => i64::from(u16::from_le_bytes([o[0], o[1]])),
                4 => i64::from(u32::from_le_bytes([o[0], o[1], o[2], o[3]])),
                _ => i64::from_le_bytes(be(o, 0)),
            };
            if v < 0 || v as u64 + chunk::EXTENDED_HEADER_LEN as u64 > cbytes as u64 {
                bail!(corrupt, "legacy frame index: offset {v} of chunk {i} is outside the data ({cbytes} bytes)");
            }
            offsets.push(v);
        }
    }
    let spans = super::compute_spans(&offsets, cbytes as u64);
    let header = FrameHeader {
        general_flags: header::VERSION_RC1
            | 0x10
            | if chunksize == 0 {
                header::VARIABLE_CHUNKS
            } else {
                0
            },
        frame_type: header::CONTIGUOUS,
        codec_flags,
        other_flags: 3,
        header_len,
        frame_len,
        nbytes,
        cbytes,
        typesize,
        blocksize: 0,
        chunksize,
        nthreads_c,
        nthreads_d,
        has_vlmeta: false,
        filters: [0; 6],
        filters_meta: [0; 6],
        udcodec: codec_flags & 0x0F,
        compcode_meta: 0,
        other_flags2: 0,
        metalayers: metas,
    };
    Ok(Frame::with_index(
        store,
        header,
        super::Index::List { offsets, spans },
        Vec::new(),
        0,
        false,
        true,
    ))
}
