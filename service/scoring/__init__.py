"""Scorer modules; importing this package registers every scorer."""

from service.scoring import (
    film_mcq,
    raven,
    scene3d_densecap,
    scene3d_grounding,
    scene3d_qa,
    stakebench,
    televal,
    ubench,
    vimu,
    zbb,
)

__all__ = [
    "film_mcq",
    "raven",
    "scene3d_densecap",
    "scene3d_grounding",
    "scene3d_qa",
    "stakebench",
    "televal",
    "ubench",
    "vimu",
    "zbb",
]
