"""Summary of bench/compare.sh's rows: `compare_summary.py RESULTS SHA_A SHA_B`.

Each line of RESULTS is `SHA SEED | data | codec | filter | threads | ...` (a bench_chunk row).
Per revision and row: the median over rounds for each layout (seed), then the geometric mean
over layouts. Prints, for compression and decompression speed (b2frame/c-blosc2), each
revision's geometric mean over rows and rows below 1.0, then the rows that moved by 0.03 or
more between the two.
"""

import collections
import math
import statistics
import sys

COLUMNS = {"compression": 9, "decompression": 12}  # 0-based, after the leading '|'


def geomean(xs):
    return math.exp(sum(map(math.log, xs)) / len(xs))


def main(path, rev_a, rev_b):
    # samples[column][row][rev][seed] -> ratios over rounds
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
                samples[name][row][rev][seed].append(float(cells[col]))
    for name in COLUMNS:
        per_row = {
            row: {
                rev: geomean([statistics.median(v) for v in by_seed.values()])
                for rev, by_seed in by_rev.items()
            }
            for row, by_rev in samples[name].items()
        }
        print(f"{name} speed, b2frame/c-blosc2 ({len(per_row)} rows):")
        for rev in (rev_a, rev_b):
            xs = [r[rev] for r in per_row.values() if rev in r]
            print(
                f"  {rev}: geometric mean {geomean(xs):.3f}, "
                f"{sum(x < 1 for x in xs)} rows below 1.0, worst {min(xs):.2f}"
            )
        moved = [
            (r[rev_b] - r[rev_a], row, r)
            for row, r in per_row.items()
            if rev_a in r and rev_b in r and abs(r[rev_b] - r[rev_a]) >= 0.03
        ]
        for delta, row, r in sorted(moved):
            print(f"    {row:<40} {r[rev_a]:.2f} -> {r[rev_b]:.2f} ({delta:+.2f})")


if __name__ == "__main__":
    main(*sys.argv[1:4])
