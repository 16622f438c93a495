//! Run-time choice of the SIMD kernels: the best instruction set the CPU has, detected once.

use std::sync::OnceLock;

/// Instruction sets with kernels, best last.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Scalar,
    Sse2,
    Avx2,
    /// AVX-512 F, BW and VL: bitshuffle's forward bit transpose has a kernel of its own
    /// (unless GFNI's is taken, [`has_gfni`]); the rest runs the AVX2 kernels, as c-blosc2
    /// does at this level, some of them compiled to use AVX-512's 32 vector registers.
    Avx512,
}

/// The level the filters use: the best the CPU supports, unless `B2F_SIMD` names a lower one
/// (`scalar`, `sse2`, `avx2`), which tests and benchmarks use to compare kernels.
pub fn level() -> Level {
    static LEVEL: OnceLock<Level> = OnceLock::new();
    *LEVEL.get_or_init(|| {
        let best = detect();
        match std::env::var("B2F_SIMD").as_deref() {
            Ok("scalar") => Level::Scalar,
            Ok("sse2") => best.min(Level::Sse2),
            Ok("avx2") => best.min(Level::Avx2),
            _ => best,
        }
    })
}

/// Whether the CPU has GFNI with AVX2 (Ice Lake, Alder Lake, Zen 4 and later), whose affine
/// instruction transposes 8x8 bit matrices: bitshuffle uses it at the AVX2 level and above
/// (so `B2F_SIMD=avx2` keeps it).
pub fn has_gfni() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        static GFNI: OnceLock<bool> = OnceLock::new();
        *GFNI.get_or_init(|| {
            std::is_x86_feature_detected!("gfni") && std::is_x86_feature_detected!("avx2")
        })
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// The best level this CPU supports.
pub fn detect() -> Level {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512bw")
            && std::is_x86_feature_detected!("avx512vl")
        {
            return Level::Avx512;
        }
        if std::is_x86_feature_detected!("avx2") {
            return Level::Avx2;
        }
        if std::is_x86_feature_detected!("sse2") {
            return Level::Sse2;
        }
    }
    Level::Scalar
}
