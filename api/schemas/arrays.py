"""Uploaded arrays over HTTP: the array's metadata as answered by upload and lookup."""

from typing import Any

from pydantic import BaseModel, Field

from usecases.clock import utc_iso


class ArrayOut(BaseModel):
    """An uploaded array; pass ``{"array": id}`` in place of any array-valued parameter."""

    id: str = Field(description="sha256:<hex> of the canonical npy file (np.save's version 1.0 header + data).")
    dtype: str
    shape: list[int]
    nbytes: int
    created_at: str


def array_json(meta: Any) -> dict:
    return {
        "id": f"sha256:{meta.sha256}",
        "dtype": meta.dtype,
        "shape": list(meta.shape),
        "nbytes": meta.nbytes,
        "created_at": utc_iso(meta.created_at),
    }
