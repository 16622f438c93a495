//! Generates `include/b2frame.h` from `src/capi/` with cbindgen (written only when it changes,
//! so the checked-in header stays put unless the API does), and gives the shared library its
//! soname.

use std::env;
use std::fs;
use std::path::PathBuf;

fn main() {
    let root = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    println!("cargo:rerun-if-changed=src/capi");
    println!("cargo:rerun-if-changed=cbindgen.toml");

    let major = env::var("CARGO_PKG_VERSION_MAJOR").unwrap();
    // The soname carries the major version: libb2frame.so.0.
    if env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libb2frame.so.{major}");
        // Code in pages of its own (GNU ld's default, not lld's): .text then starts at the same
        // place in a page whatever the size of the read-only data before it, and with it the
        // codecs' hot functions, which the profile's call graph puts first. Without it,
        // libdeflate's tables moved them by 256 bytes within their pages and zlib compression
        // ran 3% slower (random data, alternating with c-blosc2: 0.98-0.99 -> 0.94-0.97).
        println!("cargo:rustc-cdylib-link-arg=-Wl,-z,separate-code");
    }

    let mut config =
        cbindgen::Config::from_file(root.join("cbindgen.toml")).expect("cbindgen.toml");
    config.after_includes = Some(format!(
        "\n#define B2FRAME_VERSION_MAJOR {}\n#define B2FRAME_VERSION_MINOR {}\n#define B2FRAME_VERSION_PATCH {}\n#define B2FRAME_VERSION_STRING \"{}\"",
        major,
        env::var("CARGO_PKG_VERSION_MINOR").unwrap(),
        env::var("CARGO_PKG_VERSION_PATCH").unwrap(),
        env::var("CARGO_PKG_VERSION").unwrap(),
    ));
    let header = match cbindgen::Builder::new()
        .with_config(config)
        .with_src(root.join("src/capi/mod.rs"))
        .generate()
    {
        Ok(h) => h,
        Err(e) => {
            // A parse error in work-in-progress code must not break the build; the drift test
            // catches a header that was not regenerated.
            println!("cargo:warning=cbindgen could not generate the header: {e}");
            return;
        }
    };
    let out = PathBuf::from(env::var("OUT_DIR").unwrap()).join("b2frame.h");
    header.write_to_file(&out);
    let fresh = parenthesize_negative_defines(&fs::read_to_string(&out).unwrap()).into_bytes();
    let target = root.join("include/b2frame.h");
    if fs::read(&target).ok().as_deref() != Some(&fresh[..]) {
        fs::create_dir_all(root.join("include")).unwrap();
        fs::write(&target, &fresh).unwrap();
    }
}

/// `#define B2F_ERR_IO -2` becomes `#define B2F_ERR_IO (-2)`, safe in any expression.
fn parenthesize_negative_defines(header: &str) -> String {
    header
        .lines()
        .map(|line| match line.strip_prefix("#define ") {
            Some(rest) => match rest.split_once(' ') {
                Some((name, value)) if value.starts_with('-') => {
                    format!("#define {name} ({value})")
                }
                _ => line.to_string(),
            },
            None => line.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}
