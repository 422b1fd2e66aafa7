"""Scorer modules; importing this package registers every scorer."""
