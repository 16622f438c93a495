"""Summary of bench/compare.sh's rows: `compare_summary.py RESULTS SHA_A SHA_B`.

Each line of RESULTS is `SHA SEED | data | codec | filter | threads | ...` (a bench_chunk row).
Per revision and row: the median over rounds for each layout (seed), then the geometric mean
over layouts. Prints, for compression and decompression speed (b2frame/c-blosc2), each
revision's geometric mean over rows and its rows below 1.0, then the rows that moved by 0.03
or more between the two.

Samples taken in one of the machine's slow phases are left out: those where c-blosc2 ran a
row at under SLOW of its median speed for that row over all samples. For seconds at a time
both libraries run at about half speed, and rows bound by a fixed cost per call lose more of
their ratio then (zeros compressed at 1 KiB: 1.20-1.24 -> 1.03-1.08); with three rounds, one
build hit such phases in a whole layout's rounds of a row. A (revision, layout) whose every
sample of a row is slow keeps them all.
"""

import collections
import math
import statistics
import sys

COLUMNS = {"compression": 9, "decompression": 12}  # 0-based, after the leading '|'
# c-blosc2's speed in the same row: the ratio's denominator.
REFERENCE = {"compression": 8, "decompression": 11}
SLOW = 0.8


def geomean(xs):
    return math.exp(sum(map(math.log, xs)) / len(xs))


def main(path, rev_a, rev_b):
    # samples[column][row][rev][seed] -> (ratio, c-blosc2's speed) over rounds
    samples = {
        c: collections.defaultdict(
            lambda: collections.defaultdict(lambda: collections.defaultdict(list))
        )
        for c in COLUMNS
    }
    with open(path) as f:
        for line in f:
            rev, seed, rest = line.split(" ", 2)
            cells = [c.strip() for c in rest.split("|")[1:-1]]
            row = " ".join(cells[:4])
            for name, col in COLUMNS.items():
                sample = (float(cells[col]), float(cells[REFERENCE[name]]))
                samples[name][row][rev][seed].append(sample)
    for name in COLUMNS:
        dropped = 0
        total = 0

        def ratio(samples_of_seed, reference):
            nonlocal dropped, total
            kept = [r for r, c in samples_of_seed if c >= SLOW * reference]
            total += len(samples_of_seed)
            dropped += len(samples_of_seed) - len(kept)
            return statistics.median(kept or [r for r, _ in samples_of_seed])

        per_row = {}
        for row, by_rev in samples[name].items():
            reference = statistics.median(
                c for by_seed in by_rev.values() for v in by_seed.values() for _, c in v
            )
            per_row[row] = {
                rev: geomean([ratio(v, reference) for v in by_seed.values()])
                for rev, by_seed in by_rev.items()
            }
        print(
            f"{name} speed, b2frame/c-blosc2 ({len(per_row)} rows; "
            f"{dropped} of {total} samples from slow phases left out):"
        )
        for rev in (rev_a, rev_b):
            xs = [r[rev] for r in per_row.values() if rev in r]
            print(
                f"  {rev}: geometric mean {geomean(xs):.3f}, "
                f"{sum(x < 1 for x in xs)} rows below 1.0, worst {min(xs):.2f}"
            )
            below = sorted((r[rev], row) for row, r in per_row.items() if r.get(rev, 1) < 1)
            for x, row in below:
                print(f"    below 1.0: {row:<40} {x:.2f}")
        moved = [
            (r[rev_b] - r[rev_a], row, r)
            for row, r in per_row.items()
            if rev_a in r and rev_b in r and abs(r[rev_b] - r[rev_a]) >= 0.03
        ]
        for delta, row, r in sorted(moved):
            print(f"    {row:<40} {r[rev_a]:.2f} -> {r[rev_b]:.2f} ({delta:+.2f})")


if __name__ == "__main__":
    main(*sys.argv[1:4])
