#!/usr/bin/env python3
"""Writes testdata/welch_reference.json: per-arm sums of per-user metric
values and what scipy.stats.ttest_ind(treatment, control, equal_var=False)
says of them, which stats.Welch must reproduce.

The per-user values are drawn here (numpy, fixed seed) the way the metric
types make them: 0/1 conversions, counts, capped and uncapped revenue, a
few negative values, tiny and lopsided samples. Each case keeps only what
the service keeps, n, S = Σx and Q = Σx², plus scipy's figures:

  statistic, pValue   scipy.stats.ttest_ind(t, c, equal_var=False)
  df                  Welch–Satterthwaite, checked against the p-value:
                      2·t.sf(|statistic|, df) must equal scipy's pValue
  lower, upper        difference ± t.ppf(0.975, df)·se, the 95 % interval

Needs numpy and scipy (Debian: python3-numpy python3-scipy).
Run from the repository root: python3 testdata/welch_reference.py
"""
import json
import math

import numpy as np
import scipy
from scipy import stats


def case(name, t, c):
    t = np.asarray(t, dtype=float)
    c = np.asarray(c, dtype=float)
    res = stats.ttest_ind(t, c, equal_var=False)
    vt, vc = t.var(ddof=1), c.var(ddof=1)
    at, ac = vt / len(t), vc / len(c)
    se = math.sqrt(at + ac)
    df = (at + ac) ** 2 / (at ** 2 / (len(t) - 1) + ac ** 2 / (len(c) - 1))
    p = 2 * stats.t.sf(abs(res.statistic), df)
    assert math.isclose(p, res.pvalue, rel_tol=1e-12, abs_tol=1e-300), (name, p, res.pvalue)
    d = t.mean() - c.mean()
    q = stats.t.ppf(0.975, df)
    arm = lambda x: {"n": len(x), "s": float(x.sum()), "q": float((x * x).sum())}
    return {
        "name": name,
        "treatment": arm(t),
        "control": arm(c),
        "difference": float(d),
        "se": se,
        "df": df,
        "statistic": float(res.statistic),
        "pValue": float(res.pvalue),
        "lower": float(d - q * se),
        "upper": float(d + q * se),
    }


def main():
    rng = np.random.default_rng(20261127)
    cases = [
        case("conversion 31% vs 28%, 1000 each", rng.random(1000) < 0.31, rng.random(1000) < 0.28),
        case("conversion lopsided 120 vs 2000", rng.random(120) < 0.2, rng.random(2000) < 0.1),
        case("count poisson 2.1 vs 2.0", rng.poisson(2.1, 800), rng.poisson(2.0, 900)),
        case("count mostly zero", rng.poisson(0.05, 3000), rng.poisson(0.03, 3000)),
        case("revenue lognormal", rng.lognormal(2.5, 1.2, 500) * (rng.random(500) < 0.3),
             rng.lognormal(2.4, 1.2, 520) * (rng.random(520) < 0.3)),
        case("revenue capped at 100", np.minimum(rng.lognormal(3.5, 1.5, 400), 100), np.minimum(rng.lognormal(3.3, 1.5, 400), 100)),
        case("negative values", rng.normal(-1.5, 4, 60), rng.normal(0.5, 2, 45)),
        case("two against three", [1.0, 3.0], [2.0, 2.5, 7.0]),
        case("two against two", [0.0, 1.0], [1.0, 1.0 + 1e-9]),
        case("large effect, tiny p", rng.normal(1.8, 1, 40), rng.normal(0, 1, 40)),
        case("no difference", [1.0, 2.0, 3.0, 4.0], [4.0, 3.0, 2.0, 1.0]),
    ]
    out = {
        "about": "Welch's t-test on per-arm sums (n, S = sum of x, Q = sum of x squared), as scipy.stats.ttest_ind(treatment, control, equal_var=False) computes it; written by testdata/welch_reference.py.",
        "scipy": scipy.__version__,
        "cases": cases,
    }
    with open("testdata/welch_reference.json", "w") as f:
        json.dump(out, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
