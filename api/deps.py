"""FastAPI dependencies shared by the routers (``async``: no threadpool hop for a state lookup)."""

from typing import Annotated

from fastapi import Depends, Request

from api.settings import Settings
from db.engine import Engines


async def get_engines(request: Request) -> Engines:
    return request.app.state.engines


async def get_settings(request: Request) -> Settings:
    return request.app.state.settings


EnginesDep = Annotated[Engines, Depends(get_engines)]
SettingsDep = Annotated[Settings, Depends(get_settings)]
