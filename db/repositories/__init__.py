"""Repositories: SQL only, plain values in and out; no numpy, no HTTP, no service code."""
