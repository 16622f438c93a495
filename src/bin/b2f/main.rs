//! `b2f`: inspect, verify, convert, compress and extract Blosc2 frames (`.b2frame`, `.b2nd`)
//! with b2frame's safe engine.

mod args;
mod commands;
mod describe;
mod items;
mod msgpack;
mod progress;

use std::fmt;

const USAGE: &str = "\
b2f: inspect, verify, convert, compress and extract Blosc2 frames (.b2frame, .b2nd)

usage: b2f COMMAND [ARGS] [--help]

commands:
  info FILE [--json]                 what the frame is: kind, codec, filters, sizes, array, metalayers
  verify FILE                        decode every chunk; report each bad one
  cat FILE [--chunk N | --items A:B] decompressed bytes to stdout
  slice FILE SPEC [--text]           an n-dim slab, e.g. `0:10,5,:` (raw bytes, or numbers with --text)
  compress IN OUT --typesize N [...] a raw file to a frame
  decompress IN OUT                  a frame back to a raw file
  convert IN OUT --sparse|--contiguous
  meta FILE [NAME] [--raw]           metalayers
  vlmeta FILE [list | get NAME | set NAME VALUE | rm NAME]
  version                            the library version

`b2f COMMAND --help` tells more. Exit status: 0 success, 1 error, 2 bad usage.";

/// A failure: one line for the user, and whether it was a usage error.
#[derive(Debug)]
pub struct CliError {
    msg: String,
    usage: bool,
}

impl CliError {
    pub fn usage(msg: impl Into<String>) -> CliError {
        CliError {
            msg: msg.into(),
            usage: true,
        }
    }

    pub fn fail(msg: impl Into<String>) -> CliError {
        CliError {
            msg: msg.into(),
            usage: false,
        }
    }

    /// An engine error about `file`.
    pub fn file(file: impl fmt::Display, e: impl fmt::Display) -> CliError {
        CliError::fail(format!("{file}: {e}"))
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.msg)
    }
}

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let code = match run(&argv) {
        Ok(code) => code,
        Err(e) if e.usage => {
            let cmd = argv.first().map(String::as_str).unwrap_or("");
            eprintln!("b2f {cmd}: {e} (see `b2f {cmd} --help`)");
            2
        }
        Err(e) => {
            eprintln!("b2f: {e}");
            1
        }
    };
    std::process::exit(code);
}

fn run(argv: &[String]) -> Result<i32, CliError> {
    let Some(cmd) = argv.first() else {
        eprintln!("{USAGE}");
        return Ok(2);
    };
    let rest = &argv[1..];
    match cmd.as_str() {
        "info" => commands::info(rest),
        "verify" => commands::verify(rest),
        "cat" => commands::cat(rest),
        "slice" => commands::slice(rest),
        "compress" => commands::compress(rest),
        "decompress" => commands::decompress(rest),
        "convert" => commands::convert(rest),
        "meta" => commands::meta(rest),
        "vlmeta" => commands::vlmeta(rest),
        "version" | "--version" | "-V" => {
            println!("b2f {}", env!("CARGO_PKG_VERSION"));
            Ok(0)
        }
        "help" | "--help" | "-h" => {
            println!("{USAGE}");
            Ok(0)
        }
        other => Err(CliError {
            msg: format!("unknown command {other:?}; run `b2f --help`"),
            usage: false,
        }),
    }
}
