"""Estimator modules; importing this package registers every estimator."""

from service.estimators import compression, layer_patching, minhash, moead, ubench

__all__ = ["compression", "layer_patching", "minhash", "moead", "ubench"]
