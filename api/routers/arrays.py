"""``POST /v1/arrays`` (npy upload, content-addressed) and ``GET /v1/arrays/{id}``."""

from typing import Annotated

import anyio
from fastapi import APIRouter, Path, Request
from fastapi.responses import JSONResponse

from api import arrays
from api.auth import CHECK_CREDENTIALS, OptionalCaller, RunCaller
from api.deps import ServicesDep
from api.problems import COMMON, ApiError, responses
from api.schemas.arrays import ArrayOut, array_json
from service.types import ARRAY_REF_PATTERN
from usecases.arrays import array_meta, store_array
from usecases.errors import Forbidden, NotFound, Unauthorized, Unavailable

ArrayId = Annotated[str, Path(pattern=ARRAY_REF_PATTERN, description="sha256:<64 hex>, as POST returned it.")]


UPLOAD_MEDIA_TYPES = (arrays.NPY_MEDIA_TYPE, "application/octet-stream")
"""The npy body may be labelled either way (generated clients send raw bytes as application/octet-stream)."""

NPY_BODY = {
    "requestBody": {
        "required": True,
        "content": {media: {"schema": {"type": "string", "format": "binary"}} for media in UPLOAD_MEDIA_TYPES},
        "description": "An .npy file (np.save), as application/x-npy or application/octet-stream: dtype one of "
        + ", ".join(arrays.DTYPES)
        + "; C order; at most ESTIBENCH_MAX_ARRAY_ELEMENTS elements and ESTIBENCH_MAX_ARRAY_BYTES bytes.",
    }
}


def build_router(max_array_bytes: int) -> APIRouter:
    budget = arrays.UploadBudget()
    router = APIRouter(
        prefix="/v1/arrays", tags=["arrays"], dependencies=[CHECK_CREDENTIALS], responses=responses(Unauthorized)
    )

    @router.post(
        "",
        status_code=201,
        response_model=ArrayOut,
        responses=responses(*COMMON, Unauthorized, Forbidden, Unavailable, 408),
        openapi_extra=NPY_BODY,
        max_body_size=max_array_bytes + 12 + arrays.MAX_HEADER,
    )
    async def upload_array(request: Request, principal: RunCaller, services: ServicesDep) -> JSONResponse:
        """Upload an .npy body (``application/x-npy`` or ``application/octet-stream``); the same content always gets
        the same id (deduplicated)."""
        media = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if media not in UPLOAD_MEDIA_TYPES:
            raise ApiError(415, f"send the array as {' or '.join(UPLOAD_MEDIA_TYPES)} (an .npy file)")
        length = request.headers.get("content-length")
        settings = services.settings
        try:
            with anyio.fail_after(settings.upload_timeout_s):
                dtype, shape, data = await arrays.read_npy(
                    request.stream(),
                    content_length=int(length) if length and length.isdigit() else None,
                    max_elements=settings.max_array_elements,
                    max_bytes=settings.max_array_bytes,
                    budget=budget,
                    budget_limit=settings.upload_buffer_bytes,
                )
        except TimeoutError:
            raise ApiError(408, f"the upload did not arrive within {settings.upload_timeout_s:g} s") from None
        try:
            sha = arrays.content_id(dtype, shape, data)
            meta = await anyio.to_thread.run_sync(store_array, services, sha, dtype, shape, data, principal)
        finally:
            budget.release(len(data))
        return JSONResponse(array_json(meta), status_code=201, headers={"Location": f"/v1/arrays/sha256:{sha}"})

    @router.get("/{array_id}", response_model=ArrayOut, responses=responses(NotFound, 422, 500))
    def get_array(array_id: ArrayId, principal: OptionalCaller, services: ServicesDep) -> JSONResponse:
        """Metadata of an uploaded array the caller may use: an anonymous upload, or a keyed one its key (or an
        identical upload by that key) made; admins see any."""
        return JSONResponse(array_json(array_meta(services, principal, array_id)))

    return router
