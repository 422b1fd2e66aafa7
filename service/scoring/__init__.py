"""Scorer modules; importing this package registers every scorer."""

from service.scoring import film_mcq, stakebench, televal, vimu, zbb

__all__ = ["film_mcq", "stakebench", "televal", "vimu", "zbb"]
