//! `b2f info`: what a frame is and holds, as text or as one JSON object.

use std::fmt::Write;
use std::path::Path;

use b2frame::chunk::SpecialValue;
use b2frame::ndim::Array;
use b2frame::schunk::SChunk;
use b2frame::{codecs, filters};

use crate::msgpack::{hex, json_string, to_json};
use crate::progress::human;

/// One metalayer or vlmetalayer: its name, size and content (JSON when it is msgpack).
struct Layer {
    name: String,
    len: usize,
    json: Option<String>,
    raw: Vec<u8>,
}

impl Layer {
    fn new(name: String, raw: Vec<u8>) -> Layer {
        Layer {
            name,
            len: raw.len(),
            json: to_json(&raw),
            raw,
        }
    }

    /// The content for display: decoded msgpack, else hex (cut after 64 bytes).
    fn shown(&self) -> String {
        match &self.json {
            Some(j) => j.clone(),
            None if self.raw.len() > 64 => format!("0x{}... (raw)", hex(&self.raw[..64])),
            None => format!("0x{} (raw)", hex(&self.raw)),
        }
    }

    fn json_value(&self) -> String {
        match &self.json {
            Some(j) => j.clone(),
            None => {
                let mut s = String::new();
                json_string(&format!("0x{}", hex(&self.raw)), &mut s);
                s
            }
        }
    }
}

fn filter_list(f: &[u8], meta: &[u8]) -> Vec<String> {
    f.iter()
        .zip(meta)
        .filter(|(&id, _)| id != filters::NOFILTER)
        .map(|(&id, &m)| match m {
            0 => filters::name(id).to_string(),
            m => format!("{}({m})", filters::name(id)),
        })
        .collect()
}

fn special_name(k: SpecialValue) -> &'static str {
    match k {
        SpecialValue::None => "data",
        SpecialValue::Zero => "zeros",
        SpecialValue::Nan => "nan",
        SpecialValue::Value => "value",
        SpecialValue::Uninit => "uninit",
    }
}

fn list<T: std::fmt::Display>(v: &[T]) -> String {
    let items: Vec<String> = v.iter().map(|x| x.to_string()).collect();
    format!("[{}]", items.join(", "))
}

/// Prints what `b2f info` shows.
pub fn info(path: &Path, s: &SChunk, json: bool) -> String {
    let i = s.info();
    let kind = if i.contiguous { "cframe" } else { "sframe" };
    // Special chunks: counted from the index and the chunk headers only.
    let mut specials: Vec<(SpecialValue, usize)> = Vec::new();
    let mut unreadable = Vec::new();
    for c in 0..i.nchunks {
        match s.chunk_special(c) {
            Ok(SpecialValue::None) => {}
            Ok(k) => match specials.iter_mut().find(|(x, _)| *x == k) {
                Some(e) => e.1 += 1,
                None => specials.push((k, 1)),
            },
            Err(_) => unreadable.push(c),
        }
    }
    let nspecial: usize = specials.iter().map(|e| e.1).sum();
    // No ratio when nothing is stored (an empty frame, or only special chunks).
    let ratio = (i.cbytes > 0).then(|| i.nbytes as f64 / i.cbytes as f64);
    let metas: Vec<Layer> = s
        .meta_names_raw()
        .into_iter()
        .map(|n| {
            let raw = s.meta_get(&n).unwrap_or_default();
            Layer::new(String::from_utf8_lossy(&n).into_owned(), raw)
        })
        .collect();
    let vlmetas: Vec<Layer> = s
        .vlmeta_names_raw()
        .into_iter()
        .map(|n| {
            let raw = s.vlmeta_get(&n, 64 << 20).unwrap_or_default();
            Layer::new(String::from_utf8_lossy(&n).into_owned(), raw)
        })
        .collect();
    let array = Array::open(s).ok();
    let filters = filter_list(&i.filters, &i.filters_meta);

    let mut o = String::new();
    if json {
        o.push('{');
        let mut field = |k: &str, v: String| {
            if o.len() > 1 {
                o.push_str(", ");
            }
            json_string(k, &mut o);
            o.push_str(": ");
            o.push_str(&v);
        };
        let js = |s: &str| {
            let mut o = String::new();
            json_string(s, &mut o);
            o
        };
        field("file", js(&path.display().to_string()));
        field("kind", js(kind));
        field("format_version", i.format_version.to_string());
        field("codec", js(codecs::name(i.codec)));
        field("clevel", i.clevel.to_string());
        field(
            "filters",
            format!(
                "[{}]",
                filters.iter().map(|f| js(f)).collect::<Vec<_>>().join(", ")
            ),
        );
        field("typesize", i.typesize.to_string());
        field("chunksize", i.chunksize.to_string());
        field("blocksize", i.blocksize.to_string());
        field("nchunks", i.nchunks.to_string());
        field("nbytes", i.nbytes.to_string());
        field("cbytes", i.cbytes.to_string());
        field(
            "ratio",
            ratio.map_or_else(|| "null".to_string(), |r| format!("{r:.3}")),
        );
        field("special_chunks", nspecial.to_string());
        field(
            "special_kinds",
            format!(
                "{{{}}}",
                specials
                    .iter()
                    .map(|(k, n)| format!("{}: {n}", js(special_name(*k))))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        );
        field("unreadable_chunks", list(&unreadable));
        match &array {
            Some(a) => field(
                "array",
                format!(
                    "{{\"metalayer\": {}, \"ndim\": {}, \"shape\": {}, \"chunks\": {}, \"blocks\": {}, \"dtype\": {}, \"itemsize\": {}}}",
                    js(if a.caterva { "caterva" } else { "b2nd" }),
                    a.meta.ndim(),
                    list(&a.meta.shape),
                    list(&a.meta.chunkshape),
                    list(&a.meta.blockshape),
                    a.meta.dtype.as_deref().map(js).unwrap_or_else(|| "null".into()),
                    a.geom.itemsize
                ),
            ),
            None => field("array", "null".into()),
        }
        let layers = |v: &[Layer]| {
            format!(
                "[{}]",
                v.iter()
                    .map(|l| format!(
                        "{{\"name\": {}, \"size\": {}, \"hex\": {}, \"value\": {}}}",
                        js(&l.name),
                        l.len,
                        js(&hex(&l.raw)),
                        l.json_value()
                    ))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        field("metalayers", layers(&metas));
        field("vlmetalayers", layers(&vlmetas));
        o.push('}');
        o.push('\n');
        return o;
    }

    let _ = writeln!(o, "file          {}", path.display());
    let _ = writeln!(
        o,
        "kind          {kind} ({}), format version {}",
        if i.contiguous {
            "contiguous frame"
        } else {
            "sparse frame: a directory of chunk files"
        },
        i.format_version
    );
    if let Some(a) = &array {
        let _ = writeln!(
            o,
            "array         {}: shape {}, chunks {}, blocks {}, dtype {} ({} bytes per item)",
            if a.caterva { "caterva" } else { "b2nd" },
            list(&a.meta.shape),
            list(&a.meta.chunkshape),
            list(&a.meta.blockshape),
            a.meta.dtype.as_deref().unwrap_or("(none)"),
            a.geom.itemsize
        );
    }
    let _ = writeln!(
        o,
        "codec         {} (clevel {})",
        codecs::name(i.codec),
        i.clevel
    );
    let _ = writeln!(
        o,
        "filters       {}",
        if filters.is_empty() {
            "none".to_string()
        } else {
            filters.join(", ")
        }
    );
    let _ = writeln!(o, "typesize      {}", i.typesize);
    let _ = writeln!(
        o,
        "chunksize     {}",
        match i.chunksize {
            cs if cs > 0 => format!("{cs} ({})", human(cs as u64)),
            0 => "variable".into(),
            _ => "not set (the first chunk sets it)".into(),
        }
    );
    let _ = writeln!(
        o,
        "blocksize     {}",
        if i.blocksize > 0 {
            format!("{} ({})", i.blocksize, human(i.blocksize as u64))
        } else {
            "automatic/variable".into()
        }
    );
    let kinds: Vec<String> = specials
        .iter()
        .map(|(k, n)| format!("{n} {}", special_name(*k)))
        .collect();
    let _ = writeln!(
        o,
        "chunks        {}{}",
        i.nchunks,
        if nspecial > 0 {
            format!(" ({nspecial} special: {})", kinds.join(", "))
        } else {
            String::new()
        }
    );
    if !unreadable.is_empty() {
        let _ = writeln!(
            o,
            "unreadable    chunks {} (run `b2f verify`)",
            list(&unreadable)
        );
    }
    let _ = writeln!(
        o,
        "nbytes        {} ({})",
        i.nbytes,
        human(i.nbytes.max(0) as u64)
    );
    let _ = writeln!(
        o,
        "cbytes        {} ({})",
        i.cbytes,
        human(i.cbytes.max(0) as u64)
    );
    let _ = match ratio {
        Some(r) => writeln!(o, "ratio         {r:.2}x"),
        None => writeln!(o, "ratio         - (no chunk data stored)"),
    };
    for (title, v) in [("metalayers", &metas), ("vlmetalayers", &vlmetas)] {
        if v.is_empty() {
            let _ = writeln!(o, "{title:<13} none");
            continue;
        }
        let _ = writeln!(o, "{title}");
        for l in v.iter() {
            let _ = writeln!(o, "  {} ({} bytes): {}", l.name, l.len, l.shown());
        }
    }
    o
}
