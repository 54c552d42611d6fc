# Joins the runs' scores.json (in the scratch folder /tmp/b25s, or argv[1]) into per-pair and
# aggregate tables with Welch 95 % intervals of each variant's difference from main: of the
# aggregate (per-seed aggregate = mean over the five pairs) and, in the second table, of each
# pair's per-seed scores. sd: population, as the bench prints it. Adapted from
# docs/evidence/search-quality-2026-11-26-n/stats.py. Needs scipy (the bench venv has it).
import json, statistics as st, math, os, sys
from scipy import stats as ss
ROOT = sys.argv[1] if len(sys.argv) > 1 else '/tmp/b25s'
KEY = 'amk evolve (default)'
def load(d):
    x = json.load(open(f'{ROOT}/{d}/scores.json'))
    return x['time_score'][KEY], x['handed_back_over_optimum'][KEY]
def per_seed(dirs):
    T = {}; A = {}
    for d, first in dirs:
        if not os.path.exists(f'{ROOT}/{d}/scores.json'):
            continue
        t, h = load(d)
        for p in t:
            for s, v in t[p].items(): T.setdefault(p, {})[int(s)] = v
            for i, r in enumerate(h[p]): A.setdefault(p, {})[first + i] = r['200']
    return T, A
def welch(a, b):
    ma, mb = st.mean(a), st.mean(b); va, vb = st.variance(a)/len(a), st.variance(b)/len(b)
    se = math.sqrt(va + vb)
    if se == 0: return f"{mb-ma:+.3f} [identical]"
    df = (va + vb)**2/(va**2/(len(a)-1) + vb**2/(len(b)-1)); q = ss.t.ppf(0.975, df)
    d = mb - ma; return f"{d:+.3f} [{d-q*se:+.3f}, {d+q*se:+.3f}]"
sets = {'main': [('main_21', 21), ('main_61', 61)],
        'main (first step binary, knob unset)': [('offstep_21', 21)],
        'main (final step binary, knob unset)': [('offfinal_21', 21)],
        'double': [('double_21', 21)],
        'max2': [('max2_21', 21)],
        'once': [('once_21', 21)],
        'double, min 8': [('double8_21', 21), ('double8_61', 61)],
        'double, min 8, repair': [('double8r_21', 21)],
        'once, min 8': [('once8_21', 21), ('once8_61', 61)],
        'double, min 16': [('double16_21', 21), ('double16_61', 61)]}
extra = [l.split('=', 1) for l in os.environ.get('EXTRA_SETS', '').split(';') if '=' in l]
for name, dirs in extra:  # EXTRA_SETS='name=dir:first,dir:first;...'
    sets[name] = [(d.split(':')[0], int(d.split(':')[1])) for d in dirs.split(',')]
data = {k: per_seed(v) for k, v in sets.items()}
for lo, hi, lab in [(21, 60, 'seeds 21-60'), (61, 100, 'seeds 61-100'), (21, 100, 'seeds 21-100')]:
    mT, mA = data['main']
    if not mT: continue
    pairs = list(mT)
    def agg(T, A):
        if not T: return None
        seeds = [s for s in range(lo, hi+1) if all(s in T[p] for p in pairs)]
        if len(seeds) != hi - lo + 1: return None
        at = [st.mean(T[p][s] for p in pairs) for s in seeds]; aa = [st.mean(A[p][s] for p in pairs) for s in seeds]
        return seeds, at, aa
    base = agg(mT, mA)
    if base is None: continue
    print(f"## {lab}: time score ± sd / best ÷ optimum at 200, per pair and aggregate\n")
    print("| variant | " + " | ".join(p.replace('_milo', '') for p in pairs) + " | time (agg) | Δ time vs main, 95 % | at 200 (agg) | Δ at 200 vs main, 95 % |")
    print("|---|" + "---|"*(len(pairs)+4))
    rows = []
    for k, (T, A) in data.items():
        r = agg(T, A)
        if r is None: continue
        rows.append((k, T, A, r))
        seeds, at, aa = r
        cells = [f"{st.mean(T[p][s] for s in seeds):.3f} ± {st.pstdev(T[p][s] for s in seeds):.3f} / {st.mean(A[p][s] for s in seeds):.3f}" for p in pairs]
        print(f"| {k} | " + " | ".join(cells) + f" | {st.mean(at):.3f} ± {st.pstdev(at):.3f} | {'' if k=='main' else welch(base[1], at)} | {st.mean(aa):.3f} | {'' if k=='main' else welch(base[2], aa)} |")
    print(f"\n## {lab}: per-pair differences from main, Welch 95 % (time score; at 200)\n")
    print("| variant | measure | " + " | ".join(p.replace('_milo', '') for p in pairs) + " |")
    print("|---|---|" + "---|"*len(pairs))
    for k, T, A, (seeds, at, aa) in rows:
        if k == 'main': continue
        for lab2, X, M in [('time', T, mT), ('at 200', A, mA)]:
            print(f"| {k} | {lab2} | " + " | ".join(welch([M[p][s] for s in seeds], [X[p][s] for s in seeds]) for p in pairs) + " |")
    print()
