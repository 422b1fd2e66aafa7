"""Scorer modules; importing this package registers every scorer."""

from service.scoring import film_mcq, stakebench, televal, ubench, vimu, zbb

__all__ = ["film_mcq", "stakebench", "televal", "ubench", "vimu", "zbb"]
