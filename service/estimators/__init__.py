"""Estimator modules; importing this package registers every estimator."""

from service.estimators import compression, fdslm, layer_patching, minhash, moead, snn, steering, ubench

__all__ = ["compression", "fdslm", "layer_patching", "minhash", "moead", "snn", "steering", "ubench"]
