//! The `b2f` command-line tool, run as a user runs it: info (text and JSON, checked against the
//! vector manifests), verify on good and corrupted files, compress/decompress/cat round trips,
//! convert both ways read back by python-blosc2, slices, metalayers, and its error messages.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use b2frame::schunk::SChunk;
use serde_json::Value;

fn b2f(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_b2f"))
        .args(args)
        .env("B2F_NO_PROGRESS", "1")
        .output()
        .expect("run b2f")
}

fn ok(args: &[&str]) -> Vec<u8> {
    let o = b2f(args);
    assert!(
        o.status.success(),
        "b2f {args:?} failed ({}): {}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    o.stdout
}

/// Runs a failing command; returns (exit code, the one stderr line).
fn fails(args: &[&str]) -> (i32, String) {
    let o = b2f(args);
    assert!(!o.status.success(), "b2f {args:?} succeeded");
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(err.trim_end().lines().count(), 1, "not one line: {err:?}");
    (o.status.code().unwrap(), err.trim_end().to_string())
}

/// A path named `name` in the test's directory `dir`.
fn tmp(dir: &Path, name: &str) -> PathBuf {
    dir.join(name)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn info_json_matches_every_manifest_entry() {
    let dir = common::vectors_dir();
    let m: Value = serde_json::from_slice(&common::read(&dir.join("manifest.json"))).unwrap();
    let mut n = 0;
    for e in m["entries"].as_array().unwrap() {
        let rel = e["path"].as_str().unwrap();
        let path = dir.join(rel);
        let j: Value = serde_json::from_slice(&ok(&["info", "--json", s(&path)])).unwrap();
        assert_eq!(j["nchunks"], e["nchunks"], "{rel}");
        assert_eq!(j["nbytes"], e["nbytes"], "{rel}");
        assert_eq!(j["cbytes"], e["cbytes"], "{rel}");
        assert_eq!(j["typesize"], e["typesize"], "{rel}");
        assert_eq!(j["kind"], e["container"], "{rel}");
        let specials = e["chunk_special"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|v| !v.is_null())
            .count();
        assert_eq!(j["special_chunks"], specials, "{rel}");
        let names = |v: &Value| -> Vec<(String, String)> {
            v.as_array()
                .unwrap()
                .iter()
                .map(|l| {
                    (
                        l["name"].as_str().unwrap().to_string(),
                        l["hex"].as_str().unwrap().to_string(),
                    )
                })
                .collect()
        };
        assert_eq!(
            names(&j["metalayers"]),
            names(&e["meta"]),
            "{rel}: metalayers"
        );
        assert_eq!(
            names(&j["vlmetalayers"]),
            names(&e["vlmeta"]),
            "{rel}: vlmetalayers"
        );
        if let Some(nd) = e.get("ndarray").filter(|v| !v.is_null()) {
            assert_eq!(j["array"]["shape"], nd["shape"], "{rel}");
            assert_eq!(j["array"]["chunks"], nd["chunks"], "{rel}");
            assert_eq!(j["array"]["blocks"], nd["blocks"], "{rel}");
            if nd["metalayer"] == "b2nd" {
                assert_eq!(j["array"]["dtype"], nd["dtype"], "{rel}");
            }
        }
        n += 1;
    }
    assert!(n > 100);
}

#[test]
fn info_text_on_the_bundled_example() {
    let ex = common::repo_root().join("examples/temperature.b2nd");
    let out = String::from_utf8(ok(&["info", s(&ex)])).unwrap();
    for want in [
        "kind          cframe",
        "array         b2nd: shape [24, 37, 72], chunks [6, 37, 72], blocks [2, 19, 36], dtype <f4",
        "codec         zstd (clevel 5)",
        "filters       shuffle",
        "units (5 bytes): \"degC\"",
        "dims (14 bytes): [\"hour\", \"lat\", \"lon\"]",
    ] {
        assert!(out.contains(want), "{want:?} missing from:\n{out}");
    }
}

#[test]
fn verify_reports_a_corrupted_chunk_by_index() {
    let dir = common::TempDir::new("cli");
    let src = common::vectors_dir().join("schunk/matrix_20_zlib_bitshuffle_ts16_cl9.b2frame");
    let out = String::from_utf8(ok(&["verify", s(&src)])).unwrap();
    assert!(out.contains(": OK (6 chunks"), "{out}");

    // Damage the middle of chunk 3's compressed streams, found by its bytes in the file.
    let frame = SChunk::open(&src, false).unwrap();
    let raw = frame.get_chunk_raw(3).unwrap();
    let mut bytes = common::read(&src);
    let at = bytes
        .windows(raw.len())
        .position(|w| w == raw.as_slice())
        .expect("chunk 3 in the file");
    for b in &mut bytes[at + raw.len() / 2..at + raw.len() / 2 + 16] {
        *b ^= 0x5A;
    }
    let bad = tmp(&dir, "corrupt.b2frame");
    std::fs::write(&bad, &bytes).unwrap();
    let o = b2f(&["verify", s(&bad)]);
    assert_eq!(o.status.code(), Some(1));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.lines().any(|l| l.starts_with("chunk 3: ")), "{text}");
    assert!(!text.lines().any(|l| l.starts_with("chunk 2: ")), "{text}");
    assert!(text.contains("1 of 6 chunks bad"), "{text}");
}

#[test]
fn compress_decompress_cat_round_trip() {
    let dir = common::TempDir::new("cli");
    let mut rng = common::Rng::new(9);
    // 2.5 MiB of int32 steps with noise: several 1 MiB chunks and a short last one.
    let data: Vec<u8> = (0..(5 << 17) as u32)
        .flat_map(|i| (i / 7 + (rng.next_u64() % 3) as u32).to_le_bytes())
        .collect();
    let raw = tmp(&dir, "input.raw");
    std::fs::write(&raw, &data).unwrap();
    for (extra, kind) in [
        (vec![], "cframe"),
        (
            vec![
                "--sparse",
                "--codec",
                "lz4",
                "--filter",
                "delta",
                "--filter",
                "bitshuffle",
            ],
            "sframe",
        ),
    ] {
        let frame = tmp(&dir, &format!("out-{kind}.b2frame"));
        let mut args = vec![
            "compress",
            s(&raw),
            s(&frame),
            "--typesize",
            "4",
            "--chunksize",
            "1048576",
            "--threads",
            "2",
        ];
        args.extend(extra.iter().copied());
        let msg = String::from_utf8(ok(&args)).unwrap();
        assert!(msg.contains("3 chunks"), "{msg}");
        let j: Value = serde_json::from_slice(&ok(&["info", "--json", s(&frame)])).unwrap();
        assert_eq!(j["kind"], kind);
        assert_eq!(j["nbytes"], data.len());
        let back = tmp(&dir, &format!("back-{kind}.raw"));
        ok(&["decompress", s(&frame), s(&back)]);
        assert!(
            common::read(&back) == data,
            "{kind}: decompressed content differs"
        );
        assert!(ok(&["cat", s(&frame)]) == data);
        assert!(ok(&["cat", s(&frame), "--chunk", "1"]) == data[1 << 20..2 << 20]);
        assert!(
            ok(&["cat", s(&frame), "--items", "262000:262300"]) == data[262000 * 4..262300 * 4]
        );
        // c-blosc2 reads what b2f wrote.
        let got = common::run_python(
            "import sys, blosc2\ns = blosc2.open(sys.argv[1] if len(sys.argv) > 1 else sys.stdin.read())\n\
             sys.stdout.buffer.write(b''.join(s.decompress_chunk(i) for i in range(s.nchunks)))",
            s(&frame).as_bytes(),
        );
        assert!(got == data, "{kind}: python-blosc2 reads different content");
        // Refuses to overwrite without --force.
        let (code, err) = fails(&["decompress", s(&frame), s(&back)]);
        assert_eq!(code, 1);
        assert!(err.contains("already exists"), "{err}");
        ok(&["decompress", s(&frame), s(&back), "--force"]);
    }
}

/// Lossy truncation filters take their bits from the filter spec, negative ones included:
/// `int_trunc:-3` and `int_trunc:29` both zero the 3 low bits of every 4-byte integer.
#[test]
fn compress_with_int_trunc_drops_low_bits() {
    let dir = common::TempDir::new("cli");
    let data: Vec<u8> = (0..200_000u32)
        .flat_map(|i| (i * 5).to_le_bytes())
        .collect();
    let want: Vec<u8> = (0..200_000u32)
        .flat_map(|i| ((i * 5) & !7).to_le_bytes())
        .collect();
    let raw = tmp(&dir, "ramp.raw");
    std::fs::write(&raw, &data).unwrap();
    for spec in ["int_trunc:-3", "int_trunc:29"] {
        let frame = tmp(&dir, &format!("{spec}.b2frame"));
        let args = ["compress", s(&raw), s(&frame), "--typesize", "4"];
        ok(&[&args[..], &["--filter", spec, "--filter", "shuffle"]].concat());
        assert!(ok(&["cat", s(&frame)]) == want, "{spec}");
        if spec.contains('-') {
            // python-blosc2 opens no frame with a filter meta of 128 or more (see README).
            continue;
        }
        let got = common::run_python(
            "import sys, blosc2\ns = blosc2.open(sys.stdin.read())\n\
             sys.stdout.buffer.write(b''.join(s.decompress_chunk(i) for i in range(s.nchunks)))",
            s(&frame).as_bytes(),
        );
        assert!(got == want, "{spec}: python-blosc2 reads different content");
    }
}

#[test]
fn convert_both_ways_read_by_python_blosc2() {
    let dir = common::TempDir::new("cli");
    let src = common::vectors_dir().join("b2nd/with_meta_vlmeta.b2nd");
    let sparse = tmp(&dir, "conv-sparse.b2nd");
    let back = tmp(&dir, "conv-back.b2nd");
    ok(&["convert", s(&src), s(&sparse), "--sparse"]);
    ok(&["convert", s(&sparse), s(&back), "--contiguous"]);
    assert!(sparse.is_dir() && back.is_file());
    let script = "import sys, blosc2, hashlib\n\
        a = blosc2.open(sys.stdin.read())\n\
        print(a.shape, a.chunks, a.blocks, a.dtype, hashlib.sha256(a[...].tobytes()).hexdigest(), \
              sorted(a.schunk.vlmeta.getall().items()), sorted(a.schunk.meta.keys()))";
    let want = common::run_python(script, s(&src).as_bytes());
    for p in [&sparse, &back] {
        assert_eq!(
            common::run_python(script, s(p).as_bytes()),
            want,
            "{}",
            p.display()
        );
    }
    let (code, _) = fails(&[
        "convert",
        s(&src),
        s(&tmp(&dir, "x")),
        "--sparse",
        "--contiguous",
    ]);
    assert_eq!(code, 2);

    // --force replaces OUT only with a complete copy: over a frame of the other kind it works;
    // onto IN itself it is refused, IN intact (it used to remove IN, then fail).
    ok(&["convert", s(&src), s(&back), "--sparse", "--force"]);
    assert!(back.is_dir());
    assert_eq!(common::run_python(script, s(&back).as_bytes()), want);
    for (frame, kind) in [(&sparse, "--contiguous"), (&back, "--sparse")] {
        let (code, err) = fails(&["convert", s(frame), s(frame), kind, "--force"]);
        assert_eq!(code, 1);
        assert!(err.contains("IN and OUT are the same frame"), "{err}");
        assert_eq!(common::run_python(script, s(frame).as_bytes()), want);
    }
    // A conversion that fails half-way (a chunk file of IN is missing) leaves OUT as it was,
    // and no temporary files.
    let broken = tmp(&dir, "conv-broken.b2nd");
    std::fs::create_dir_all(&broken).unwrap();
    for e in std::fs::read_dir(&sparse).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), broken.join(e.file_name())).unwrap();
    }
    std::fs::remove_file(broken.join("00000001.chunk")).unwrap();
    // (Other tests use the directory too: only temporary names are counted.)
    let dir = sparse.parent().unwrap();
    let temporaries = || {
        std::fs::read_dir(dir)
            .unwrap()
            .filter(|e| {
                let name = e.as_ref().unwrap().file_name();
                name.to_string_lossy().contains(".b2f-tmp")
            })
            .count()
    };
    assert_eq!(temporaries(), 0);
    let (code, err) = fails(&["convert", s(&broken), s(&back), "--contiguous", "--force"]);
    assert_eq!(code, 1);
    assert!(err.contains("00000001.chunk"), "{err}");
    assert_eq!(common::run_python(script, s(&back).as_bytes()), want);
    assert_eq!(temporaries(), 0, "temporary files left");
}

#[test]
fn slices_as_bytes_and_text() {
    let ex = common::repo_root().join("examples/temperature.b2nd");
    let frame = SChunk::open(&ex, false).unwrap();
    let arr = b2frame::ndim::Array::open(&frame).unwrap();
    let mut want = vec![0u8; 5 * 3 * 4];
    arr.get_slice(&[3, 10, 60], &[4, 15, 63], &mut want)
        .unwrap();
    assert!(ok(&["slice", s(&ex), "3,10:15,60:63"]) == want);
    assert!(ok(&["slice", s(&ex), "3,10:15,-12:-9"]) == want);
    let text = String::from_utf8(ok(&["slice", s(&ex), "3,10:15,60:63", "--text"])).unwrap();
    let nums: Vec<Vec<f32>> = text
        .lines()
        .map(|l| l.split(' ').map(|x| x.parse().unwrap()).collect())
        .collect();
    assert_eq!(nums.len(), 5);
    let flat: Vec<f32> = want
        .chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(nums.concat(), flat);
    let (code, err) = fails(&["slice", s(&ex), "0:30"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("temperature.b2nd") && err.contains("[0, 30)"),
        "{err}"
    );
    assert_eq!(fails(&["slice", s(&ex), "1,2,3,4"]).0, 2);
}

#[test]
fn meta_and_vlmeta_commands() {
    let dir = common::TempDir::new("cli");
    let src = common::vectors_dir().join("b2nd/with_meta_vlmeta.b2nd");
    let f = tmp(&dir, "vl.b2nd");
    std::fs::copy(&src, &f).unwrap();
    let list = String::from_utf8(ok(&["meta", s(&f)])).unwrap();
    assert!(list.starts_with("b2nd ("), "{list}");
    let raw = ok(&["meta", s(&f), "b2nd", "--raw"]);
    assert_eq!(
        raw,
        SChunk::open(&f, false).unwrap().meta_get("b2nd").unwrap()
    );
    ok(&["vlmeta", s(&f), "set", "note", "written by b2f"]);
    assert_eq!(
        String::from_utf8(ok(&["vlmeta", s(&f), "get", "note"])).unwrap(),
        "\"written by b2f\"\n"
    );
    let py = common::run_python(
        "import sys, blosc2\na = blosc2.open(sys.stdin.read())\nprint(a.schunk.vlmeta['note'])",
        s(&f).as_bytes(),
    );
    assert_eq!(String::from_utf8(py).unwrap().trim(), "written by b2f");
    ok(&["vlmeta", s(&f), "rm", "note"]);
    let (code, err) = fails(&["vlmeta", s(&f), "get", "note"]);
    assert_eq!(code, 1);
    assert!(err.contains("note"), "{err}");
}

#[test]
fn errors_are_one_line_with_the_file_and_cause() {
    let dir = common::TempDir::new("cli");
    let missing = tmp(&dir, "missing.b2frame");
    let (code, err) = fails(&["info", s(&missing)]);
    assert_eq!(code, 1);
    assert!(
        err.contains("missing.b2frame") && err.contains("No such file"),
        "{err}"
    );

    let not_blosc = tmp(&dir, "text.b2frame");
    std::fs::write(
        &not_blosc,
        "this is not a Blosc2 frame, just some text padding it out",
    )
    .unwrap();
    for cmd in ["info", "verify", "cat"] {
        let (code, err) = fails(&[cmd, s(&not_blosc)]);
        assert_eq!(code, 1);
        assert!(
            err.contains("text.b2frame") && err.contains("not a Blosc2 frame"),
            "{err}"
        );
    }

    let compress =
        |more: &[&'static str]| [&["compress", "a", "b", "--typesize", "4"][..], more].concat();
    for bad in [
        vec!["info"],
        vec!["info", "a", "b"],
        vec!["info", "--nope", "x"],
        vec!["compress", "a", "b"],
        vec!["compress", "a", "b", "--typesize", "x"],
        compress(&["--codec", "snappy"]),
        compress(&["--filter", "trunc_prec"]),
        compress(&["--filter", "int_trunc"]),
        compress(&["--filter", "int_trunc:-129"]),
        vec!["cat", "a", "--chunk", "1", "--items", "0:1"],
    ] {
        let (code, err) = fails(&bad);
        assert_eq!(code, 2, "{bad:?}: {err}");
        assert!(err.contains("--help"), "{err}");
    }
    assert_eq!(fails(&["frobnicate"]).0, 1);
    for cmd in [
        "info",
        "verify",
        "cat",
        "slice",
        "compress",
        "decompress",
        "convert",
        "meta",
        "vlmeta",
    ] {
        let help = String::from_utf8(ok(&[cmd, "--help"])).unwrap();
        assert!(
            help.starts_with(&format!("usage: b2f {cmd}")),
            "{cmd}: {help}"
        );
    }
}

#[test]
fn readme_shows_the_real_output_of_its_main_command() {
    let readme = String::from_utf8(common::read(&common::repo_root().join("README.md"))).unwrap();
    let cmd = "./scripts/b2f info examples/temperature.b2nd\n```\n\n```text\n";
    let at = readme
        .find(cmd)
        .expect("the main-job command in the README")
        + cmd.len();
    let shown = &readme[at..at + readme[at..].find("```").unwrap()];
    let ex = common::repo_root().join("examples/temperature.b2nd");
    let real = String::from_utf8(ok(&["info", s(&ex)])).unwrap();
    assert_eq!(shown, real.replace(s(&ex), "examples/temperature.b2nd"));
}

/// `slice --text` prints items as NumPy prints them: every finite float16, dates of several
/// units, strings, complex numbers and structured items, of arrays python-blosc2 writes.
#[test]
fn slice_text_matches_numpy() {
    let dir = common::TempDir::new("cli");
    let script = "import sys, numpy as np, blosc2\n\
        d = sys.stdin.read()\n\
        h = np.arange(65536, dtype=np.uint16).view(np.float16)\n\
        arrays = {\n\
          'half': h[np.isfinite(h)],\n\
          'dates_s': (np.arange(-5, 5) * 86_399).astype('M8[s]'),\n\
          'dates_ms': np.array([-1, 0, 1_600_000_000_123], dtype='M8[ms]'),\n\
          'dates_D': np.array([-1, 0, 19_000, 'NaT'], dtype='M8[D]'),\n\
          'unicode': np.array(['h\u{e9}llo', '', 'w\u{f6}rld']),\n\
          'complex': np.array([1 + 2j, -0.5 - 1.25j]),\n\
        }\n\
        for name, x in arrays.items(): blosc2.asarray(x, urlpath=f'{d}/{name}.b2nd', mode='w'); \
            print(name, ' '.join(repr(str(v)) if x.dtype.kind == 'U' else str(v) for v in x))\n";
    let expected = common::run_python(script, s(&dir).as_bytes());
    for line in String::from_utf8(expected).unwrap().lines() {
        let (name, want) = line.split_once(' ').unwrap();
        let path = dir.join(format!("{name}.b2nd"));
        let got = String::from_utf8(ok(&["slice", s(&path), ":", "--text"])).unwrap();
        let got = got.trim_end().replace('"', "'");
        if name == "complex" {
            // NumPy writes (1+2j); the items are the same numbers.
            assert_eq!(got, "1+2j -0.5-1.25j");
            continue;
        }
        if name == "half" {
            // NumPy may print a float16 in exponent form (6e-08); compare the numbers.
            let parse = |t: &str| {
                t.split(' ')
                    .map(|v| v.parse::<f64>().unwrap())
                    .collect::<Vec<_>>()
            };
            assert_eq!(parse(&got), parse(want), "{name}");
            continue;
        }
        assert_eq!(got, want, "{name}");
    }
    let rec = dir.join("rec.b2nd");
    common::run_python(
        &format!(
            "import numpy as np, blosc2\n\
             x = np.array([(3, 1.5, b'xy', [1, 2])], dtype=[('a', '<i4'), ('b', '<f8'), ('c', 'S3'), ('d', '<i2', (2,))])\n\
             blosc2.asarray(x, urlpath={:?}, mode='w')\n",
            s(&rec)
        ),
        b"",
    );
    let got = String::from_utf8(ok(&["slice", s(&rec), ":", "--text"])).unwrap();
    assert_eq!(got.trim_end(), "(3, 1.5, \"xy\", [1, 2])");
}

/// c-blosc2's empty frame has no chunksize yet (-1): `info` says so, and `convert` keeps it
/// unset, so the copy's first chunk sets it as the original's would.
#[test]
fn an_empty_c_blosc2_frame_keeps_its_chunksize_unset() {
    let dir = common::TempDir::new("cli-unset");
    let src = tmp(&dir, "empty.b2frame");
    let script = "import sys, blosc2\n\
        blosc2.SChunk(chunksize=8000, urlpath=sys.stdin.read(), contiguous=True, mode='w', \
                      cparams={'typesize': 4})";
    common::run_python(script, s(&src).as_bytes());
    let text = String::from_utf8(ok(&["info", s(&src)])).unwrap();
    assert!(
        text.contains("chunksize     not set (the first chunk sets it)"),
        "{text}"
    );
    let json: Value = serde_json::from_slice(&ok(&["info", "--json", s(&src)])).unwrap();
    assert_eq!(json["chunksize"], -1, "{json}");
    let copy = tmp(&dir, "copy.b2frame");
    ok(&["convert", s(&src), s(&copy), "--sparse"]);
    let c = SChunk::open(&copy, true).unwrap();
    assert_eq!(c.info().chunksize, -1);
    c.append(&[7u8; 1000]).unwrap();
    assert_eq!(c.info().chunksize, 1000);
}
