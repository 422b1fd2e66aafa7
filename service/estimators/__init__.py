"""Estimator modules; importing this package registers every estimator."""

from service.estimators import compression, minhash, moead

__all__ = ["compression", "minhash", "moead"]
