"""Per-paper reproduction checks: each paper's claim, the estimator runs it needs and the rule that judges them.

``catalog()`` lists one :class:`Reproduction` per paper. A check is declarative: its ``steps`` are estimator calls
(name and params) that the use-case layer runs through the ordinary run path (so every figure rests on a stored
run), and ``judge`` turns their results into an :class:`Outcome`. A paper whose estimator or scorer is not in the
registry yet is ``pending``; one whose claim rests on data this service cannot have is ``not_reproducible``.
"""

from service.reproductions.base import Outcome, Reproduction, Step, status_of
from service.reproductions.catalog import catalog, get

__all__ = ["Outcome", "Reproduction", "Step", "catalog", "get", "status_of"]
