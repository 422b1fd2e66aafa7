"""FastAPI dependencies shared by the routers (``async``: no threadpool hop for a state lookup)."""

from typing import Annotated

from fastapi import Depends, Request

from usecases.services import Services


async def get_services(request: Request) -> Services:
    return request.app.state.services


async def get_client(request: Request) -> str | None:
    """The caller's address (anonymous jobs belong to it)."""
    return request.client.host if request.client else None


ServicesDep = Annotated[Services, Depends(get_services)]
ClientAddress = Annotated[str | None, Depends(get_client)]
