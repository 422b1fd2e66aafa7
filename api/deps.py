"""FastAPI dependencies shared by the routers (``async``: no threadpool hop for a state lookup)."""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Query, Request

from api.schemas.paging import MAX_CURSOR, MAX_LIMIT
from usecases.services import Services


async def get_services(request: Request) -> Services:
    return request.app.state.services


async def get_client(request: Request) -> str | None:
    """The caller's address (anonymous jobs belong to it)."""
    return request.client.host if request.client else None


ServicesDep = Annotated[Services, Depends(get_services)]
ClientAddress = Annotated[str | None, Depends(get_client)]


@dataclass(frozen=True)
class PageQuery:
    """The page a listing asks for: at most ``limit`` rows after ``cursor`` (a previous page's ``next_cursor``)."""

    limit: int
    cursor: str | None


def page_query(default_limit: int) -> Callable[[int, str | None], PageQuery]:
    """The ``limit``/``cursor`` query of a listing whose page holds ``default_limit`` rows unless asked otherwise."""

    def paging(
        limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = default_limit,
        cursor: Annotated[str | None, Query(max_length=MAX_CURSOR)] = None,
    ) -> PageQuery:
        return PageQuery(limit, cursor)

    return paging


Paging = Annotated[PageQuery, Depends(page_query(50))]
"""The page query of every listing (50 rows by default)."""
