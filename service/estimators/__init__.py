"""Estimator modules; importing this package registers every estimator."""

from service.estimators import compression, moead

__all__ = ["compression", "moead"]
