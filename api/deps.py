"""FastAPI dependencies shared by the routers."""

from typing import Annotated

from fastapi import Depends, Request

from api.settings import Settings
from db.engine import Engines


def get_engines(request: Request) -> Engines:
    return request.app.state.engines


def get_settings(request: Request) -> Settings:
    return request.app.state.settings


EnginesDep = Annotated[Engines, Depends(get_engines)]
SettingsDep = Annotated[Settings, Depends(get_settings)]
