"""Estimator modules; importing this package registers every estimator."""

from service.estimators import compression, layer_patching, minhash, moead

__all__ = ["compression", "layer_patching", "minhash", "moead"]
