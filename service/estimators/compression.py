"""Universal-compression estimators of "Double descent through universal compression" (docs/compression.md).

Importing this module registers ``compression.nml_regret``, ``compression.codelength``,
``compression.batch_regret`` and ``compression.double_descent``; the code lives in the ``compression_*`` modules.
"""

from service.estimators.compression_dd import DOUBLE_DESCENT_SPEC, double_descent
from service.estimators.compression_nml import CODELENGTH_SPEC, NML_REGRET_SPEC, codelength, nml_regret
from service.estimators.compression_pnml import BATCH_REGRET_SPEC, batch_regret

SPECS = (NML_REGRET_SPEC, CODELENGTH_SPEC, BATCH_REGRET_SPEC, DOUBLE_DESCENT_SPEC)

__all__ = ["SPECS", "batch_regret", "codelength", "double_descent", "nml_regret"]
