# Joins the runs' scores.json (in the scratch folder /tmp/b25n, or argv[1]) into per-pair and aggregate
# tables with Welch 95 % intervals of each variant's aggregate difference from main
# (sd: population, as the bench prints it; per-seed aggregate = mean over the five pairs). Needs scipy (the bench venv has it).
import json, statistics as st, math, os, sys
from scipy import stats as ss
ROOT = sys.argv[1] if len(sys.argv) > 1 else '/tmp/b25n'
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
    se = math.sqrt(va + vb); df = (va + vb)**2/(va**2/(len(a)-1) + vb**2/(len(b)-1)); q = ss.t.ppf(0.975, df)
    d = mb - ma; return f"{d:+.3f} [{d-q*se:+.3f}, {d+q*se:+.3f}]"
sets = {'main': [('main_1', 1), ('main_21', 21)],
        'mix ml': [('mixml_1', 1), ('mixml_21', 21)],
        'mix 0.5': [('mix05_1', 1), ('mix05_21', 21)],
        'mix 1': [('mix1_1', 1), ('mix1_21', 21)],
        'mix 0.5 sq': [('mix05sq_1', 1), ('mix05sq_21', 21)],
        'elite 4': [('elite4_1', 1), ('elite4_21', 21)],
        'elite 16': [('elite16_1', 1), ('elite16_21', 21)],
        'main (elite binary)': [('mainE_1', 1)],
        'main (final binary, knobs unset)': [('mainF_21', 21)],
        'buggy mix ml': [('buggy_mixml_1', 1)],
        'buggy mix 0.5': [('buggy_mix05_1', 1)],
        'buggy mix 1': [('buggy_mix1_1', 1)],
        'buggy mix 0.5 sq': [('buggy_mix05sq_1', 1)],
        'buggy mix ml sq': [('buggy_mixmlsq_1', 1)]}
data = {k: per_seed(v) for k, v in sets.items()}
for lo, hi, lab in [(1, 20, 'seeds 1-20'), (21, 60, 'seeds 21-60'), (1, 60, 'seeds 1-60')]:
    print(f"## {lab}\n")
    mT, mA = data['main']
    pairs = list(mT)
    def agg(T, A):
        if not T: return None
        seeds = [s for s in range(lo, hi+1) if all(s in T[p] for p in pairs)]
        if len(seeds) != hi - lo + 1: return None
        at = [st.mean(T[p][s] for p in pairs) for s in seeds]; aa = [st.mean(A[p][s] for p in pairs) for s in seeds]
        return seeds, at, aa
    base = agg(mT, mA)
    if base is None: continue
    print("| variant | " + " | ".join(p.replace('_milo', '') for p in pairs) + " | time (agg) | Δ time vs main, 95 % | at 200 (agg) | Δ at 200 vs main, 95 % |")
    print("|---|" + "---|"*(len(pairs)+4))
    for k, (T, A) in data.items():
        r = agg(T, A)
        if r is None: continue
        seeds, at, aa = r
        cells = [f"{st.mean(T[p][s] for s in seeds):.3f} ± {st.pstdev(T[p][s] for s in seeds):.3f} / {st.mean(A[p][s] for s in seeds):.3f}" for p in pairs]
        print(f"| {k} | " + " | ".join(cells) + f" | {st.mean(at):.3f} ± {st.pstdev(at):.3f} | {'' if k=='main' else welch(base[1], at)} | {st.mean(aa):.3f} | {'' if k=='main' else welch(base[2], aa)} |")
    print()
