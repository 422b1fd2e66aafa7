"""Scorer benchmarks (issue 12): segmentation masks and HD95 (U-Bench), caption metrics (3D scene understanding).

(1) 64 masks of 1024 × 1024 scored over HTTP from npy uploads against the same masks sent as JSON lists
    (``bench_masks_http_npy_vs_json``; needs ``--url`` of a running server; the row says PENDING with the
    server's answer if it refuses the references);
(2) our HD95 against medpy's ``hd95`` on the same 64 masks (target >= 2x faster, values equal to 1e-12), and the
    whole ``ubench.seg_metrics`` call on them (eight metrics + HD95 per case);
(3) BLEU-1..4, ROUGE-L and CIDEr-D of the 3D scene scorers (``service.scoring.caption_metrics``) on 10,000
    pre-tokenised captions against pycocoevalcap (target >= 5x faster, values equal to 1e-9).

    .venv/bin/python bench/scorers.py [--url http://127.0.0.1:8000] [--api-key KEY]

medpy comes with the ``bench`` extra, pycocoevalcap with the ``dev`` extra.
"""

import argparse
import io
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from service.estimators import ubench as U
from service.estimators.ubench_masks import surface_metrics
from service.registry import no_progress

Row = tuple[str, str, str, str, str, str]
N_MASKS = 64
SIDE = 1024


def best_of(fn: Callable[[], object], repeat: int) -> float:
    """Minimum wall time of ``repeat`` runs."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def lesion_masks(n: int = N_MASKS, side: int = SIDE, seed: int = 0) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Lesion-like (pred, gt) pairs: gt an ellipse of radii 20-300 px at a random place; pred the ellipse with
    perturbed centre, radii and a wavy boundary, and in every second case a spurious blob elsewhere (which makes
    the bounding box of pred ∪ gt, hence our HD95 work, much larger)."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[:side, :side].astype(np.float32)
    preds, gts = [], []
    for i in range(n):
        r = rng.uniform(20, 300, 2)
        c = rng.uniform(r.max(), side - r.max(), 2)
        gt = ((yy - c[0]) / r[0]) ** 2 + ((xx - c[1]) / r[1]) ** 2 < 1
        angle = np.arctan2(yy - c[0], xx - c[1])
        wave = 1 + 0.05 * np.sin(rng.integers(3, 9) * angle + rng.uniform(0, 6.3))
        c2, r2 = c + rng.normal(0, 0.1, 2) * r, r * rng.uniform(0.85, 1.15, 2)
        pred = ((yy - c2[0]) / r2[0]) ** 2 + ((xx - c2[1]) / r2[1]) ** 2 < wave
        if i % 2:
            b = rng.uniform(30, side - 30, 2)
            pred |= (yy - b[0]) ** 2 + (xx - b[1]) ** 2 < rng.uniform(5, 25) ** 2
        preds.append(pred.astype(np.uint8))
        gts.append(gt.astype(np.uint8))
    return preds, gts


def bench_hd95(preds: list[np.ndarray], gts: list[np.ndarray]) -> list[Row]:
    """(2) HD95 ours vs medpy, and the whole seg_metrics call on arrays (as after npy resolution)."""
    try:
        from medpy.metric.binary import hd95 as medpy_hd95
    except ImportError:
        return [("2", "HD95, 64 masks 1024²", "-", "medpy not installed", "pip install -e '.[bench]'", "SKIP")]
    pairs = [(p.astype(bool), g.astype(bool)) for p, g in zip(preds, gts, strict=True)]
    ones = [1.0, 1.0]
    ours_values = np.array([surface_metrics(p, g, ones, "medpy", 1.0)["hd95"] for p, g in pairs])
    ref_values = np.array([medpy_hd95(p, g) for p, g in pairs])
    gap = float(np.max(np.abs(ours_values - ref_values)))
    t_ours = best_of(lambda: [surface_metrics(p, g, ones, "medpy", 1.0) for p, g in pairs], 3)
    t_ref = best_of(lambda: [medpy_hd95(p, g) for p, g in pairs], 1)
    speed = t_ref / t_ours
    params = U.SegMetricsParams(pred=[[[0]]], gt=[[[0]]])
    params.pred, params.gt = list(preds), list(gts)
    t_call = best_of(lambda: U.seg_metrics_fn(params, no_progress), 3)
    return [
        (
            "2",
            "HD95, 64 lesion masks 1024² (half with a spurious blob)",
            f"{t_ours:.2f} s",
            f"medpy {t_ref:.2f} s",
            f"{speed:.1f}× faster; largest difference {gap:.1e}",
            "PASS" if speed >= 2 and gap <= 1e-12 else "MISS",
        ),
        (
            "2",
            "ubench.seg_metrics on the same 64 arrays (8 metrics + HD95)",
            f"{t_call:.2f} s",
            "-",
            f"cost {U.seg_metrics_cost(params):.2e} voxel ops (sync budget {U.SPECS[0].sync_budget:.0e})",
            "info",
        ),
    ]


def _npy(mask: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, mask)
    return buf.getvalue()


def bench_masks_http_npy_vs_json(
    url: str, preds: list[np.ndarray], gts: list[np.ndarray], headers: dict[str, str]
) -> list[Row]:
    """(1) The same 64 cases scored by ``ubench.seg_metrics`` over HTTP (HD95 off: transport and parsing).

    npy: 128 uploads to ``POST /v1/arrays`` (uint8) and one call whose ``pred``/``gt`` list the references.
    JSON: one call per case with both masks as nested 0/1 lists (a pair is ~4 MB of JSON; the default body limit
    is 8 MB, so the 64 cases cannot share one request). A per-run nonce in ``threshold`` keeps the run cache out.
    """
    import httpx

    nonce = 0.5 - (time.time_ns() % 10**6) * 1e-9
    case = "64 masks 1024² scored over HTTP (hd95 off)"
    with httpx.Client(base_url=url, headers=headers, timeout=600) as client:
        t0 = time.perf_counter()
        json_iou = []
        for p, g in zip(preds, gts, strict=True):
            payload = json.dumps({"pred": [p.tolist()], "gt": [g.tolist()], "hd95": False, "threshold": nonce})
            r = client.post(
                "/v1/estimators/ubench.seg_metrics", content=payload, headers={"content-type": "application/json"}
            )
            r.raise_for_status()
            json_iou.append(r.json()["result"]["cases"][0]["iou"])
        t_json = time.perf_counter() - t0
        t0 = time.perf_counter()
        ids: dict[str, list[dict[str, str]]] = {"pred": [], "gt": []}
        for name, masks in (("pred", preds), ("gt", gts)):
            for m in masks:
                r = client.post("/v1/arrays", content=_npy(m), headers={"content-type": "application/x-npy"})
                r.raise_for_status()
                ids[name].append({"array": r.json()["id"]})
        t_upload = time.perf_counter() - t0
        body = {"pred": ids["pred"], "gt": ids["gt"], "hd95": False, "threshold": nonce}
        t0 = time.perf_counter()
        r = client.post("/v1/estimators/ubench.seg_metrics", json=body)
        t_npy_call = time.perf_counter() - t0
    anchor = f"JSON {t_json:.2f} s (64 calls)"
    if r.status_code != 200:
        detail = f"uploads {t_upload:.2f} s; call: HTTP {r.status_code} " + r.text[:120].replace("|", "/")
        return [("1", case, "npy -", anchor, detail, "PENDING")]
    same = [c["iou"] for c in r.json()["result"]["cases"]] == json_iou
    t_npy = t_upload + t_npy_call
    return [
        (
            "1",
            case,
            f"npy {t_npy:.2f} s (uploads {t_upload:.2f} s + call {t_npy_call:.2f} s)",
            anchor,
            f"{t_json / t_npy:.1f}× faster; IoU identical: {same}",
            "PASS" if same and t_npy < t_json else "MISS",
        )
    ]


def caption_corpus(n: int = 10_000, seed: int = 0) -> tuple[list[str], list[list[str]]]:
    """Pre-tokenised captions: a Zipf-distributed 2,000-word vocabulary, candidates of 5-15 tokens taking about
    half their words from the first of 1-5 references of 5-20 tokens."""
    rng = np.random.default_rng(seed)
    vocab = np.array([f"w{i}" for i in range(2000)])

    def draw(k: int) -> np.ndarray:
        return vocab[np.minimum(rng.zipf(1.3, k) - 1, 1999)]

    candidates, references = [], []
    for _ in range(n):
        refs = [draw(int(rng.integers(5, 21))) for _ in range(int(rng.integers(1, 6)))]
        cand = draw(int(rng.integers(5, 16)))
        keep = rng.random(cand.size) < 0.5
        cand[keep] = rng.choice(refs[0], int(keep.sum()))
        candidates.append(" ".join(cand))
        references.append([" ".join(r) for r in refs])
    return candidates, references


def bench_captions() -> list[Row]:
    """(3) BLEU-1..4, ROUGE-L and CIDEr-D on 10,000 pre-tokenised captions: ours against pycocoevalcap."""
    case = "BLEU-1..4, ROUGE-L, CIDEr-D on 10,000 captions (1-5 refs)"
    try:
        from pycocoevalcap.bleu.bleu import Bleu
        from pycocoevalcap.cider.cider import Cider
        from pycocoevalcap.rouge.rouge import Rouge
    except ImportError:
        return [("3", case, "-", "pycocoevalcap not installed", "pip install -e '.[dev]'", "SKIP")]
    from service.scoring.caption_metrics import score_captions

    candidates, references = caption_corpus()
    gts = dict(enumerate(references))
    res = {i: [c] for i, c in enumerate(candidates)}

    def coco() -> list[float]:
        bleu = Bleu(4).compute_score(gts, res, verbose=0)[0]
        return [*bleu, Rouge().compute_score(gts, res)[0], Cider().compute_score(gts, res)[0]]

    t_ours = best_of(lambda: score_captions(candidates, references), 3)
    t_ref = best_of(coco, 1)
    out = score_captions(candidates, references)
    ours = [out[f"bleu_{n}"] for n in range(1, 5)] + [out["rouge_l"], out["cider"]]
    gap = float(np.max(np.abs(np.array(ours) - np.array(coco()))))
    speed = t_ref / t_ours
    return [
        (
            "3",
            case,
            f"{t_ours:.2f} s",
            f"pycocoevalcap {t_ref:.2f} s",
            f"{speed:.1f}× faster; largest difference {gap:.1e}",
            "PASS" if speed >= 5 and gap <= 1e-9 else "MISS",
        )
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="base URL of a running server for part (1), e.g. http://127.0.0.1:8000")
    parser.add_argument("--api-key", help="API key for part (1) when the server requires keys")
    args = parser.parse_args()
    preds, gts = lesion_masks()
    rows: list[Row] = []
    if args.url:
        headers = {"x-api-key": args.api_key} if args.api_key else {}
        rows += bench_masks_http_npy_vs_json(args.url, preds, gts, headers)
    else:
        rows.append(("1", "64 masks 1024² over HTTP, npy vs JSON", "-", "-", "no --url given", "SKIP"))
    rows += bench_hd95(preds, gts)
    rows += bench_captions()
    print("| part | case | ours | anchor | result | target |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
