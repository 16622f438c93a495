"""Writes examples/temperature.b2nd, the small array the README's first command inspects.

A synthetic hourly surface-temperature field (24 hours x 37 latitudes x 72 longitudes (a 5-degree grid),
float32, degrees Celsius, rounded to 0.1), written by python-blosc2 (c-blosc2) with its default
codec (zstd, clevel 5, shuffle) and a few vlmetalayers. Run with python-blosc2 installed:
    .venv/bin/python examples/make_example.py
"""

import pathlib

import blosc2
import numpy as np

out = pathlib.Path(__file__).with_name("temperature.b2nd")
hours = np.arange(24)[:, None, None]
lat = np.linspace(-90, 90, 37)[None, :, None]
lon = np.linspace(0, 355, 72)[None, None, :]
rng = np.random.default_rng(2026)
field = (
    28 * np.cos(np.radians(lat)) - 12
    + 6 * np.cos(np.radians(lon - 15 * hours)) * np.cos(np.radians(lat))
    + rng.normal(0, 0.2, size=(24, 37, 72))
)
field = np.round(field, 1).astype("<f4")
arr = blosc2.asarray(field, urlpath=str(out), mode="w", chunks=(6, 37, 72), blocks=(2, 19, 36))
arr.schunk.vlmeta["units"] = "degC"
arr.schunk.vlmeta["dims"] = ["hour", "lat", "lon"]
arr.schunk.vlmeta["source"] = "synthetic field from examples/make_example.py"
print(out, arr.shape, arr.dtype, out.stat().st_size, "bytes")
