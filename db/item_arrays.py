"""Storage formats of a scoring's per-item values and of a submission's predictions (docs/architecture.md,
storage). Each stored value starts with a format byte, so a later format can be read beside the older ones.

Per-item values: one array per (scoring, split, metric), aligned to the split's item ids of the answer-key
version (``item_order``, stored once per version); NaN marks an item without a value. ``FLOAT64``: the values as
float64 little-endian; ``BITS``: every value 0.0 or 1.0 (none missing), one bit per item (``numpy.packbits``,
little bit order). Predictions: ``ZSTD_JSON``, the UTF-8 JSON text compressed with zstd."""

import numpy as np
import zstandard

FLOAT64 = 1
BITS = 2
ZSTD_JSON = 1
ZSTD_LEVEL = 3


def encode_values(values: np.ndarray) -> bytes:
    """The stored bytes of one split's values of one metric (NaN: no value): bits when all are 0/1, else float64."""
    v = np.ascontiguousarray(values, dtype="<f8")
    ones = v == 1.0
    if v.size and bool((ones | ((v == 0.0) & ~np.signbit(v))).all()):
        return bytes([BITS]) + np.packbits(ones, bitorder="little").tobytes()
    return bytes([FLOAT64]) + v.tobytes()


def decode_values(data: bytes, n: int) -> np.ndarray:
    """The float64 values (NaN: no value) of ``n`` items stored by ``encode_values``."""
    fmt = data[0]
    if fmt == BITS:
        bits = np.frombuffer(data, np.uint8, offset=1)
        return np.unpackbits(bits, count=n, bitorder="little").astype(np.float64)
    if fmt == FLOAT64:
        values = np.frombuffer(data, "<f8", offset=1).astype(np.float64)
        if values.size != n:
            raise ValueError(f"stored per-item values hold {values.size} items, the answer key {n}")
        return values
    raise ValueError(f"unknown per-item values format {fmt}")


def encode_predictions(text: str) -> bytes:
    """The stored bytes of a submission's predictions JSON text."""
    return bytes([ZSTD_JSON]) + zstandard.ZstdCompressor(level=ZSTD_LEVEL).compress(text.encode())


def decode_predictions(data: bytes) -> str:
    """The predictions JSON text stored by ``encode_predictions``."""
    if data[0] != ZSTD_JSON:
        raise ValueError(f"unknown predictions format {data[0]}")
    return zstandard.ZstdDecompressor().decompress(data[1:]).decode()
