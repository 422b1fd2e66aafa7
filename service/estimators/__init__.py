"""Estimator modules; importing this package registers every estimator."""

from service.estimators import (
    axial_slr,
    compression,
    fdslm,
    hyperconnections,
    layer_patching,
    minhash,
    moead,
    predictive_coding,
    sae,
    snn,
    steering,
    ubench,
    unrolling,
)

__all__ = [
    "axial_slr",
    "compression",
    "fdslm",
    "hyperconnections",
    "layer_patching",
    "minhash",
    "moead",
    "predictive_coding",
    "sae",
    "snn",
    "steering",
    "ubench",
    "unrolling",
]
