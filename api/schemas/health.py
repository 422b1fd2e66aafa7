"""The health answer: the service, its code version and its database are up."""

from typing import Literal

from pydantic import BaseModel

from usecases.version import CODE_VERSION


class Health(BaseModel):
    status: Literal["ok"]
    version: str
    database: Literal["ok"]


HEALTHY = {"status": "ok", "version": CODE_VERSION, "database": "ok"}
