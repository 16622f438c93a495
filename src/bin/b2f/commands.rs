//! The commands: each parses its arguments, runs the engine and prints one line per error.

use std::fs::{self, File};
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Mutex;

use b2frame::chunk::CParams;
use b2frame::frame::store;
use b2frame::ndim::Array;
use b2frame::schunk::{CreateOptions, SChunk};
use b2frame::{codecs, filters, Error};

use crate::items::format_item;

use crate::args::{flag, value, Args, Opt};
use crate::progress::{human, Progress};
use crate::{describe, msgpack, CliError};

/// Bytes of output produced per step when streaming large results.
const STEP_BYTES: usize = 64 << 20;

/// Parses `argv` with `opts`; prints `help` and returns `None` on `--help`.
fn parse(argv: &[String], opts: &[Opt], help: &str) -> Result<Option<Args>, CliError> {
    let a = Args::parse(argv, opts)?;
    if a.is_none() {
        println!("{help}");
    }
    Ok(a)
}

/// An engine error about `path` as one line (I/O errors already name the path).
fn file_err(path: &Path, e: Error) -> CliError {
    let msg = e.to_string();
    let p = path.display().to_string();
    if msg.contains(&p) {
        CliError::fail(msg)
    } else {
        CliError::file(p, msg)
    }
}

fn open(path: &Path, writable: bool) -> Result<SChunk, CliError> {
    SChunk::open(path, writable).map_err(|e| file_err(path, e))
}

/// Writes to stdout; a reader that went away (`b2f cat | head`) ends the command quietly.
fn emit(out: &mut impl Write, bytes: &[u8]) -> Result<(), CliError> {
    out.write_all(bytes).map_err(stdout_err)
}

fn stdout_err(e: io::Error) -> CliError {
    if e.kind() == io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    CliError::fail(format!("stdout: {e}"))
}

/// Refuses to replace `out` unless `--force`.
fn check_output(out: &Path, force: bool) -> Result<(), CliError> {
    if !force && fs::symlink_metadata(out).is_ok() {
        return Err(CliError::fail(format!(
            "{}: already exists (use --force to replace it)",
            out.display()
        )));
    }
    Ok(())
}

const INFO_HELP: &str = "\
usage: b2f info FILE [--json]

Shows what a Blosc2 frame is and holds: kind (cframe/sframe) and format version, codec,
clevel, filters, typesize, chunk and block sizes, number of chunks (and how many are special
values), uncompressed and compressed sizes and ratio, the n-dim array description (b2nd or
caterva: shape, chunks, blocks, dtype), metalayers and vlmetalayers (msgpack shown decoded).
Only the header, index and chunk headers are read. --json prints one JSON object.";

pub fn info(argv: &[String]) -> Result<i32, CliError> {
    let Some(a) = parse(argv, &[flag("json")], INFO_HELP)? else {
        return Ok(0);
    };
    a.expect(&["FILE"])?;
    let path = Path::new(&a.positional[0]);
    let s = open(path, false)?;
    let text = describe::info(path, &s, a.has("json"));
    emit(&mut io::stdout().lock(), text.as_bytes())?;
    Ok(0)
}

const VERIFY_HELP: &str = "\
usage: b2f verify FILE [--threads N]

Decodes every chunk (in parallel, N threads; default: the machine's cores), checks the sizes
against the frame's header and, for arrays, against the array's chunk grid. Prints each bad
chunk as `chunk I: reason` and exits with status 1 if any is bad.";

pub fn verify(argv: &[String]) -> Result<i32, CliError> {
    let Some(a) = parse(argv, &[value("threads")], VERIFY_HELP)? else {
        return Ok(0);
    };
    a.expect(&["FILE"])?;
    let path = Path::new(&a.positional[0]);
    let s = open(path, false)?;
    let info = s.info();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads: usize = a.number("threads", cores)?.clamp(1, 64);
    // A chunk may not claim more than the frame holds: no allocation beyond that.
    let bound = if info.chunksize > 0 {
        info.chunksize as usize
    } else {
        info.nbytes.max(0) as usize
    };
    let array = match Array::open(&s) {
        Ok(arr) => Some((arr.geom.nchunks, arr.geom.chunk_nbytes())),
        Err(Error::NotFound(_)) => None,
        Err(e) => return Err(file_err(path, e)),
    };
    let next = AtomicI64::new(0);
    let bad = Mutex::new(Vec::<(i64, String)>::new());
    let total = AtomicI64::new(0);
    let progress = Mutex::new(Progress::new("verifying", info.nbytes.max(0) as u64));
    std::thread::scope(|scope| {
        for _ in 0..threads.min(info.nchunks.max(1) as usize) {
            scope.spawn(|| {
                let mut buf = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= info.nchunks {
                        break;
                    }
                    let r = s.chunk_nbytes(i).and_then(|n| {
                        if n > bound {
                            return Err(Error::corrupt(format_args!(
                                "claims {n} uncompressed bytes, more than the frame's {bound}"
                            )));
                        }
                        if let Some((_, want)) = array {
                            if n != want {
                                return Err(Error::corrupt(format_args!(
                                    "holds {n} bytes, the array's chunks hold {want}"
                                )));
                            }
                        }
                        buf.resize(n, 0);
                        s.get_chunk(i, &mut buf)
                    });
                    match r {
                        Ok(n) => {
                            total.fetch_add(n as i64, Ordering::Relaxed);
                            progress.lock().unwrap().advance(n as u64);
                        }
                        Err(e) => bad.lock().unwrap().push((i, e.to_string())),
                    }
                }
            });
        }
    });
    progress.into_inner().unwrap().finish();
    let mut bad = bad.into_inner().unwrap();
    bad.sort();
    let mut out = io::stdout().lock();
    for (i, why) in &bad {
        let why = why.strip_prefix(&format!("chunk {i}: ")).unwrap_or(why);
        emit(&mut out, format!("chunk {i}: {why}\n").as_bytes())?;
    }
    let mut problems = bad.len();
    if let Some((grid, _)) = array {
        if grid != info.nchunks {
            problems += 1;
            emit(
                &mut out,
                format!(
                    "array: the chunk grid has {grid} chunks, the frame holds {}\n",
                    info.nchunks
                )
                .as_bytes(),
            )?;
        }
    }
    let decoded = total.into_inner();
    if bad.is_empty() && decoded != info.nbytes {
        problems += 1;
        emit(
            &mut out,
            format!(
                "frame: chunks hold {decoded} bytes, the header says {}\n",
                info.nbytes
            )
            .as_bytes(),
        )?;
    }
    let p = path.display();
    if problems == 0 {
        emit(
            &mut out,
            format!(
                "{p}: OK ({} chunks, {} decoded)\n",
                info.nchunks,
                human(decoded as u64)
            )
            .as_bytes(),
        )?;
        Ok(0)
    } else {
        emit(
            &mut out,
            format!("{p}: {} of {} chunks bad\n", bad.len(), info.nchunks).as_bytes(),
        )?;
        Ok(1)
    }
}

const CAT_HELP: &str = "\
usage: b2f cat FILE [--chunk N | --items A:B]

Writes decompressed bytes to stdout: every chunk in order, one chunk (--chunk N), or the
items A..B (typesize units, across chunks; --items A:B, either end may be omitted).";

/// Parses `A:B` (either side optional) within `0..=len`.
fn parse_range(spec: &str, len: i64) -> Result<(i64, i64), CliError> {
    let bad = || CliError::usage(format!("{spec:?} is not a range A:B"));
    let (a, b) = spec.split_once(':').ok_or_else(bad)?;
    let num = |s: &str, default: i64| -> Result<i64, CliError> {
        if s.is_empty() {
            return Ok(default);
        }
        s.trim().parse::<i64>().map_err(|_| bad())
    };
    Ok((num(a, 0)?, num(b, len)?))
}

pub fn cat(argv: &[String]) -> Result<i32, CliError> {
    let Some(a) = parse(argv, &[value("chunk"), value("items")], CAT_HELP)? else {
        return Ok(0);
    };
    a.expect(&["FILE"])?;
    if a.has("chunk") && a.has("items") {
        return Err(CliError::usage("--chunk and --items exclude each other"));
    }
    let path = Path::new(&a.positional[0]);
    let s = open(path, false)?;
    let mut out = BufWriter::with_capacity(1 << 20, io::stdout().lock());
    if let Some(c) = a.get("chunk") {
        let i: i64 = c
            .parse()
            .map_err(|_| CliError::usage(format!("--chunk: {c:?} is not a chunk index")))?;
        let data = s.get_chunk_vec(i).map_err(|e| file_err(path, e))?;
        emit(&mut out, &data)?;
    } else if let Some(spec) = a.get("items") {
        let info = s.info();
        let ts = info.typesize.max(1) as i64;
        let (start, stop) = parse_range(spec, info.nbytes / ts)?;
        if start < 0 || stop < start || stop > info.nbytes / ts {
            return Err(file_err(
                path,
                Error::invalid(format_args!(
                    "items {start}:{stop} are not within 0:{}",
                    info.nbytes / ts
                )),
            ));
        }
        let step = (STEP_BYTES as i64 / ts).max(1);
        let mut buf = Vec::new();
        let mut at = start;
        while at < stop {
            let end = (at + step).min(stop);
            buf.resize(((end - at) * ts) as usize, 0);
            s.get_slice(at, end, &mut buf)
                .map_err(|e| file_err(path, e))?;
            emit(&mut out, &buf)?;
            at = end;
        }
    } else {
        for i in 0..s.nchunks() as i64 {
            let data = s.get_chunk_vec(i).map_err(|e| file_err(path, e))?;
            emit(&mut out, &data)?;
        }
    }
    out.flush().map_err(stdout_err)?;
    Ok(0)
}

const SLICE_HELP: &str = "\
usage: b2f slice FILE SPEC [--text]

Reads an n-dim slab of an array (b2nd or caterva) and writes it to stdout in C order, as raw
bytes or, with --text, as text (one line per row of the last dimension): numbers and
booleans, quoted strings, dates and durations as NumPy prints them, structured items as
(field, ...) tuples, other items as hex. SPEC has one comma-separated entry per dimension,
like NumPy: `A:B`, `A:`, `:B`, `:`, or a single index `I`; negative values count from the
end; missing trailing entries mean `:` (an empty SPEC reads a 0-dim array).
Example: b2f slice temperature.b2nd 0,10:20,:";

/// Parses a slab spec against `shape`.
fn parse_slab(spec: &str, shape: &[i64]) -> Result<(Vec<i64>, Vec<i64>), CliError> {
    let parts: Vec<&str> = if spec.trim().is_empty() {
        Vec::new()
    } else {
        spec.split(',').collect()
    };
    if parts.len() > shape.len() {
        return Err(CliError::usage(format!(
            "{spec:?} has {} entries, the array has {} dimensions",
            parts.len(),
            shape.len()
        )));
    }
    let mut start = Vec::new();
    let mut stop = Vec::new();
    for (d, &n) in shape.iter().enumerate() {
        let part = parts.get(d).map(|p| p.trim()).unwrap_or(":");
        let bad = || {
            CliError::usage(format!(
                "slice entry {part:?} (dimension {d}) is not I, A:B, A:, :B or :"
            ))
        };
        let resolve = |s: &str| -> Result<i64, CliError> {
            let v: i64 = s.parse().map_err(|_| bad())?;
            Ok(if v < 0 { v + n } else { v })
        };
        let (a, b) = match part.split_once(':') {
            Some((a, b)) => (
                if a.is_empty() { 0 } else { resolve(a)? },
                if b.is_empty() { n } else { resolve(b)? },
            ),
            None => {
                let i = resolve(part)?;
                (i, i + 1)
            }
        };
        start.push(a);
        stop.push(b);
    }
    Ok((start, stop))
}

pub fn slice(argv: &[String]) -> Result<i32, CliError> {
    let Some(a) = parse(argv, &[flag("text")], SLICE_HELP)? else {
        return Ok(0);
    };
    a.expect(&["FILE", "SPEC"])?;
    let path = Path::new(&a.positional[0]);
    let s = open(path, false)?;
    let arr = Array::open(&s).map_err(|e| file_err(path, e))?;
    let shape = arr.meta.shape.clone();
    let (start, stop) = parse_slab(&a.positional[1], &shape)?;
    arr.geom
        .check_slab(&start, &stop)
        .map_err(|e| file_err(path, e))?;
    let item = arr.geom.itemsize;
    let dtype = arr
        .meta
        .dtype
        .clone()
        .unwrap_or_else(|| format!("|V{item}"));
    let nd = shape.len();
    // Stream along the first dimension so memory stays bounded.
    let row_items: i64 = (1..nd).map(|d| stop[d] - start[d]).product();
    let row_bytes = (row_items as usize * item).max(1);
    let rows_per_step = if nd == 0 {
        1
    } else {
        (STEP_BYTES / row_bytes).max(1) as i64
    };
    let last = if nd == 0 {
        1
    } else {
        (stop[nd - 1] - start[nd - 1]).max(1) as usize
    };
    let mut out = BufWriter::with_capacity(1 << 20, io::stdout().lock());
    let (first, end) = if nd == 0 { (0, 1) } else { (start[0], stop[0]) };
    let mut buf = Vec::new();
    let mut at = first;
    while at < end {
        let to = (at + rows_per_step).min(end);
        let (mut s0, mut s1) = (start.clone(), stop.clone());
        if nd > 0 {
            s0[0] = at;
            s1[0] = to;
        }
        let n: i64 = (0..nd).map(|d| s1[d] - s0[d]).product();
        buf.resize(n as usize * item, 0);
        arr.get_slice(&s0, &s1, &mut buf)
            .map_err(|e| file_err(path, e))?;
        if a.has("text") {
            let mut line = String::new();
            for (k, it) in buf.chunks_exact(item).enumerate() {
                if k % last != 0 {
                    line.push(' ');
                }
                line.push_str(&format_item(&dtype, it));
                if (k + 1) % last == 0 {
                    line.push('\n');
                    emit(&mut out, line.as_bytes())?;
                    line.clear();
                }
            }
        } else {
            emit(&mut out, &buf)?;
        }
        at = to;
    }
    out.flush().map_err(stdout_err)?;
    Ok(0)
}

const COMPRESS_HELP: &str = "\
usage: b2f compress IN OUT --typesize N [options]

Compresses the raw file IN into a Blosc2 frame OUT (a file, or a directory with --sparse).
  --typesize N     bytes per item (required; shuffle filters work on items)
  --codec NAME     blosclz, lz4, lz4hc, zlib or zstd (default zstd)
  --clevel N       0 to 9 (default 5)
  --filter F       a filter, repeatable, applied in order: shuffle, bitshuffle, delta,
                   trunc_prec:BITS, int_trunc:BITS, bytedelta, none (default: shuffle);
                   BITS > 0 keeps that many bits, < 0 drops that many (lossy)
  --chunksize B    bytes per chunk (default 4 MiB, rounded down to whole items)
  --blocksize B    bytes per block (default: automatic, as c-blosc2 chooses)
  --threads N      compression threads (default 1)
  --sparse         write a sparse frame (a directory of chunk files)
  --force          replace OUT if it exists (only once the new OUT is complete)";

fn codec_id(name: &str) -> Result<u8, CliError> {
    [
        codecs::BLOSCLZ,
        codecs::LZ4,
        codecs::LZ4HC,
        codecs::ZLIB,
        codecs::ZSTD,
    ]
    .into_iter()
    .find(|&c| codecs::name(c) == name.to_ascii_lowercase())
    .ok_or_else(|| {
        CliError::usage(format!(
            "--codec: {name:?} is not blosclz, lz4, lz4hc, zlib or zstd"
        ))
    })
}

fn filter_id(spec: &str) -> Result<(u8, u8), CliError> {
    let (name, meta) = match spec.split_once(':') {
        Some((n, m)) => (n, Some(m)),
        None => (spec, None),
    };
    let id = match name.to_ascii_lowercase().as_str() {
        "none" | "nofilter" => filters::NOFILTER,
        "shuffle" => filters::SHUFFLE,
        "bitshuffle" => filters::BITSHUFFLE,
        "delta" => filters::DELTA,
        "trunc_prec" => filters::TRUNC_PREC,
        "bytedelta" => filters::BYTEDELTA,
        "int_trunc" => filters::INT_TRUNC,
        _ => {
            return Err(CliError::usage(format!(
                "--filter: {spec:?} is not a known filter"
            )))
        }
    };
    let meta = match meta {
        None if id == filters::TRUNC_PREC || id == filters::INT_TRUNC => {
            return Err(CliError::usage(format!(
                "--filter {name} needs the bits to keep (or, negative, to drop): {name}:BITS"
            )))
        }
        None => 0,
        // Negative values are the truncations' bits to drop, stored as int8.
        Some(m) => match m.parse::<i16>() {
            Ok(v @ -128..=-1) => v as i8 as u8,
            Ok(v @ 0..=255) => v as u8,
            _ => {
                return Err(CliError::usage(format!(
                    "--filter: {m:?} is not a filter parameter (-128..=255)"
                )))
            }
        },
    };
    Ok((id, meta))
}

pub fn compress(argv: &[String]) -> Result<i32, CliError> {
    let opts = [
        value("typesize"),
        value("codec"),
        value("clevel"),
        value("filter"),
        value("chunksize"),
        value("blocksize"),
        value("threads"),
        flag("sparse"),
        flag("force"),
    ];
    let Some(a) = parse(argv, &opts, COMPRESS_HELP)? else {
        return Ok(0);
    };
    a.expect(&["IN", "OUT"])?;
    let (input, output) = (Path::new(&a.positional[0]), PathBuf::from(&a.positional[1]));
    let typesize: usize = match a.get("typesize") {
        None => return Err(CliError::usage("--typesize is required")),
        Some(_) => a.number("typesize", 1)?,
    };
    if !(1..=255).contains(&typesize) {
        return Err(CliError::usage(format!(
            "--typesize {typesize} is outside 1..=255"
        )));
    }
    let mut params = CParams {
        codec: codec_id(a.get("codec").unwrap_or("zstd"))?,
        clevel: a.number("clevel", 5u8)?,
        typesize,
        blocksize: a.number("blocksize", 0usize)?,
        nthreads: a.number("threads", 1usize)?.clamp(1, 64),
        ..CParams::default()
    };
    let given: Vec<(u8, u8)> = a
        .all("filter")
        .iter()
        .map(|f| filter_id(f))
        .collect::<Result<_, _>>()?;
    let given = if given.is_empty() {
        vec![(filters::SHUFFLE, 0)]
    } else {
        given
    };
    if given.len() > filters::MAX_FILTERS {
        return Err(CliError::usage(format!(
            "at most {} filters",
            filters::MAX_FILTERS
        )));
    }
    params.filters = [0; 6];
    params.filters_meta = [0; 6];
    let first = filters::MAX_FILTERS - given.len();
    for (k, (id, meta)) in given.into_iter().enumerate() {
        params.filters[first + k] = id;
        params.filters_meta[first + k] = meta;
    }
    let chunksize: usize = a.number("chunksize", 4usize << 20)?;
    let chunksize = chunksize / typesize * typesize;
    if chunksize == 0 || chunksize > i32::MAX as usize / 2 {
        return Err(CliError::usage(
            "--chunksize must hold at least one item and at most 1 GiB",
        ));
    }
    params
        .validate()
        .map_err(|e| CliError::usage(e.to_string()))?;
    check_output(&output, a.has("force"))?;

    let mut src = File::open(input).map_err(|e| CliError::file(input.display(), e))?;
    let total = src.metadata().map(|m| m.len()).unwrap_or(0);
    // Built under a temporary name; it replaces what is at OUT only when complete.
    let tmp = store::temp_path(&output);
    let result = (|| {
        let opts = CreateOptions {
            contiguous: !a.has("sparse"),
            chunksize: chunksize as i32,
            params,
            sync: false,
        };
        let s = SChunk::create(Some(&tmp), &opts).map_err(|e| file_err(&output, e))?;
        let mut buf = vec![0u8; chunksize];
        let mut progress = Progress::new("compressing", total);
        loop {
            let n =
                read_full(&mut src, &mut buf).map_err(|e| CliError::file(input.display(), e))?;
            if n == 0 {
                break;
            }
            s.append(&buf[..n]).map_err(|e| file_err(&output, e))?;
            progress.advance(n as u64);
            if n < buf.len() {
                break;
            }
        }
        progress.finish();
        Ok::<_, CliError>(s.info())
    })();
    let result = result.and_then(|i| {
        store::replace_path(&tmp, &output).map_err(|e| file_err(&output, e))?;
        Ok(i)
    });
    match result {
        Ok(i) => {
            println!(
                "{}: {} chunks, {} -> {} ({:.2}x)",
                output.display(),
                i.nchunks,
                human(i.nbytes as u64),
                human(i.cbytes as u64),
                if i.cbytes > 0 {
                    i.nbytes as f64 / i.cbytes as f64
                } else {
                    0.0
                }
            );
            Ok(0)
        }
        Err(e) => {
            store::remove_path(&tmp);
            Err(e)
        }
    }
}

/// Reads until `buf` is full or the input ends.
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

const DECOMPRESS_HELP: &str = "\
usage: b2f decompress IN OUT [--force]

Writes the decompressed content of the frame IN (every chunk, in order) to the raw file OUT.
OUT appears only when complete (written to a temporary file, then renamed).";

pub fn decompress(argv: &[String]) -> Result<i32, CliError> {
    let Some(a) = parse(argv, &[flag("force")], DECOMPRESS_HELP)? else {
        return Ok(0);
    };
    a.expect(&["IN", "OUT"])?;
    let (input, output) = (Path::new(&a.positional[0]), PathBuf::from(&a.positional[1]));
    check_output(&output, a.has("force"))?;
    let s = open(input, false)?;
    let tmp = store::temp_path(&output);
    let result = (|| {
        let file = File::create(&tmp).map_err(|e| CliError::file(tmp.display(), e))?;
        let mut w = BufWriter::with_capacity(1 << 20, file);
        let mut progress = Progress::new("decompressing", s.info().nbytes.max(0) as u64);
        for i in 0..s.nchunks() as i64 {
            let data = s.get_chunk_vec(i).map_err(|e| file_err(input, e))?;
            w.write_all(&data)
                .map_err(|e| CliError::file(output.display(), e))?;
            progress.advance(data.len() as u64);
        }
        w.flush().map_err(|e| CliError::file(output.display(), e))?;
        progress.finish();
        drop(w);
        store::replace_path(&tmp, &output).map_err(|e| file_err(&output, e))
    })();
    if result.is_err() {
        store::remove_path(&tmp);
    }
    result?;
    let i = s.info();
    println!(
        "{}: {} from {} chunks",
        output.display(),
        human(i.nbytes as u64),
        i.nchunks
    );
    Ok(0)
}

const CONVERT_HELP: &str = "\
usage: b2f convert IN OUT --sparse|--contiguous [--force]

Copies the frame IN to OUT as a sparse frame (a directory of chunk files) or a contiguous one
(a single file). Chunks are copied as they are (no recompression), with every metalayer and
vlmetalayer; c-blosc2 reads the result. OUT is built under a temporary name and appears (with
--force, replaces what is there) only when complete.";

pub fn convert(argv: &[String]) -> Result<i32, CliError> {
    let Some(a) = parse(
        argv,
        &[flag("sparse"), flag("contiguous"), flag("force")],
        CONVERT_HELP,
    )?
    else {
        return Ok(0);
    };
    a.expect(&["IN", "OUT"])?;
    let contiguous = match (a.has("sparse"), a.has("contiguous")) {
        (true, false) => false,
        (false, true) => true,
        _ => return Err(CliError::usage("give one of --sparse or --contiguous")),
    };
    let (input, output) = (Path::new(&a.positional[0]), PathBuf::from(&a.positional[1]));
    check_output(&output, a.has("force"))?;
    if store::same_file(input, &output) {
        return Err(CliError::fail(format!(
            "{}: IN and OUT are the same frame",
            output.display()
        )));
    }
    let s = open(input, false)?;
    let info = s.info();
    // Built under a temporary name; it replaces what is at OUT only when complete.
    let tmp = store::temp_path(&output);
    let result = (|| {
        let opts = CreateOptions {
            contiguous,
            chunksize: info.chunksize,
            params: s.params(),
            sync: false,
        };
        let d = SChunk::create(Some(&tmp), &opts).map_err(|e| file_err(&output, e))?;
        for name in s.meta_names_raw() {
            let content = s.meta_get(&name).map_err(|e| file_err(input, e))?;
            d.meta_add(&name, &content)
                .map_err(|e| file_err(&output, e))?;
        }
        let mut progress = Progress::new("converting", info.nbytes.max(0) as u64);
        for i in 0..info.nchunks {
            let raw = s.get_chunk_raw(i).map_err(|e| file_err(input, e))?;
            d.append_chunk(&raw).map_err(|e| file_err(&output, e))?;
            progress.advance(s.chunk_nbytes(i).unwrap_or(0) as u64);
        }
        for name in s.vlmeta_names_raw() {
            let content = s
                .vlmeta_get(&name, usize::MAX)
                .map_err(|e| file_err(input, e))?;
            d.vlmeta_set(&name, &content)
                .map_err(|e| file_err(&output, e))?;
        }
        progress.finish();
        Ok::<_, CliError>(())
    })();
    if let Err(e) = result {
        store::remove_path(&tmp);
        return Err(e);
    }
    store::replace_path(&tmp, &output).map_err(|e| file_err(&output, e))?;
    println!(
        "{}: {} frame, {} chunks",
        output.display(),
        if contiguous { "contiguous" } else { "sparse" },
        info.nchunks
    );
    Ok(0)
}

const META_HELP: &str = "\
usage: b2f meta FILE [NAME] [--raw]

Lists the frame's metalayers (name, size, content decoded from msgpack), or shows one;
--raw writes its bytes unchanged to stdout.";

pub fn meta(argv: &[String]) -> Result<i32, CliError> {
    let Some(a) = parse(argv, &[flag("raw")], META_HELP)? else {
        return Ok(0);
    };
    if a.positional.is_empty() || a.positional.len() > 2 {
        a.expect(&["FILE", "[NAME]"])?;
    }
    let path = Path::new(&a.positional[0]);
    let s = open(path, false)?;
    let mut out = io::stdout().lock();
    match a.positional.get(1) {
        None => {
            for name in s.meta_names_raw() {
                let raw = s.meta_get(&name).map_err(|e| file_err(path, e))?;
                let name = String::from_utf8_lossy(&name);
                emit(
                    &mut out,
                    format!("{name} ({} bytes): {}\n", raw.len(), shown(&raw)).as_bytes(),
                )?;
            }
        }
        Some(name) => {
            let raw = s.meta_get(name).map_err(|e| file_err(path, e))?;
            show_one(&mut out, &raw, a.has("raw"))?;
        }
    }
    Ok(0)
}

/// Content for display: msgpack decoded as JSON, else hex.
fn shown(raw: &[u8]) -> String {
    msgpack::to_json(raw).unwrap_or_else(|| format!("0x{} (raw)", msgpack::hex(raw)))
}

fn show_one(out: &mut impl Write, raw: &[u8], as_raw: bool) -> Result<(), CliError> {
    if as_raw {
        emit(out, raw)
    } else {
        emit(out, format!("{}\n", shown(raw)).as_bytes())
    }
}

const VLMETA_HELP: &str = "\
usage: b2f vlmeta FILE [list]
       b2f vlmeta FILE get NAME [--raw]
       b2f vlmeta FILE set NAME VALUE [--raw]
       b2f vlmeta FILE rm NAME

Variable-length metalayers (stored compressed in the frame's trailer). `set` stores VALUE as a
msgpack string, as python-blosc2 stores a str (so `arr.schunk.vlmeta[NAME]` reads it back);
--raw stores its bytes unchanged. Changes are committed crash-safely.";

pub fn vlmeta(argv: &[String]) -> Result<i32, CliError> {
    let Some(a) = parse(argv, &[flag("raw")], VLMETA_HELP)? else {
        return Ok(0);
    };
    let pos: Vec<&str> = a.positional.iter().map(String::as_str).collect();
    let Some(&file) = pos.first() else {
        return Err(CliError::usage("expected FILE"));
    };
    let path = Path::new(file);
    let mut out = io::stdout().lock();
    match &pos[1..] {
        [] | ["list"] => {
            let s = open(path, false)?;
            for name in s.vlmeta_names_raw() {
                let raw = s
                    .vlmeta_get(&name, usize::MAX)
                    .map_err(|e| file_err(path, e))?;
                let name = String::from_utf8_lossy(&name);
                emit(
                    &mut out,
                    format!("{name} ({} bytes): {}\n", raw.len(), shown(&raw)).as_bytes(),
                )?;
            }
        }
        ["get", name] => {
            let s = open(path, false)?;
            let raw = s
                .vlmeta_get(name, usize::MAX)
                .map_err(|e| file_err(path, e))?;
            show_one(&mut out, &raw, a.has("raw"))?;
        }
        ["set", name, val] => {
            let s = open(path, true)?;
            let content = if a.has("raw") {
                val.as_bytes().to_vec()
            } else {
                let mut v = Vec::new();
                rmp::encode::write_str(&mut v, val).map_err(|e| CliError::fail(e.to_string()))?;
                v
            };
            s.vlmeta_set(name, &content)
                .map_err(|e| file_err(path, e))?;
        }
        ["rm", name] => {
            let s = open(path, true)?;
            s.vlmeta_delete(name).map_err(|e| file_err(path, e))?;
        }
        _ => {
            return Err(CliError::usage(
                "expected list, get NAME, set NAME VALUE or rm NAME",
            ))
        }
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slab_specs() {
        let shape = [10, 20, 30];
        assert_eq!(
            parse_slab("0:10,5,:", &shape).unwrap(),
            (vec![0, 5, 0], vec![10, 6, 30])
        );
        assert_eq!(
            parse_slab("-1", &shape).unwrap(),
            (vec![9, 0, 0], vec![10, 20, 30])
        );
        assert_eq!(
            parse_slab(":3,-5:", &shape).unwrap(),
            (vec![0, 15, 0], vec![3, 20, 30])
        );
        assert!(parse_slab("1,2,3,4", &shape).is_err());
        assert!(parse_slab("a:b", &shape).is_err());
    }
}
