"""Reading ``POST /v1/arrays`` npy uploads, checked before the data is read.

Upload: the npy header is parsed from the first bytes of the stream (``numpy.lib.format``), then the dtype
whitelist, C order, the element cap, the byte cap and "declared size equals the bytes sent" are checked; the data
buffer then grows only as bytes arrive, within a process-wide budget of upload bytes held in memory. Pickles and
object dtypes never pass the whitelist.
The id is ``sha256:`` + the SHA-256 of the canonical npy file (version 1.0 header, as ``np.save`` writes it), so a
client can compute it locally. Storing uploads and resolving ``{"array": ...}`` references is usecases/arrays.py.
"""

import ast
import hashlib
import io
import struct
from collections.abc import AsyncIterator

import numpy as np
from numpy.lib import format as npy_format

from api.problems import ApiError
from usecases.errors import Unavailable

NPY_MEDIA_TYPE = "application/x-npy"
DTYPES = ("<f8", "<f4", "<i8", "<i4", "|u1", "|b1")
"""Whitelisted dtypes (little-endian numbers and booleans)."""
MAX_HEADER = 4096
MAX_NDIM = 4
_PREAMBLE = 10  # magic (6) + version (2) + header length (2; 4 for versions 2 and 3)


def _bad(detail: str, type_: str = "npy_invalid", status: int = 422) -> ApiError:
    return ApiError(status, detail, errors=[{"loc": ["body"], "msg": detail, "type": type_}])


def parse_header(prefix: bytes) -> tuple[np.dtype, tuple[int, ...], int] | None:
    """(dtype, shape, header length) from the first bytes, None if more bytes are needed; ApiError if invalid."""
    if len(prefix) < _PREAMBLE:
        return None
    if prefix[:6] != npy_format.MAGIC_PREFIX:
        raise _bad("the body is not an npy file (bad magic)", "npy_magic", 400)
    major = prefix[6]
    if major == 1:
        start, hlen = 10, struct.unpack("<H", prefix[8:10])[0]
    elif major in (2, 3):
        if len(prefix) < 12:
            return None
        start, hlen = 12, struct.unpack("<I", prefix[8:12])[0]
    else:
        raise _bad(f"unsupported npy version {major}", "npy_version")
    if hlen > MAX_HEADER:
        raise _bad(f"npy header of {hlen} bytes exceeds {MAX_HEADER}", "npy_header")
    if len(prefix) < start + hlen:
        return None
    try:
        text = prefix[start : start + hlen].decode("utf-8" if major == 3 else "latin1")
        header = ast.literal_eval(text)
    except (ValueError, SyntaxError, UnicodeDecodeError, MemoryError, RecursionError) as exc:
        raise _bad("the npy header is not a Python literal", "npy_header") from exc
    if not isinstance(header, dict) or set(header) != {"descr", "fortran_order", "shape"}:
        raise _bad("the npy header must have exactly descr, fortran_order and shape", "npy_header")
    descr, fortran, shape = header["descr"], header["fortran_order"], header["shape"]
    if not isinstance(descr, str) or descr not in DTYPES:
        raise _bad(f"dtype {descr!r} is not accepted; use one of {', '.join(DTYPES)}", "npy_dtype")
    if fortran is not False:
        raise _bad("Fortran-ordered arrays are not accepted; save a C-ordered array", "npy_order")
    if (
        not isinstance(shape, tuple)
        or len(shape) > MAX_NDIM
        or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape)
    ):
        raise _bad(f"shape must be a tuple of at most {MAX_NDIM} non-negative integers", "npy_shape")
    return np.dtype(descr), shape, start + hlen


def canonical_header(dtype: np.dtype, shape: tuple[int, ...]) -> bytes:
    """The npy 1.0 header ``np.save`` writes for a C-ordered array of this dtype and shape."""
    buf = io.BytesIO()
    npy_format.write_array_header_1_0(buf, {"descr": dtype.str, "fortran_order": False, "shape": shape})
    return buf.getvalue()


class UploadBudget:
    """Bytes of upload bodies held in memory across all in-flight uploads of this process, reserved as they
    arrive; a reservation that would pass ``limit`` fails."""

    def __init__(self) -> None:
        self.held = 0

    def reserve(self, n: int, limit: int) -> bool:
        if self.held + n > limit:
            return False
        self.held += n
        return True

    def release(self, n: int) -> None:
        self.held -= n


async def read_npy(
    chunks: AsyncIterator[bytes],
    *,
    content_length: int | None,
    max_elements: int,
    max_bytes: int,
    budget: UploadBudget,
    budget_limit: int,
) -> tuple[np.dtype, tuple[int, ...], bytearray]:
    """Read an npy body: header first, caps checked, then the declared data bytes into a buffer that grows only
    as they arrive, each chunk reserved in ``budget`` (``Unavailable`` when the in-memory total would pass
    ``budget_limit``). The caller releases ``len`` of the returned buffer, or the budget is released here on error."""
    data = bytearray()
    try:
        head = bytearray()
        parsed = None
        async for chunk in chunks:
            head += chunk
            parsed = parse_header(bytes(head[: 12 + MAX_HEADER]))
            if parsed is not None:
                break
        if parsed is None:
            raise _bad("the body ends inside the npy header", "npy_truncated", 400)
        dtype, shape, offset = parsed
        elements = 1
        for d in shape:
            elements *= d
        if elements > max_elements:
            raise _bad(f"the array has {elements} elements; the cap is {max_elements}", "npy_elements")
        nbytes = elements * dtype.itemsize
        if nbytes > max_bytes:
            raise _bad(f"the array has {nbytes} bytes; the cap is {max_bytes}", "npy_bytes", 413)
        if content_length is not None and content_length != offset + nbytes:
            raise _bad(
                f"the header declares {nbytes} data bytes but the body carries {content_length - offset}", "npy_size"
            )
        _take(data, bytes(head[offset:]), nbytes, budget, budget_limit)
        del head
        async for chunk in chunks:
            _take(data, chunk, nbytes, budget, budget_limit)
        if len(data) != nbytes:
            raise _bad(f"the header declares {nbytes} data bytes but the body carries {len(data)}", "npy_size")
    except BaseException:
        budget.release(len(data))
        raise
    return dtype, shape, data


def _take(data: bytearray, chunk: bytes, nbytes: int, budget: UploadBudget, limit: int) -> None:
    """Append ``chunk`` to ``data`` after reserving its bytes."""
    if len(data) + len(chunk) > nbytes:
        raise _bad("the body carries more bytes than the header declares", "npy_size")
    if not budget.reserve(len(chunk), limit):
        raise Unavailable("too many array uploads in progress; retry shortly", retry_after_s=5)
    data += chunk


def content_id(dtype: np.dtype, shape: tuple[int, ...], data: bytes | bytearray) -> str:
    h = hashlib.sha256(canonical_header(dtype, shape))
    h.update(data)
    return h.hexdigest()
