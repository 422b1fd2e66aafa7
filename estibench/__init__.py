"""estibench in-process: ``from estibench import Local`` runs the estimators and scorers in the calling process over
an embedded store, with the methods and answers of ``client.Client`` (docs/runs.md)."""

from estibench.local import Local

__all__ = ["Local"]
