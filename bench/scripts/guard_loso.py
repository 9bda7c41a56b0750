#!/usr/bin/env python3
"""Leave-one-set-out choice of the graph modes' min_support (see docs/evaluation.md).

Reads bench/results/dev-sets-per-question-4.json (each question's gold ranks per mode and its anchor support) and,
for each held-out set, picks the threshold that maximizes the mean Recall@5 gain over dense of cogito, pabd and
fusion on the other sets; a question below the threshold takes dense's ranking. Prints the held-out gains.
Usage: python3 bench/scripts/guard_loso.py [file]
"""
import json
import sys

PATH = sys.argv[1] if len(sys.argv) > 1 else "bench/results/dev-sets-per-question-4.json"
MODES = ["cogito", "pabd", "fusion"]
THRESHOLDS = [0, 0.3, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.99]


def recall5(ranks):
    return sum(1 for r in ranks if 1 <= r <= 5) / max(1, len(ranks))


sets = {}
for s in json.load(open(PATH))["sets"]:
    sets[s["dataset"]] = {
        "support": s["anchor_support"],
        "r5": {m: [recall5(q) for q in v["gold_ranks"]] for m, v in s["modes"].items()},
    }


def gain(name, mode, threshold):
    d = sets[name]
    dense = d["r5"]["dense"]
    gated = [m if s >= threshold else dn for s, m, dn in zip(d["support"], d["r5"][mode], dense)]
    return 100 * (sum(gated) - sum(dense)) / len(dense)


for held in sets:
    train = [n for n in sets if n != held]
    best = max(THRESHOLDS, key=lambda t: sum(gain(n, m, t) for n in train for m in MODES))
    after = {m: round(gain(held, m, best), 1) for m in MODES}
    before = {m: round(gain(held, m, 0), 1) for m in MODES}
    print(f"{held}: min_support {best}; held-out gain {after} (ungated {before})")
