//! Codecs: one file each. Blosc2 codec ids are the values stored in frames and chunk headers.

pub mod blosclz;
mod deflate_codes;
pub mod lz4;
pub mod lz4_block;
pub mod probe;
pub mod zlib;
pub mod zstd;

use std::cell::RefCell;
use std::thread::LocalKey;

/// Runs `f` on this thread's `T` kept in `key`, made by `make` on first use: the C codecs'
/// contexts and streams, one per thread as they cannot be shared, kept until the thread ends.
/// `None` when `make` fails (out of memory).
fn with_per_thread<T: 'static, R>(
    key: &'static LocalKey<RefCell<Option<T>>>,
    make: impl FnOnce() -> Option<T>,
    f: impl FnOnce(&T) -> R,
) -> Option<R> {
    key.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            *slot = make();
        }
        slot.as_ref().map(f)
    })
}

/// A xorshift generator for the codecs' tests: data no codec finds patterns in.
#[cfg(test)]
fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    }
}

/// Blosc2 codec ids (`compcode`).
pub const BLOSCLZ: u8 = 0;
pub const LZ4: u8 = 1;
pub const LZ4HC: u8 = 2;
pub const ZLIB: u8 = 4;
pub const ZSTD: u8 = 5;

/// The name c-blosc2 gives a codec id, for messages.
pub fn name(id: u8) -> &'static str {
    match id {
        BLOSCLZ => "blosclz",
        LZ4 => "lz4",
        LZ4HC => "lz4hc",
        3 => "snappy",
        ZLIB => "zlib",
        ZSTD => "zstd",
        32 => "ndlz",
        33 => "zfp_acc",
        34 => "zfp_prec",
        35 => "zfp_rate",
        36 => "openhtj2k",
        37 => "grok",
        38 => "openzl",
        39 => "j2k",
        40 => "htj2k",
        _ => "unknown",
    }
}

/// The codecs' tests' source of made-up data and mutations (xorshift64).
#[cfg(test)]
mod test_rng {
    pub struct Rng(pub u64);
    impl Rng {
        pub fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        pub fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }
}
