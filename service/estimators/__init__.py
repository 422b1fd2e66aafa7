"""Estimator modules; importing this package registers every estimator."""

from service.estimators import compression

__all__ = ["compression"]
