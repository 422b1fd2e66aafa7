"""API keys over HTTP: the new key's body, a key as listed (never its secret), the key shown once at creation."""

from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, Field, StringConstraints

from service.types import StrictModel
from usecases.api_keys import SCOPES

Scope = Annotated[str, StringConstraints(pattern="^(estimators:run|benchmarks:write|submissions:write|admin)$")]


class ApiKeyIn(StrictModel):
    name: Annotated[str, StringConstraints(min_length=1, max_length=128)] = Field(description="Who holds the key.")
    scopes: list[Scope] = Field(min_length=1, max_length=len(SCOPES), description=f"Subset of {list(SCOPES)}.")


class ApiKeyOut(BaseModel):
    id: str
    prefix: str
    name: str
    scopes: list[str]
    created_at: datetime
    revoked_at: datetime | None
    benchmark_id: str | None = Field(description="A participant's key: the one benchmark it may write to.")


class ApiKeyCreated(ApiKeyOut):
    key: str = Field(description="The secret key. It is shown only in this response; store it now.")


class ApiKeyList(BaseModel):
    items: list[ApiKeyOut]
