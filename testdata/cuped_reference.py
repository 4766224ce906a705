#!/usr/bin/env python3
"""Writes testdata/cuped_reference.json: per-user CUPED data and the figures
the stats package must reproduce, computed here with numpy straight from
the per-user definitions (not from the per-variant sums the service keeps),
and statsmodels' OLS of Y on the treatment indicators and X as a cross-check.

Needs numpy and statsmodels (Debian: python3-numpy python3-statsmodels).
Run from the repository root: python3 testdata/cuped_reference.py
"""
import json

import numpy as np
import statsmodels.api as sm

Z95 = 1.959963984540054


def dataset(rng, sizes, rates, lift):
    """Users of each variant: X a count of earlier goal events, Y whether
    the user converted, more likely the more X (repeat purchasers)."""
    users = []
    for v, (n, base) in enumerate(zip(sizes, rates)):
        x = rng.poisson(0.8, n)
        p = np.clip(base + lift * x, 0, 1)
        y = (rng.random(n) < p).astype(int)
        users += [[v, int(a), int(b)] for a, b in zip(x, y)]
    return users


def figures(users, control=0):
    u = np.array(users)
    v, x, y = u[:, 0], u[:, 1].astype(float), u[:, 2].astype(float)
    xbar, ybar = x.mean(), y.mean()
    sxx = ((x - xbar) ** 2).sum()
    theta = ((x - xbar) * (y - ybar)).sum() / sxx if sxx != 0 else 0.0
    z = y - theta * x
    syy = ((y - ybar) ** 2).sum()
    vr = 1 - ((z - z.mean()) ** 2).sum() / syy if syy != 0 else 0.0
    arms = []
    for k in sorted(set(v.tolist())):
        m = v == k
        adj = y[m].mean() - theta * (x[m].mean() - xbar)
        s2 = z[m].var(ddof=1)
        arms.append({"variant": int(k), "n": int(m.sum()), "adjustedRate": adj, "s2": s2})
    c = arms[control]
    for a in arms:
        if a is c:
            continue
        d = a["adjustedRate"] - c["adjustedRate"]
        se = np.sqrt(a["s2"] / a["n"] + c["s2"] / c["n"])
        from math import erfc, sqrt
        a["difference"] = d
        a["lower"], a["upper"] = d - Z95 * se, d + Z95 * se
        a["pValue"] = erfc(abs(d / se) / sqrt(2))
        a["uplift"] = d / c["adjustedRate"] if c["adjustedRate"] != 0 else None
    # OLS of Y on an intercept, the treatment indicators and X: its
    # treatment coefficients estimate the same differences.
    cols = [np.ones(len(y))] + [(v == k).astype(float) for k in sorted(set(v.tolist())) if k != control] + [x]
    fit = sm.OLS(y, np.column_stack(cols)).fit()
    ols = [{"variant": int(k), "coefficient": float(fit.params[i + 1]), "standardError": float(fit.bse[i + 1])}
           for i, k in enumerate(k for k in sorted(set(v.tolist())) if k != control)]
    return {"theta": theta, "varianceReduction": vr, "arms": arms, "ols": ols}


def main():
    rng = np.random.default_rng(20240611)
    cases = []
    for name, sizes, rates, lift in [
        ("three variants, repeat purchasers", [300, 250, 280], [0.08, 0.11, 0.09], 0.12),
        ("two variants, weak covariate", [120, 130], [0.2, 0.25], 0.02),
    ]:
        users = dataset(rng, sizes, rates, lift)
        cases.append({"name": name, "users": users, "expected": figures(users)})
    doc = {
        "about": "CUPED reference figures: users are [variant, X, Y], variant 0 the control. "
                 "'expected' was computed by testdata/cuped_reference.py with numpy from the per-user definitions "
                 "(theta, Z = Y - theta X, adjusted rates, s2 with ddof 1, two-sided normal p, d +- 1.959963984540054 se); "
                 "rates and differences are proportions. 'ols' is statsmodels' OLS of Y on the treatment indicators and X, "
                 "which agrees closely. Never regenerate it from the service's code.",
        "cases": cases,
    }
    with open("testdata/cuped_reference.json", "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
