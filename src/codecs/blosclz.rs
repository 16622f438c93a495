//! BloscLZ: c-blosc2's own LZ77 codec (a FastLZ descendant), written here in safe Rust.
//!
//! Stream format. A stream is a sequence of tokens; the first is always a literal run (the
//! encoder sets bit 5 of the first byte as a marker, which decoders mask off).
//! - Literal run: `ctrl < 32`, then `ctrl + 1` bytes.
//! - Match: `ctrl = (len << 5) | (dist >> 8)` with `len` in 1..=7; `len == 7` is followed by
//!   extension bytes added to it while they are 255 (the last one included); then the low
//!   byte of the distance. The match copies `len + 2` bytes from `op - dist - 1`. A low byte
//!   of 255 with `dist >> 8 == 31` means a far match: two more bytes give a 16-bit distance,
//!   counted from `op - 8191 - 1`.
//!
//! The encoder makes c-blosc2's decisions (hash, table sizes per clevel, the entropy probe
//! that gives up early on incompressible data, the shifted match ends, the second hash
//! insertion at clevel 9), so its output equals c-blosc2's byte for byte.

use crate::error::{Error, Result};

const MAX_COPY: usize = 32;
const MAX_DISTANCE: usize = 8191;
const MAX_FARDISTANCE: usize = 65535 + MAX_DISTANCE - 1;
const HASH_LOG: u32 = 14;
/// Bytes a match end is moved back by (and the shortest match worth encoding).
const IPSHIFT: usize = 4;
const MINLEN: usize = 4;

/// The hash of four bytes. A constant `HASHLOG` makes the shift an immediate and the mask fold away.
#[inline(always)]
fn hash<const HASHLOG: u32>(seq: u32) -> usize {
    (seq.wrapping_mul(2_654_435_761) >> (32 - HASHLOG)) as usize & HMASK
}

#[inline(always)]
fn read_u32(d: &[u8], at: usize) -> u32 {
    let mut b = [0u8; 4];
    b.copy_from_slice(&d[at..at + 4]);
    u32::from_le_bytes(b)
}

/// Marks the branch it sits in as rarely taken, so the compiler lays the common path out
/// straight (`std::hint::cold_path` is newer than the crate's `rust-version`).
#[cold]
#[inline(always)]
fn cold() {}

/// `b`, telling the compiler it is usually false.
#[inline(always)]
fn unlikely(b: bool) -> bool {
    if b {
        cold();
    }
    b
}

/// The hash table's slots: `1 << HASH_LOG` entries; indexes are masked so no bound check is
/// needed.
type Slots = [u32; 1 << HASH_LOG];

/// The hash table, shared by the streams a thread compresses.
///
/// c-blosc2 clears the table before every probe and every stream: 64 KiB twice for a stream
/// of 128 bytes, 87% of the time of compressing a 1 KiB chunk of 8 such streams, and a fifth
/// of it for a 64 KiB chunk of 16 KiB streams. Here it is cleared only before a use likely to
/// fill it (see [`HashTable::begin`]) and once per 4 GiB. Each use stores its positions plus
/// a base, which is `MAX_FARDISTANCE` above every value stored before: a slot left by an
/// earlier use then holds a position out of reach, and is passed over as c-blosc2 passes
/// over a cleared slot, except for one.
///
/// A cleared slot reads as position 0, a candidate wherever the 4 bytes at 0 recur. Those
/// bytes hash to one slot, and a sequence hashing elsewhere differs from them, so only that
/// slot's 0 matters: [`HashTable::begin`] stores position 0 there.
struct HashTable {
    slots: Box<Slots>,
    /// The next use's base: every value in `slots` is `MAX_FARDISTANCE` or more below it.
    next_base: u32,
    /// About how many slots the last use wrote per 256 bytes it read.
    density: usize,
    /// The same for the last encoder (see [`encoder_clears`]).
    encoder_density: usize,
    /// Cleared for every use, as c-blosc2's is: the reference the tests compare with.
    always_clear: bool,
}

impl HashTable {
    fn new() -> HashTable {
        HashTable {
            slots: Box::new([0; 1 << HASH_LOG]),
            next_base: 0,
            density: 256,
            encoder_density: 256,
            always_clear: false,
        }
    }

    /// A table cleared for every use, as c-blosc2's is: the reference the tests compare with.
    #[cfg(any(test, fuzzing))]
    fn cleared_for_every_use() -> HashTable {
        HashTable {
            always_clear: true,
            ..HashTable::new()
        }
    }

    /// The slots, and the base to add to the positions stored, for a probe or an encoder
    /// reading `d` (and storing positions up to `d.len()`), cleared if `clear`.
    fn begin<const HASHLOG: u32>(&mut self, d: &[u8], clear: bool) -> (&mut Slots, u32) {
        let span = u32::try_from(d.len() + MAX_FARDISTANCE).unwrap_or(u32::MAX);
        // Cleared (every slot then reads as position 0, as in c-blosc2) for a use likely to
        // write more slots than the table has. Where as many slots hold this use's positions
        // as earlier ones', the branch on a slot being in reach mispredicts: random 64 KiB
        // streams compressed 1.5 times slower without the clearing. Clearing at half the
        // slots instead: random 16 KiB streams 1.71 -> 1.36 times c-blosc2's speed.
        let dense = d.len().saturating_mul(self.density) / 256 > 1 << HASHLOG;
        if clear || dense || self.always_clear || self.next_base.checked_add(span).is_none() {
            self.slots.fill(0);
            self.next_base = 0;
        }
        let base = self.next_base;
        // Moved on before use, so a panic on the way leaves no value above it.
        self.next_base = base.saturating_add(span);
        if d.len() >= 4 {
            self.slots[hash::<HASHLOG>(read_u32(d, 0))] = base;
        }
        (&mut self.slots, base)
    }

    /// Notes that the use begun last read `read` bytes and wrote about `written` slots.
    fn end(&mut self, read: usize, written: usize) {
        if let Some(density) = written.saturating_mul(256).checked_div(read) {
            self.density = density;
        }
    }
}

/// Whether the encoder of a stream of `len` bytes clears the table, where the last encoder
/// wrote `density` slots per 256 bytes (beside the rule of [`HashTable::begin`]): streams of
/// 32 KiB or more that are not mostly long matches. Data in runs between long runs of zeros
/// (sparse arrays) writes few slots per stream, so the table is not cleared by that rule,
/// but the runs write thousands, and meet the slots of earlier streams, in reach or not at
/// random: the encoder's branch on reach mispredicted. On such data (bench_chunk's
/// sparse_f64, 8 MiB) BloscLZ compressed at 0.79-0.87 of c-blosc2's speed, and at 0.99-1.02
/// with every encoder clearing; the clearing costs a `memset` of 64 KiB, a few percent of a
/// stream of 32 KiB that writes a slot every 16 bytes.
#[inline]
fn encoder_clears(len: usize, density: usize) -> bool {
    len >= 32 << 10 && density >= 16
}

const HMASK: usize = (1 << HASH_LOG) - 1;

/// Whether a match `distance` bytes back can be encoded: 1..MAX_FARDISTANCE, as one
/// comparison (a distance of 0, the slot holding this very position, wraps to the top).
#[inline(always)]
fn reachable(distance: usize) -> bool {
    distance.wrapping_sub(1) < MAX_FARDISTANCE - 1
}

/// One past the first position `q` in `ip..bound` where `d[q] != d[q - dist]`, or `bound`.
///
/// The differing byte of a 16-byte chunk is found from the compared bytes (`trailing_zeros`),
/// or with `BYTE_SCAN` by comparing its bytes in turn, as c-blosc2 finds it (here within the
/// chunk, unrolled and without bound checks, where c-blosc2 loops). Computed, the match end
/// makes the next hash lookup wait for the compare; scanned, it comes from the branch
/// predictor, which pays where matches keep ending alike (unfiltered incr_i32 compressed
/// 1.15-1.18 times faster) and costs where they do not (rainfall_f32 0.83-0.95 times, shuffled
/// or not). [`Probe::regular`] picks one per stream.
#[inline(always)]
fn match_end<const BYTE_SCAN: bool>(d: &[u8], ip: usize, dist: usize, bound: usize) -> usize {
    // Both windows are taken once, so the chunk loop runs without bound checks.
    let cur = &d[ip..bound];
    // Cut to `cur`'s length, so the compiler knows both chunk counts are the same.
    let prev = &d[ip - dist..][..cur.len()];
    let mut done = 0;
    for (a, b) in cur.chunks_exact(16).zip(prev.chunks_exact(16)) {
        let (a, b) = (chunk16(a), chunk16(b));
        // As integers, not slices: a slice comparison may become a `bcmp` call.
        let diff = u128::from_le_bytes(*a) ^ u128::from_le_bytes(*b);
        if diff != 0 {
            let differs_at = if BYTE_SCAN {
                // Ends within this chunk, which differs: no bound to check.
                a.iter().zip(b).take_while(|(x, y)| x == y).count()
            } else {
                (diff.trailing_zeros() / 8) as usize
            };
            return ip + done + differs_at + 1;
        }
        done += 16;
    }
    match cur[done..]
        .iter()
        .zip(&prev[done..])
        .position(|(a, b)| a != b)
    {
        Some(q) => ip + done + q + 1,
        None => ip + cur.len(),
    }
}

/// The length the encoder would give a match at `anchor` (its end moved back by `IPSHIFT`,
/// so it may be below `MINLEN` or 0), out of line: inlined, `match_end` costs the probe's
/// literal loop registers and induction variables.
#[inline(never)]
fn probe_match_len(d: &[u8], anchor: usize, distance: usize, bound: usize) -> usize {
    (match_end::<false>(d, anchor + 4, distance, bound) - IPSHIFT).saturating_sub(anchor)
}

/// A 16-byte chunk (of `chunks_exact(16)`) as an array.
#[inline(always)]
fn chunk16(s: &[u8]) -> &[u8; 16] {
    s.try_into().unwrap_or(&[0; 16])
}

/// Whether `d` compresses to at least `min_cratio` by c-blosc2's "entropy probing": a dry run
/// of the encoder over at most `1 << HASHLOG` bytes that only counts output bytes. Passes
/// exactly when c-blosc2's `get_cratio` would return `min_cratio` or more. On the way it
/// tells whether the matches it saw were regular.
fn probe<const HASHLOG: u32>(d: &[u8], htab: &mut HashTable, min_cratio: f64) -> Probe {
    let (slots, base) = htab.begin::<HASHLOG>(d, false);
    let answer = if base == 0 {
        probe_slots::<HASHLOG, true, false>(d, slots, 0, min_cratio)
    } else if probe_tests_bytes_first(d.len().min(1 << HASHLOG)) {
        probe_slots::<HASHLOG, false, true>(d, slots, base, min_cratio)
    } else {
        probe_slots::<HASHLOG, false, false>(d, slots, base, min_cratio)
    };
    // Each probed literal writes a slot and counts a byte; a match writes two and counts two
    // or more.
    htab.end(answer.read, answer.counted);
    answer
}

/// [`probe`] on slots given by [`HashTable::begin`] with `base`, which `BASE_0` says is 0
/// (the table was cleared), so that the instance has no arithmetic on it; candidates tested
/// as [`candidate_matches`] does for `BYTES_FIRST`.
fn probe_slots<const HASHLOG: u32, const BASE_0: bool, const BYTES_FIRST: bool>(
    d: &[u8],
    htab: &mut Slots,
    base: u32,
    min_cratio: f64,
) -> Probe {
    let base = if BASE_0 { 0 } else { base };
    let hashlen = 1usize << HASHLOG;
    let limit = d.len().min(hashlen);
    let mut shape = MatchShape::default();
    if limit < 12 {
        // c-blosc2's ratio is 0 here: nothing is probed.
        return shape.probe(false, 0, 0);
    }
    let ip_bound = limit - 1;
    let ip_limit = limit - 12;
    // The answer is often known long before the end, so the probe stops once it is. The dry
    // run ends with `ip <= limit`, and `oc` never falls from one token to the next (a literal
    // adds 1 or 2, a match at least 2), so once `limit / oc < min_cratio` the answer is no:
    // incompressible data gets there about 81% of the way at clevel 5. Checked where a literal
    // run fills up, off the hot path. For the answer yes, see `surely_passes`, checked every
    // `CHECK_EVERY` matches (a byte count would take a register in the literal loop).
    let oc_hopeless = first_hopeless_count(limit, min_cratio);
    const CHECK_EVERY: u32 = 16;
    let mut matches_to_check = CHECK_EVERY;
    let mut oc: i64 = 5;
    let mut copy: usize = 4;
    let mut ip = 0usize;
    while ip < ip_limit {
        // Literals up to where the run fills up, counted once they are passed.
        let run_end = (ip + MAX_COPY - copy).min(ip_limit);
        let candidate = next_candidate::<HASHLOG, BYTES_FIRST>(d, htab, base, ip, run_end);
        let literals = candidate.map_or(run_end, |(anchor, _)| anchor) - ip;
        oc += literals as i64;
        copy += literals;
        ip += literals;
        if let Some((anchor, distance)) = candidate {
            let dist = distance - 1;
            let len = probe_match_len(d, anchor, distance, ip_bound);
            if len >= MINLEN {
                shape.count(len);
                if copy == 0 {
                    oc -= 1;
                }
                copy = 0;
                if len >= 7 {
                    oc += ((len - 7) / 255) as i64 + 1;
                }
                oc += if dist < MAX_DISTANCE { 2 } else { 4 };
                let mend = anchor + len;
                htab[hash::<HASHLOG>(read_u32(d, mend))] = base.wrapping_add(mend as u32);
                ip = mend + 2;
                oc += 1;
                matches_to_check -= 1;
                if matches_to_check == 0 {
                    if surely_passes(ip, oc, ip_limit, limit, min_cratio) {
                        return shape.probe(true, ip, oc);
                    }
                    matches_to_check = CHECK_EVERY;
                }
                continue;
            }
            // Too short: a literal byte after all.
            oc += 1;
            copy += 1;
            ip = anchor + 1;
        }
        if copy == MAX_COPY {
            copy = 0;
            oc += 1;
            if oc >= oc_hopeless {
                return shape.probe(false, ip, oc);
            }
        }
    }
    shape.probe(ip as f64 / oc as f64 >= min_cratio, ip, oc)
}

/// The first position in `from..to` where a match may start (its slot held an earlier,
/// reachable position with the same four bytes), with how far back that position is; `None`
/// when there is none. Each position passed is recorded in `htab`, as the probe records
/// literals. A loop of its own, without the probe's counters: on incompressible data the
/// probe is mostly this loop. `to + 3` must be within `d`.
#[inline(always)]
fn next_candidate<const HASHLOG: u32, const BYTES_FIRST: bool>(
    d: &[u8],
    htab: &mut Slots,
    base: u32,
    from: usize,
    to: usize,
) -> Option<(usize, usize)> {
    for (p, w) in (from..to).zip(d[from..to + 3].windows(4)) {
        let seq = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
        let h = hash::<HASHLOG>(seq);
        // An earlier use's position is far below `base`: it wraps to far above `p`.
        let r = htab[h].wrapping_sub(base) as usize;
        htab[h] = base.wrapping_add(p as u32);
        let distance = p.wrapping_sub(r);
        if candidate_matches::<BYTES_FIRST>(d, r, distance, seq) {
            return Some((p, distance));
        }
    }
    None
}

/// Whether the encoder of a stream of `len` bytes tests a candidate's bytes before its reach
/// (see [`candidate_matches`]): streams longer than `MAX_FARDISTANCE`. From there on, the
/// empty slots of a cleared table (position 0) and those earlier uses left are out of reach,
/// while the slots this stream wrote are in reach, those its other sequences collide with
/// too: the branch on reach then goes either way, more often as the table fills. c-blosc2
/// tests the reach first. With the bytes first, 8 MiB of unfiltered sparse_f64 (blocks of
/// 128 KiB) took about a sixth of the mispredicted branches (cachegrind: 132,640 -> 21,589 a
/// chunk). Not for shorter streams on a table earlier uses left positions in, where the same
/// holds from the start: 64 KiB chunks, one stream each, compressed 7-10% slower (unfiltered
/// sparse_f64 and incr_i32), the selects costing more than the branches saved.
#[inline]
fn encoder_tests_bytes_first(len: usize) -> bool {
    len > MAX_FARDISTANCE
}

/// Whether a probe of `len` bytes on a table earlier uses left positions in tests a
/// candidate's bytes first (the reason as for [`encoder_tests_bytes_first`]): probes of 16
/// KiB, the longest (clevels 3-9). 8 MiB chunks of 64 KiB streams: shuffled smooth_f64 1.12
/// -> 1.24 of c-blosc2's speed, shuffled sparse_f64 0.96 -> 0.98; 64 KiB chunks unchanged.
#[inline]
fn probe_tests_bytes_first(len: usize) -> bool {
    len >= 16 << 10
}

/// Whether position `r`, `distance` back, starts a match for `seq`: c-blosc2's test, in reach
/// and the same four bytes. With `BYTES_FIRST` both go into one comparison, so that its one
/// branch goes by the bytes: eight bytes, the four at `r` (at 0 when out of reach, as `r`
/// may then lie outside `d`) against `seq` with bit 32 set when out of reach, which four
/// bytes never have. With `&&` or `&`, or a plain `if` for that bit, the compiler branched on
/// the reach first; `select_unpredictable` keeps the selects.
#[inline(always)]
fn candidate_matches<const BYTES_FIRST: bool>(
    d: &[u8],
    r: usize,
    distance: usize,
    seq: u32,
) -> bool {
    if BYTES_FIRST {
        let reach = reachable(distance);
        let at = std::hint::select_unpredictable(reach, r, 0);
        let want = u64::from(seq) | std::hint::select_unpredictable(reach, 0, 1 << 32);
        u64::from(read_u32(d, at)) == want
    } else {
        reachable(distance) && read_u32(d, r) == seq
    }
}

/// What the probe found.
struct Probe {
    /// Whether the data compresses well enough to be encoded (c-blosc2's decision).
    passes: bool,
    /// Whether matches keep the same length, so their ends are best found by a byte scan.
    regular: bool,
    /// The bytes read, and the output bytes counted for them.
    read: usize,
    counted: usize,
}

/// How many of the probe's matches had the length of the match before them.
#[derive(Default)]
struct MatchShape {
    matches: u32,
    repeats: u32,
    last_len: usize,
}

impl MatchShape {
    fn count(&mut self, len: usize) {
        self.matches += 1;
        self.repeats += u32::from(len == self.last_len);
        self.last_len = len;
    }

    /// Regular: at least 16 matches, 7 in 8 of them as long as the one before.
    fn probe(&self, passes: bool, read: usize, counted: i64) -> Probe {
        Probe {
            passes,
            regular: self.matches >= 16 && self.repeats * 8 >= self.matches * 7,
            read,
            counted: counted.max(0) as usize,
        }
    }
}

/// Whether the probe's ratio is sure to end at `min_cratio` or above, seen right after a
/// match (so no literal run is open) at `ip` with `oc` bytes counted.
///
/// From here on each input byte adds at most 33/32 to `oc`: a literal adds 1, plus a count
/// byte every 32 (each run starts from 0 after a match); a match of `len` takes
/// `len + 2 >= 6` bytes and adds at most 5, plus `(len - 7) / 255 + 1` when `len >= 7`. The
/// run ends with `ip` somewhere in `max(ip, ip_limit)..=limit`,
/// and the worst-case ratio is monotonic in that end, so its two ends bound it. The margin
/// keeps the final f64 division on the same side. Out of line, so its arithmetic on `ip`
/// adds no induction variables to the probe's loop.
#[inline(never)]
fn surely_passes(ip: usize, oc: i64, ip_limit: usize, limit: usize, min_cratio: f64) -> bool {
    let needed = min_cratio * (1.0 + 1e-9);
    [ip.max(ip_limit), limit].iter().all(|&end| {
        let worst_oc_times_32 = 32 * oc + 33 * (end - ip) as i64;
        32.0 * end as f64 >= needed * worst_oc_times_32 as f64
    })
}

/// The smallest output count `oc` with `limit / oc < min_cratio` in f64, as the probe's final
/// division computes it (f64 division is monotonic, so every larger count is below too).
fn first_hopeless_count(limit: usize, min_cratio: f64) -> i64 {
    let below = |oc: i64| (limit as f64) / (oc as f64) < min_cratio;
    let mut oc = (limit as f64 / min_cratio) as i64 + 1;
    while oc > 1 && below(oc - 1) {
        oc -= 1;
    }
    while !below(oc) {
        oc += 1;
    }
    oc
}

/// Compresses `src` into `dst` at `clevel` (1..=9). Returns the compressed length, or 0 when
/// the data does not compress well enough or does not fit in `dst` (the caller then stores it
/// uncompressed), exactly as c-blosc2's `blosclz_compress` does.
pub fn compress(clevel: u8, src: &[u8], dst: &mut [u8]) -> usize {
    HTAB.with(|h| compress_in(clevel, src, dst, &mut h.borrow_mut()))
}

/// [`compress`] with the hash table `htab`.
fn compress_in(clevel: u8, src: &[u8], dst: &mut [u8], htab: &mut HashTable) -> usize {
    let clevel = usize::from(clevel.clamp(1, 9));
    let hashlog = [
        0,
        HASH_LOG - 2,
        HASH_LOG - 1,
        HASH_LOG,
        HASH_LOG,
        HASH_LOG,
        HASH_LOG,
        HASH_LOG,
        HASH_LOG,
        HASH_LOG,
    ][clevel];
    let length = src.len();
    let maxlen = match clevel {
        1 => length / 8,
        2 | 3 => length / 4,
        4..=6 => length / 2,
        _ => length,
    };
    match hashlog {
        12 => compress_with::<12>(clevel, src, maxlen, dst, htab),
        13 => compress_with::<13>(clevel, src, maxlen, dst, htab),
        _ => compress_with::<HASH_LOG>(clevel, src, maxlen, dst, htab),
    }
}

/// Probes the last `maxlen` bytes, then encodes unless the probe says it is not worth it.
fn compress_with<const HASHLOG: u32>(
    clevel: usize,
    src: &[u8],
    maxlen: usize,
    dst: &mut [u8],
    htab: &mut HashTable,
) -> usize {
    let length = src.len();
    const MIN_CRATIO: [f64; 10] = [0.0, 2.0, 1.5, 1.2, 1.2, 1.2, 1.2, 1.15, 1.1, 1.0];
    let probe = probe::<HASHLOG>(&src[length - maxlen..], htab, MIN_CRATIO[clevel]);
    if !probe.passes || length < 16 || dst.len() < 66 {
        return 0;
    }
    // c-blosc2 hashes a second position after each match at clevel 9 only.
    encode_as::<HASHLOG>(src, dst, htab, clevel == 9, probe.regular).unwrap_or(0)
}

/// [`encode`], the instance for `second_hash` and `byte_scan` picked at run time, on the
/// table's next use.
fn encode_as<const HASHLOG: u32>(
    d: &[u8],
    out: &mut [u8],
    htab: &mut HashTable,
    second_hash: bool,
    byte_scan: bool,
) -> Option<usize> {
    let clear = encoder_clears(d.len(), htab.encoder_density);
    let (slots, base) = htab.begin::<HASHLOG>(d, clear);
    let n = match (second_hash, byte_scan) {
        (true, true) => encode_on::<HASHLOG, true, true>(d, out, slots, base),
        (true, false) => encode_on::<HASHLOG, true, false>(d, out, slots, base),
        (false, true) => encode_on::<HASHLOG, false, true>(d, out, slots, base),
        (false, false) => encode_on::<HASHLOG, false, false>(d, out, slots, base),
    };
    // A literal writes a slot and a byte; a match two or three slots and two bytes or more.
    htab.end(d.len(), n.unwrap_or(d.len()));
    htab.encoder_density = htab.density;
    n
}

/// [`encode`], the instance for a base of 0 (a cleared table) or not, and for
/// [`encoder_tests_bytes_first`], picked at run time.
fn encode_on<const HASHLOG: u32, const SECOND_HASH: bool, const BYTE_SCAN: bool>(
    d: &[u8],
    out: &mut [u8],
    slots: &mut Slots,
    base: u32,
) -> Option<usize> {
    match (base == 0, encoder_tests_bytes_first(d.len())) {
        (true, false) => encode::<HASHLOG, SECOND_HASH, BYTE_SCAN, true, false>(d, out, slots, 0),
        (true, true) => encode::<HASHLOG, SECOND_HASH, BYTE_SCAN, true, true>(d, out, slots, 0),
        (false, false) => {
            encode::<HASHLOG, SECOND_HASH, BYTE_SCAN, false, false>(d, out, slots, base)
        }
        (false, true) => {
            encode::<HASHLOG, SECOND_HASH, BYTE_SCAN, false, true>(d, out, slots, base)
        }
    }
}

thread_local! {
    /// The encoder's hash table, reused by every stream a thread compresses.
    static HTAB: std::cell::RefCell<HashTable> = std::cell::RefCell::new(HashTable::new());
}

/// The encoder proper, on slots given by [`HashTable::begin`] with `base` (0 when `BASE_0`,
/// as in [`probe_slots`]); `None` when the output does not fit.
///
/// Out of line, so that each of its instances gets registers of its own: inlined into
/// `compress_with` beside its byte-scan twin, the computed-end encoder ran 5-9% slower on
/// rainfall_f32 at clevel 1 and 9.
#[inline(never)]
fn encode<
    const HASHLOG: u32,
    const SECOND_HASH: bool,
    const BYTE_SCAN: bool,
    const BASE_0: bool,
    const BYTES_FIRST: bool,
>(
    d: &[u8],
    out: &mut [u8],
    htab: &mut Slots,
    base: u32,
) -> Option<usize> {
    let base = if BASE_0 { 0 } else { base };
    let length = d.len();
    let ip_bound = length - 1;
    let op_limit = out.len();

    out[0] = (MAX_COPY - 1) as u8;
    out[1..5].copy_from_slice(&d[..4]);
    let mut op = 5usize;
    let mut ip = 4usize;
    let mut copy = 4usize;

    // `ip < ip_limit`, written as a window whose length the compiler then knows.
    while let Some(window) = d.get(ip..ip + 13) {
        let anchor = ip;
        let seq = read_u32(window, 0);
        let h = hash::<HASHLOG>(seq);
        let r = htab[h].wrapping_sub(base) as usize;
        htab[h] = base.wrapping_add(anchor as u32);
        let distance = anchor.wrapping_sub(r);
        if candidate_matches::<BYTES_FIRST>(d, r, distance, seq) {
            let dist = distance - 1;
            let mend = match_end::<BYTE_SCAN>(d, anchor + 4, distance, ip_bound) - IPSHIFT;
            // At least 1: `match_end` returns more than `anchor + 4`.
            let len = mend - anchor;
            if len >= MINLEN && (len > 5 || dist < MAX_DISTANCE) {
                // Close the literal run (its count byte) or drop its unused placeholder.
                if copy > 0 {
                    out[op - copy - 1] = (copy - 1) as u8;
                } else {
                    op -= 1;
                }
                copy = 0;
                op = encode_match(out, op, len, dist)?;
                let seq = read_u32(d, mend);
                htab[hash::<HASHLOG>(seq)] = base.wrapping_add(mend as u32);
                if SECOND_HASH {
                    htab[hash::<HASHLOG>(seq >> 8)] = base.wrapping_add(mend as u32 + 1);
                }
                ip = mend + 2;
                // The next literal run's count byte, filled in when the run ends.
                *out.get_mut(op)? = (MAX_COPY - 1) as u8;
                op += 1;
                continue;
            }
        }
        // A literal byte.
        if unlikely(op + 2 > op_limit) {
            return None;
        }
        out[op] = seq as u8;
        op += 1;
        ip = anchor + 1;
        copy += 1;
        if unlikely(copy == MAX_COPY) {
            copy = 0;
            out[op] = (MAX_COPY - 1) as u8;
            op += 1;
        }
    }
    // Trailing literals.
    while ip <= ip_bound {
        if op + 2 > op_limit {
            return None;
        }
        out[op] = d[ip];
        op += 1;
        ip += 1;
        copy += 1;
        if copy == MAX_COPY {
            copy = 0;
            out[op] = (MAX_COPY - 1) as u8;
            op += 1;
        }
    }
    if copy > 0 {
        out[op - copy - 1] = (copy - 1) as u8;
    } else {
        op -= 1;
    }
    out[0] |= 1 << 5;
    Some(op)
}

/// [`compress`] with a table cleared for every probe and every stream, as c-blosc2's is, for
/// the fuzz target that checks the thread's shared table compresses alike.
#[cfg(fuzzing)]
pub fn compress_cleared(clevel: u8, src: &[u8], dst: &mut [u8]) -> usize {
    compress_in(clevel, src, dst, &mut HashTable::cleared_for_every_use())
}

/// The stream `src` encodes to in `room` bytes with match ends found by byte scan and by
/// computing them, in that order (`None`: does not fit or is too short to encode), for the
/// fuzz target that checks the two agree.
#[cfg(fuzzing)]
pub fn encode_both_ways(src: &[u8], room: usize, second_hash: bool) -> [Option<Vec<u8>>; 2] {
    if src.len() < 16 || room < 66 {
        return [None, None];
    }
    let mut htab = HashTable::new();
    let mut run = |byte_scan: bool| {
        let mut out = vec![0u8; room];
        let n = encode_as::<HASH_LOG>(src, &mut out, &mut htab, second_hash, byte_scan)?;
        out.truncate(n);
        Some(out)
    };
    [run(true), run(false)]
}

/// Writes a match token; `None` when it does not fit (with c-blosc2's exact room checks,
/// so the encoder gives up in the same places).
#[inline(always)]
fn encode_match(out: &mut [u8], op: usize, len: usize, dist: usize) -> Option<usize> {
    // The common tokens first. c-blosc2 checks room byte group by byte group; one check for
    // the whole token gives the same answer, as the last of its checks is the largest.
    if dist < MAX_DISTANCE {
        if len < 7 {
            let token = out.get_mut(op..op + 2)?;
            token[0] = ((len << 5) + (dist >> 8)) as u8;
            token[1] = dist as u8;
            return Some(op + 2);
        }
        if len - 7 < 255 {
            let token = out.get_mut(op..op + 3)?;
            token[0] = ((7 << 5) + (dist >> 8)) as u8;
            token[1] = (len - 7) as u8;
            token[2] = dist as u8;
            return Some(op + 3);
        }
    }
    encode_any_match(out, op, len, dist)
}

/// Writes any match token, far or with extension bytes.
fn encode_any_match(out: &mut [u8], mut op: usize, len: usize, dist: usize) -> Option<usize> {
    let op_limit = out.len();
    let near = dist < MAX_DISTANCE;
    let code = if near { dist >> 8 } else { 31 };
    let tail_len = if near { 1 } else { 3 };
    if len < 7 {
        if op + 1 + tail_len > op_limit {
            return None;
        }
        out[op] = ((len << 5) + code) as u8;
        op += 1;
    } else {
        if op + 1 > op_limit {
            return None;
        }
        out[op] = ((7 << 5) + code) as u8;
        op += 1;
        let mut rest = len - 7;
        while rest >= 255 {
            if op + 1 > op_limit {
                return None;
            }
            out[op] = 255;
            op += 1;
            rest -= 255;
        }
        if op + 1 + tail_len > op_limit {
            return None;
        }
        out[op] = rest as u8;
        op += 1;
    }
    // The distance: its low byte, or a far marker and 16 bits.
    if near {
        out[op] = dist as u8;
        Some(op + 1)
    } else {
        let far = dist - MAX_DISTANCE;
        out[op] = 255;
        out[op + 1] = (far >> 8) as u8;
        out[op + 2] = far as u8;
        Some(op + 3)
    }
}

fn truncated() -> Error {
    Error::corrupt("blosclz stream is truncated")
}

/// Decompresses one BloscLZ stream into `dst`. Returns the number of bytes written (the
/// caller checks it is the block's length). Malformed input is an error, never a panic.
pub fn decompress(src: &[u8], dst: &mut [u8]) -> Result<usize> {
    let n = dst.len();
    decompress_with_room(src, dst, n)
}

/// [`decompress`] of a stream of `n` bytes, where the rest of `dst` is room the decoder may
/// write over (the bytes written there are not part of the stream's output): literal runs,
/// and matches of up to 32 bytes, are then copied in fixed-size pieces up to the stream's
/// end, where a `memcpy` call of their exact length did it (shuffled rainfall_f32 at 1 KiB:
/// 3,267 -> 3,161 instructions a chunk). Longer matches keep to `n`: past it, the ones that
/// end a stream are left to `memmove` as before (a 64 KiB chunk of shuffled incr_i32, whose
/// first plane ends with a 13 KiB match 2,560 bytes back, decoded at 0.86 of its speed
/// through the 16-byte loop instead).
pub fn decompress_with_room(src: &[u8], dst: &mut [u8], n: usize) -> Result<usize> {
    let end = n.min(dst.len());
    if src.is_empty() {
        return Ok(0);
    }
    let (mut ip, mut op) = (1usize, 0usize);
    let mut ctrl = usize::from(src[0] & 31);
    loop {
        if ctrl >= 32 {
            let mut len = (ctrl >> 5) - 1;
            let ofs = (ctrl & 31) << 8;
            if len == 6 {
                loop {
                    if ip + 1 >= src.len() {
                        return Err(truncated());
                    }
                    let code = src[ip];
                    ip += 1;
                    len += usize::from(code);
                    if code != 255 {
                        break;
                    }
                }
            } else if ip + 1 >= src.len() {
                return Err(truncated());
            }
            let code = usize::from(src[ip]);
            ip += 1;
            len += 3;
            let mut back = ofs + code;
            if code == 255 && ofs == 31 << 8 {
                if ip + 1 >= src.len() {
                    return Err(truncated());
                }
                back = (usize::from(src[ip]) << 8) + usize::from(src[ip + 1]) + MAX_DISTANCE;
                ip += 2;
            }
            // The match copies from `back + 1` bytes behind the output position.
            let dist = back + 1;
            if op + len > dst.len() {
                return Err(Error::corrupt(
                    "blosclz match runs past the end of the block",
                ));
            }
            if dist > op {
                return Err(Error::corrupt(format_args!(
                    "blosclz match reaches {dist} bytes back, only {op} decoded"
                )));
            }
            if ip >= src.len() {
                break; // c-blosc2 stops before copying a match that ends the stream
            }
            ctrl = usize::from(src[ip]);
            ip += 1;
            copy_match(dst, end, op, dist, len);
            op += len;
        } else {
            let n = ctrl + 1;
            if op + n > dst.len() {
                return Err(Error::corrupt(
                    "blosclz literal run past the end of the block",
                ));
            }
            if ip + n > src.len() {
                return Err(truncated());
            }
            // A fixed-size copy is cheaper than a variable one; the extra bytes are
            // overwritten by what follows. Most runs are short: up to 16 bytes take one
            // 16-byte store, not the two of a 32-byte copy (4 KiB of shuffled incr_i32, runs
            // of 2 bytes between matches: 0.92 -> 1.10 of c-blosc2's speed on Zen 3).
            if n <= 16 && op + 16 <= dst.len() && ip + 16 <= src.len() {
                dst[op..op + 16].copy_from_slice(&src[ip..ip + 16]);
            } else if n <= 32 && op + 32 <= dst.len() && ip + 32 <= src.len() {
                dst[op..op + 32].copy_from_slice(&src[ip..ip + 32]);
            } else {
                dst[op..op + n].copy_from_slice(&src[ip..ip + n]);
            }
            op += n;
            ip += n;
            if ip >= src.len() {
                break;
            }
            ctrl = usize::from(src[ip]);
            ip += 1;
        }
    }
    Ok(op)
}

/// Copies `len` bytes from `dist` bytes behind `op` (LZ semantics: an overlapping source repeats).
/// Matches of more than 32 bytes write at most up to `end`.
#[inline(always)]
fn copy_match(dst: &mut [u8], end: usize, op: usize, dist: usize, len: usize) {
    let start = op - dist;
    let limit = if len <= 32 { dst.len() } else { end };
    if dist == 1 {
        let b = dst[start];
        if len <= 32 && op + 32 <= dst.len() {
            // One 32-byte store instead of a `memset` call; later tokens overwrite the rest.
            dst[op..op + 32].copy_from_slice(&[b; 32]);
        } else {
            dst[op..op + len].fill(b);
        }
    } else if dist >= 16 && op + len + 16 <= limit {
        // 16 bytes at a time; the last step may write up to 15 bytes past the match, which
        // later tokens overwrite.
        if len <= 16 {
            // Most matches: one chunk.
            let chunk: [u8; 16] = dst[start..start + 16].try_into().expect("16 bytes");
            dst[op..op + 16].copy_from_slice(&chunk);
            return;
        }
        let rounded = len.next_multiple_of(16);
        if rounded <= dist {
            // The source ends before the output starts: whole chunks, no bound checks inside.
            let (before, after) = dst.split_at_mut(op);
            let from = before[start..start + rounded].chunks_exact(16);
            for (to, from) in after[..rounded].chunks_exact_mut(16).zip(from) {
                to.copy_from_slice(from);
            }
            return;
        }
        // Each step reads bytes written at least 16 bytes earlier.
        let mut i = 0;
        while i < len {
            let mut w = [0u8; 16];
            w.copy_from_slice(&dst[start + i..start + i + 16]);
            dst[op + i..op + i + 16].copy_from_slice(&w);
            i += 16;
        }
    } else if dist >= 8 && op + len + 8 <= limit {
        let mut i = 0;
        while i < len {
            let mut w = [0u8; 8];
            w.copy_from_slice(&dst[start + i..start + i + 8]);
            dst[op + i..op + i + 8].copy_from_slice(&w);
            i += 8;
        }
    } else if dist < 8 && op + len + 16 <= limit {
        // A short period, read byte by byte: each byte then comes whole from one earlier
        // store, which the CPU forwards. One wider load spans two recent stores (the match
        // before and the literal copy just done) and waits until both reach the cache: with
        // an 8-byte read here, unfiltered incr_i32 decoded at 0.78 of c-blosc2's speed, now
        // at 1.03 (fast machine state); a 4-byte read for period 4 gave 0.87 on Zen 3.
        let period = dst[start..op]
            .iter()
            .rev()
            .fold(0u64, |acc, &b| (acc << 8) | u64::from(b));
        if dist == 2 || dist == 4 {
            // It divides 16: 16 bytes of it per store, in whole pieces (no bound check per
            // store) built without a 128-bit multiply: 0.96 -> 1.03-1.11 of c-blosc2 (Zen 3).
            let half = period
                * if dist == 2 {
                    0x0001_0001_0001_0001
                } else {
                    0x0000_0001_0000_0001
                };
            let mut pat = [0u8; 16];
            pat[..8].copy_from_slice(&half.to_le_bytes());
            pat[8..].copy_from_slice(&half.to_le_bytes());
            for piece in dst[op..op + len.next_multiple_of(16)].chunks_exact_mut(16) {
                piece.copy_from_slice(&pat);
            }
        } else {
            // 8 bytes of it (bytes past the period shifted in) every `step` bytes, the
            // largest multiple of the period up to 8.
            const STEP: [usize; 8] = [0, 8, 8, 6, 8, 5, 6, 7];
            let mut p = period;
            let mut valid = 8 * dist;
            while valid < 64 {
                p |= p << valid;
                valid *= 2;
            }
            let pat = p.to_le_bytes();
            let step = STEP[dist];
            let out = &mut dst[op..op + len + 8];
            let mut i = 0;
            while i < len {
                out[i..i + 8].copy_from_slice(&pat);
                i += step;
            }
        }
    } else if dist >= len {
        dst.copy_within(start..start + len, op);
    } else {
        // Each pass copies what is already there, doubling the repeated pattern.
        let mut done = 0;
        while done < len {
            let n = (op + done - start).min(len - done);
            dst.copy_within(start..start + n, op + done);
            done += n;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds() -> Vec<(&'static str, Vec<u8>)> {
        let mut x = 0x1234_5678_u32;
        let mut rnd = || {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x
        };
        let n = 70_000;
        vec![
            ("zeros", vec![0; n]),
            ("runs", (0..n).map(|i| (i / 1000) as u8).collect()),
            ("random", (0..n).map(|_| rnd() as u8).collect()),
            (
                "text",
                b"the quick brown fox jumps over the lazy dog; "
                    .iter()
                    .cycle()
                    .take(n)
                    .copied()
                    .collect(),
            ),
            (
                "ints",
                (0..n as u32 / 4)
                    .flat_map(|i| (i / 3).to_le_bytes())
                    .collect(),
            ),
            ("lowentropy", (0..n).map(|_| (rnd() % 4) as u8).collect()),
            // Runs of random bytes between runs of zeros: long streams of it are encoded
            // with the table cleared by `encoder_clears`.
            (
                "sparse",
                (0..n)
                    .map(|i| if i / 5000 % 3 == 0 { rnd() as u8 } else { 0 })
                    .collect(),
            ),
        ]
    }

    /// A table shared stream after stream, probes and encoders leaving their positions in
    /// it, compresses as one cleared for every probe and every stream (as c-blosc2's is):
    /// at every clevel (three table sizes, the second hash at 9), encoded or not, short
    /// streams and long ones, cleared or not (by the density rule, by an encoder of a long
    /// stream), and across the base's wrap past `u32::MAX`.
    #[test]
    fn a_shared_table_compresses_as_a_cleared_one() {
        let mut shared = HashTable::new();
        let mut cleared = HashTable::cleared_for_every_use();
        let (mut wraps, mut kept, mut encoders_cleared) = (0, 0, 0);
        for (name, data) in kinds() {
            for len in [16, 100, 256, 257, 500, 1024, 1025, 2048, 5000, 70_000] {
                for clevel in 1..=9 {
                    for room in [len + 64, 80] {
                        let before = shared.next_base;
                        encoders_cleared += u32::from(encoder_clears(len, shared.encoder_density));
                        let mut got = vec![0u8; room];
                        let n = compress_in(clevel, &data[..len], &mut got, &mut shared);
                        // Cleared at least once (a probe or an encoder of a long stream, or
                        // the base's wrap), or not at all.
                        wraps += u32::from(shared.next_base < before);
                        let gap = 2 * MAX_FARDISTANCE as u32;
                        kept += u32::from(shared.next_base > before.saturating_add(gap));
                        let mut expected = vec![0u8; room];
                        let m = compress_in(clevel, &data[..len], &mut expected, &mut cleared);
                        let what = format!("{name} len {len} clevel {clevel} room {room}");
                        assert_eq!(got[..n], expected[..m], "{what}");
                    }
                }
                // Near the end of the base's range, so that it wraps now and then.
                shared.next_base = shared.next_base.max(u32::MAX - 20_000);
            }
        }
        assert!(
            wraps >= 20 && kept >= 20,
            "cleared {wraps} times, not {kept} times"
        );
        assert!(
            encoders_cleared >= 10,
            "encoders cleared the table {encoders_cleared} times"
        );
    }

    /// The encoder and the probe testing a candidate's bytes first give the stream, the
    /// answer and the table of those testing its reach first: from a cleared table and (both)
    /// from one earlier streams left positions in, on long streams of two kinds joined.
    #[test]
    fn testing_the_bytes_first_encodes_as_testing_the_reach_first() {
        fn both<const BASE_0: bool>(d: &[u8], slots: &Slots, base: u32) {
            let run = |bytes_first: bool| {
                let mut slots = Box::new(*slots);
                // Room for literals throughout: a count byte per 32.
                let mut out = vec![0u8; d.len() + d.len() / 32 + 64];
                let n = if bytes_first {
                    encode::<HASH_LOG, false, false, BASE_0, true>(d, &mut out, &mut slots, base)
                } else {
                    encode::<HASH_LOG, false, false, BASE_0, false>(d, &mut out, &mut slots, base)
                };
                out.truncate(n.unwrap_or(0));
                (out, slots)
            };
            let ((a, slots_a), (b, slots_b)) = (run(true), run(false));
            assert!(
                !a.is_empty() && a == b,
                "base {base}: {} and {} bytes",
                a.len(),
                b.len()
            );
            assert!(slots_a[..] == slots_b[..], "base {base}");
            if BASE_0 {
                return;
            }
            // The probe, over the last 16 KiB, as at clevel 5.
            let tail = &d[d.len() - (1 << HASH_LOG)..];
            assert!(probe_tests_bytes_first(tail.len()));
            let probe = |bytes_first: bool| {
                let mut slots = Box::new(*slots);
                let p = if bytes_first {
                    probe_slots::<HASH_LOG, false, true>(tail, &mut slots, base, 1.2)
                } else {
                    probe_slots::<HASH_LOG, false, false>(tail, &mut slots, base, 1.2)
                };
                ([p.passes, p.regular], [p.read, p.counted], slots)
            };
            let ((a, x, slots_a), (b, y, slots_b)) = (probe(true), probe(false));
            assert!(
                a == b && x == y && slots_a[..] == slots_b[..],
                "{a:?} {x:?}, {b:?} {y:?}"
            );
        }
        let kinds = kinds();
        // Positions earlier uses left: all `MAX_FARDISTANCE` or more below the base.
        let base = 1_000_000;
        let mut rnd = crate::codecs::xorshift(0x2545_f491);
        let mut stale: Box<Slots> = Box::new([0; 1 << HASH_LOG]);
        for slot in stale.iter_mut() {
            *slot = (rnd() % u64::from(base - MAX_FARDISTANCE as u32)) as u32;
        }
        for (first, a) in &kinds {
            for (second, b) in &kinds {
                let d = [&a[..], &b[..]].concat();
                assert!(encoder_tests_bytes_first(d.len()), "{first} {second}");
                both::<true>(&d, &Box::new([0; 1 << HASH_LOG]), 0);
                both::<false>(&d, &stale, base);
            }
        }
    }

    #[test]
    fn round_trips_every_clevel_and_length() {
        for (name, data) in kinds() {
            for clevel in 1..=9 {
                for len in (0..300).chain([1000, 4096, 32768, 65536, 70_000]) {
                    let src = &data[..len.min(data.len())];
                    let mut out = vec![0u8; src.len() + 64];
                    let n = compress(clevel, src, &mut out);
                    if n == 0 {
                        continue;
                    }
                    assert!(n <= out.len(), "{name} clevel {clevel} len {len}");
                    let mut back = vec![0u8; src.len()];
                    let m = decompress(&out[..n], &mut back).unwrap();
                    assert_eq!(m, src.len(), "{name} clevel {clevel} len {len}");
                    assert!(back == src, "{name} clevel {clevel} len {len}");
                    // With room after the stream: the same bytes.
                    let mut roomy = vec![0xeeu8; src.len() + 64];
                    let m = decompress_with_room(&out[..n], &mut roomy, src.len()).unwrap();
                    assert_eq!(m, src.len(), "{name} clevel {clevel} len {len} with room");
                    assert!(
                        roomy[..m] == *src,
                        "{name} clevel {clevel} len {len} with room"
                    );
                }
            }
        }
    }

    #[test]
    fn both_ways_of_finding_match_ends_encode_alike() {
        // Every length from 16 up, and destinations from ample down to the smallest the
        // encoder takes, so the points where it gives up are compared too.
        let mut regular = 0;
        for (name, data) in kinds() {
            for len in (16..200).chain([1000, 4096, 32768, 70_000]) {
                let src = &data[..len];
                let mut htab = HashTable::new();
                regular += u32::from(probe::<14>(src, &mut htab, 1.0).regular);
                for (room, second_hash) in [src.len() + 64, src.len() / 3 + 66, 66]
                    .into_iter()
                    .flat_map(|room| [(room, false), (room, true)])
                {
                    let mut scanned = vec![0u8; room];
                    let mut computed = vec![0u8; room];
                    let a = encode_as::<14>(src, &mut scanned, &mut htab, second_hash, true);
                    let b = encode_as::<14>(src, &mut computed, &mut htab, second_hash, false);
                    let what = format!("{name} len {len} room {room} second hash {second_hash}");
                    assert_eq!(a, b, "{what}");
                    let n = a.unwrap_or(0);
                    assert!(scanned[..n] == computed[..n], "{what}");
                }
            }
        }
        // The probe calls some of these regular, and not all.
        assert!(regular > 0 && regular < 6 * 188, "{regular} regular");
    }

    /// Match distances in a stream, walking its tokens.
    fn match_distances(s: &[u8]) -> Vec<usize> {
        let (mut ip, mut ctrl, mut dists) = (1, usize::from(s[0] & 31), vec![]);
        while ip < s.len() {
            if ctrl >= 32 {
                if ctrl >> 5 == 7 {
                    // The length goes on in bytes of 255 and a last smaller one.
                    while s[ip] == 255 {
                        ip += 1;
                    }
                    ip += 1;
                }
                let code = usize::from(s[ip]);
                ip += 1;
                if code == 255 && ctrl & 31 == 31 {
                    dists.push(
                        (usize::from(s[ip]) << 8) + usize::from(s[ip + 1]) + MAX_DISTANCE + 1,
                    );
                    ip += 2;
                } else {
                    dists.push(((ctrl & 31) << 8) + code + 1);
                }
            } else {
                ip += ctrl + 1;
            }
            if ip >= s.len() {
                break;
            }
            ctrl = usize::from(s[ip]);
            ip += 1;
        }
        dists
    }

    #[test]
    fn short_periods_after_literals_round_trip() {
        // Runs of every period from 1 to 17 bytes, each behind a literal run of 1 to 6 bytes,
        // so the decoder's short-period paths meet every split of the period between the
        // previous match and the literals.
        let mut x = 0x9e37_79b9_u32;
        let mut rnd = || {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        };
        let mut data = vec![];
        for round in 0..40 {
            for period in 1..=17 {
                for _ in 0..1 + round % 6 {
                    data.push(rnd());
                }
                let pattern: Vec<u8> = (0..period).map(|_| rnd()).collect();
                let len = 9 + (round * 7 + period) % 60;
                data.extend(pattern.iter().cycle().take(len));
            }
        }
        let mut out = vec![0u8; data.len() + 64];
        let n = compress(5, &data, &mut out);
        assert!(n > 0, "the data compresses");
        let dists = match_distances(&out[..n]);
        for period in 1..=8 {
            assert!(dists.contains(&period), "no match of distance {period}");
        }
        let mut back = vec![0u8; data.len()];
        assert_eq!(decompress(&out[..n], &mut back).unwrap(), data.len());
        assert!(back == data);
    }

    #[test]
    fn match_copies_equal_a_byte_by_byte_copy() {
        // Every copy path: each distance up to 80 (runs, short periods, chunks that overlap
        // the output, chunks that do not), lengths around the chunk sizes and long ones, and
        // destinations that end right after the match or leave room for whole chunks, with
        // the stream ending at the match or where the destination does.
        let prefix: Vec<u8> = (0..100u32).map(|i| (i * 37 + 11) as u8).collect();
        for dist in 1..=80 {
            for len in (3..=70).chain([255, 256, 300, 1000]) {
                for slack in [0, 7, 15, 16, 40] {
                    let op = prefix.len();
                    let mut dst = prefix.clone();
                    dst.resize(op + len + slack, 0xee);
                    let mut want = dst.clone();
                    for i in op..op + len {
                        want[i] = want[i - dist];
                    }
                    for end in [op + len, dst.len()] {
                        let mut dst = dst.clone();
                        copy_match(&mut dst, end, op, dist, len);
                        assert!(
                            dst[..op + len] == want[..op + len],
                            "dist {dist} len {len} slack {slack} end {end}"
                        );
                    }
                }
            }
        }
    }

    /// c-blosc2's `get_cratio` as written: the whole dry run, then the ratio.
    fn full_probe_cratio(d: &[u8], hashlog: u32) -> f64 {
        let limit = d.len().min(1 << hashlog);
        if limit < 12 {
            return 0.0;
        }
        let mut htab = vec![0usize; 1 << hashlog];
        let (mut ip, mut oc, mut copy) = (0usize, 5i64, 4usize);
        while ip < limit - 12 {
            let anchor = ip;
            let h = (read_u32(d, ip).wrapping_mul(2_654_435_761) >> (32 - hashlog)) as usize;
            let r = htab[h];
            htab[h] = anchor;
            let distance = anchor - r;
            if distance != 0 && distance < MAX_FARDISTANCE && read_u32(d, r) == read_u32(d, ip) {
                let mut end = anchor + 4;
                while end < limit - 1 && d[end] == d[end - distance] {
                    end += 1;
                }
                if end < limit - 1 {
                    end += 1; // one past the first mismatch, as get_match returns
                }
                let len = end as isize - IPSHIFT as isize - anchor as isize;
                if len >= MINLEN as isize {
                    if copy == 0 {
                        oc -= 1;
                    }
                    copy = 0;
                    if len >= 7 {
                        oc += (len as i64 - 7) / 255 + 1;
                    }
                    oc += if distance - 1 < MAX_DISTANCE { 2 } else { 4 };
                    let mend = end - IPSHIFT;
                    let h = read_u32(d, mend).wrapping_mul(2_654_435_761) >> (32 - hashlog);
                    htab[h as usize] = mend;
                    ip = mend + 2;
                    oc += 1;
                    continue;
                }
            }
            oc += 1;
            ip = anchor + 1;
            copy += 1;
            if copy == MAX_COPY {
                copy = 0;
                oc += 1;
            }
        }
        ip as f64 / oc as f64
    }

    #[test]
    fn probe_stopping_early_gives_the_full_probes_answer() {
        let mut x = 0x9e37_79b9_u32;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x
        };
        let thresholds = [1.0, 1.1, 1.15, 1.2, 1.5, 2.0];
        let (mut yes, mut no) = (0, 0);
        // Random bytes with repeats of earlier data mixed in at rising rates, so the full
        // ratio sweeps from below 1.0 to well above 2.0 and lands near every threshold.
        for case in 0..600u32 {
            let len = [40, 500, 5_000, 16_384, 20_000][case as usize % 5];
            let repeat_per_mille = case * 1000 / 600;
            let mut d = Vec::with_capacity(len);
            while d.len() < len {
                if d.len() > 64 && rnd() % 1000 < repeat_per_mille {
                    let back = 1 + rnd() as usize % d.len().min(9000);
                    for _ in 0..(4 + rnd() % 24) {
                        d.push(d[d.len() - back]);
                    }
                } else {
                    d.push(rnd() as u8);
                }
            }
            d.truncate(len);
            let mut htab = HashTable::new();
            for min in thresholds {
                for hashlog in [12, 14] {
                    let expected = full_probe_cratio(&d, hashlog) >= min;
                    let got = if hashlog == 12 {
                        probe::<12>(&d, &mut htab, min).passes
                    } else {
                        probe::<14>(&d, &mut htab, min).passes
                    };
                    assert_eq!(got, expected, "case {case}, min {min}, hashlog {hashlog}");
                    if expected {
                        yes += 1
                    } else {
                        no += 1
                    }
                }
            }
        }
        // A compressible head, then random bytes: the tail costs the most a byte can cost,
        // the case where stopping early for "yes" is closest to wrong.
        for step in 0..400 {
            for len in [9_000, 16_384] {
                let head = len * step / 400;
                let d: Vec<u8> = (0..len)
                    .map(|i| {
                        if i < head {
                            (i / 64) as u8
                        } else {
                            rnd() as u8
                        }
                    })
                    .collect();
                let mut htab = HashTable::new();
                for min in thresholds {
                    let expected = full_probe_cratio(&d, 14) >= min;
                    let got = probe::<14>(&d, &mut htab, min).passes;
                    assert_eq!(got, expected, "head {head} of {len}, min {min}");
                    if expected {
                        yes += 1
                    } else {
                        no += 1
                    }
                }
            }
        }
        // Both answers must be common, or the sweep tests nothing.
        assert!(yes > 1000 && no > 1000, "{yes} passed, {no} failed");
    }

    #[test]
    fn first_hopeless_count_is_the_boundary() {
        for limit in [12, 13, 100, 4_095, 16_384] {
            for min in [1.0, 1.1, 1.15, 1.2, 1.5, 2.0] {
                let oc = first_hopeless_count(limit, min);
                assert!((limit as f64) / (oc as f64) < min, "{limit} {min} {oc}");
                assert!(
                    (limit as f64) / ((oc - 1) as f64) >= min,
                    "{limit} {min} {oc}"
                );
            }
        }
    }

    #[test]
    fn small_destinations_give_zero_not_a_panic() {
        let data: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
        for cap in [0, 1, 65, 66, 100, 500, 2000] {
            let mut out = vec![0u8; cap];
            let n = compress(5, &data, &mut out);
            assert!(n <= cap);
        }
    }

    #[test]
    fn malformed_streams_are_errors() {
        let mut seed = 7u32;
        for _ in 0..20_000 {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
            let len = (seed >> 16) as usize % 64;
            let src: Vec<u8> = (0..len)
                .map(|i| (seed.rotate_left(i as u32) ^ i as u32) as u8)
                .collect();
            for cap in [0, 7, 100, 5000] {
                let mut dst = vec![0u8; cap];
                let _ = decompress(&src, &mut dst);
            }
        }
        // A match before any output.
        assert!(decompress(&[0x00, b'a', 0x40, 0x05], &mut [0u8; 100]).is_err());
    }
}
