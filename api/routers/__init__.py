"""HTTP routers; the estimator and scorer routes are generated from the registry."""
