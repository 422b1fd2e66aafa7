"""Estimator modules; importing this package registers every estimator."""

from service.estimators import (
    compression,
    fdslm,
    hyperconnections,
    layer_patching,
    minhash,
    moead,
    snn,
    steering,
    ubench,
    unrolling,
)

__all__ = [
    "compression",
    "fdslm",
    "hyperconnections",
    "layer_patching",
    "minhash",
    "moead",
    "snn",
    "steering",
    "ubench",
    "unrolling",
]
