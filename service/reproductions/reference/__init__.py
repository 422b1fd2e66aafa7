"""Independent computations of the reproduction checks' expected values: brute force, direct simulation, hand
formulas and reference libraries. Nothing here imports ``service.estimators`` or ``service.scoring`` (a test
proves it), so an expected value computed here never comes from the code a check judges."""
