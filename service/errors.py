"""Domain errors raised by pure service code. The API layer maps them to HTTP problems; no status codes here."""

from collections.abc import Sequence


class DomainError(Exception):
    """Base class: ``loc`` names the offending parameter path, ``type`` is a machine-readable code."""

    type = "domain_error"

    def __init__(self, msg: str, loc: Sequence[str | int] = ()) -> None:
        super().__init__(msg)
        self.msg = msg
        self.loc = tuple(loc)


class InvalidInput(DomainError):
    """Parameters that pass the schema but are inconsistent (mismatched sketches, sizes out of relation)."""

    type = "invalid_input"


class Degenerate(DomainError):
    """The result is undefined or non-finite for these inputs (e.g. a NaN would have to be returned)."""

    type = "degenerate"


class TooExpensive(DomainError):
    """The cost of the request exceeds a cap (``hard_cap``, or ``sync_budget`` where no queue can take it)."""

    type = "cost_cap"

    def __init__(self, msg: str, cost: float, cap: float, loc: Sequence[str | int] = ()) -> None:
        super().__init__(msg, loc)
        self.cost = cost
        self.cap = cap


class Cancelled(Exception):
    """Raised by a ``progress`` callback once the job it reports for has been cancelled."""
