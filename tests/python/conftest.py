"""Shared setup: the b2frame ctypes binding (bindings/python) against the built library."""

import os
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bindings" / "python"))

if "B2F_LIB" not in os.environ:
    for profile in ("release", "debug"):
        candidate = ROOT / "target" / profile / "libb2frame.so"
        if candidate.exists():
            os.environ["B2F_LIB"] = str(candidate)
            break

VECTORS = pathlib.Path(os.environ.get("B2F_VECTORS", ROOT.parent / "shared" / "vectors"))
