"""RAVEN-Bench's group metrics by hand from per-question correctness (one video, groups with a level per step)."""

from collections.abc import Mapping, Sequence

import numpy as np


def metrics(groups: Sequence[Mapping], correct: Sequence[str]) -> dict[str, float]:
    """Accuracy; S_L per level; S_main = mean of S_L1..3; S_cons = mean (c/k)² over consistency groups; S_coh = mean
    correct-prefix length / k over coherence groups; strict pass = share of groups with every step right."""
    flags = [np.array([c == "1" for c in s]) for s in correct]
    levels = np.concatenate([g["levels"] for g in groups])
    right = np.concatenate(flags)
    out = {"overall_acc": float(right.mean())}
    for lv in ("L1", "L2", "L3"):
        out[f"s_{lv.lower()}"] = float(right[levels == lv].mean())
    out["s_main"] = (out["s_l1"] + out["s_l2"] + out["s_l3"]) / 3
    cons = [f.mean() ** 2 for g, f in zip(groups, flags, strict=True) if g["group_family"] == "consistency"]
    coh = [
        (np.argmin(f) if not f.all() else f.size) / f.size
        for g, f in zip(groups, flags, strict=True)
        if g["group_family"] == "coherence"
    ]
    out["s_cons"] = float(np.mean(cons))
    out["s_coh"] = float(np.mean(coh))
    out["strict_pass"] = float(np.mean([f.all() for f in flags]))
    return out
