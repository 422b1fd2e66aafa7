"""Estimator modules; importing this package registers every estimator."""
