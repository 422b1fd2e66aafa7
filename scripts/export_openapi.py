"""Write the OpenAPI document to the given path (``make openapi``); a test fails when it drifts."""

import json
import sys
from pathlib import Path

from api.app import create_app
from usecases.settings import Settings


def openapi_text() -> str:
    app = create_app(Settings(database_url="sqlite://", secret_key="openapi", log_level="WARNING"))
    return json.dumps(app.openapi(), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":
    Path(sys.argv[1] if len(sys.argv) > 1 else "docs/openapi.json").write_text(openapi_text())
