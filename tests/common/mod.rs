//! Shared helpers for integration tests: the reference vectors and c-blosc2 (through the
//! python-blosc2 wheel, run as a subprocess so no test links or builds c-blosc2).
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The repository root.
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `../shared/vectors` (or `$B2F_VECTORS`). Panics when absent: the tests need them.
pub fn vectors_dir() -> PathBuf {
    if let Ok(p) = std::env::var("B2F_VECTORS") {
        return PathBuf::from(p);
    }
    let p = repo_root().join("../shared/vectors");
    assert!(
        p.is_dir(),
        "reference vectors not found at {} (set B2F_VECTORS)",
        p.display()
    );
    p
}

/// The Python that has `blosc2==4.14.1` and numpy: `$B2F_PYTHON`, else `.venv/bin/python`.
pub fn python() -> PathBuf {
    if let Ok(p) = std::env::var("B2F_PYTHON") {
        return PathBuf::from(p);
    }
    let p = repo_root().join(".venv/bin/python");
    assert!(
        p.exists(),
        "no Python with blosc2 found: run the README's test command (it makes .venv) or set B2F_PYTHON"
    );
    p
}

/// Runs `script` with the reference Python, feeding `stdin`, and returns its stdout.
/// The script reads `sys.stdin.buffer` and writes `sys.stdout.buffer`. Panics on failure.
pub fn run_python(script: &str, stdin: &[u8]) -> Vec<u8> {
    let mut child = Command::new(python())
        .arg("-c")
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start python");
    {
        let mut si = child.stdin.take().unwrap();
        si.write_all(stdin).expect("write to python");
    }
    let out = child.wait_with_output().expect("wait for python");
    assert!(
        out.status.success(),
        "python failed: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// sha256 of `data` as lowercase hex.
pub fn sha256_hex(data: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    let d = Sha256::digest(data);
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// Reads a file, panicking with its path.
pub fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

/// A deterministic pseudo-random generator (xorshift64*), so test data needs no crate.
pub struct Rng(u64);
impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next_u64() as u8).collect()
    }
}

/// A new directory under the system's temporary directory, removed with its contents when
/// dropped (also when the test fails).
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let d = std::env::temp_dir().join(format!("b2f-test-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        TempDir(d)
    }
}

impl std::ops::Deref for TempDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for TempDir {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
