# Paired (same seeds) differences of the aggregate time score and at-200 mean, new - main,
# with a 95 % t interval over seeds; and per pair how many seeds reach < 1.02 of the optimum
# at 200.  usage: paired.py MAIN_DIR NEW_DIR
import json, sys, math, statistics as st
from scipy import stats as ss
K = 'amk evolve (default)'
def load(d):
    x = json.load(open(d + '/scores.json')); return x['time_score'][K], x['handed_back_over_optimum'][K]
a_t, a_h = load(sys.argv[1]); b_t, b_h = load(sys.argv[2])
pairs = sorted(a_t); seeds = sorted(a_t[pairs[0]], key=int)
def ci(d):
    m = st.mean(d); se = st.stdev(d) / math.sqrt(len(d)); q = ss.t.ppf(0.975, len(d) - 1)
    return f"{m:+.4f} [{m - q * se:+.4f}, {m + q * se:+.4f}]"
dt = [st.mean(b_t[p][s] for p in pairs) - st.mean(a_t[p][s] for p in pairs) for s in seeds]
dh = [st.mean(b_h[p][i]['200'] for p in pairs) - st.mean(a_h[p][i]['200'] for p in pairs) for i in range(len(seeds))]
print(f"paired aggregate: time {ci(dt)}, at 200 {ci(dh)}")
for p in pairs:
    na = sum(r['200'] < 1.02 for r in a_h[p]); nb = sum(r['200'] < 1.02 for r in b_h[p])
    print(f"  {p}: seeds < 1.02 at 200: main {na}/{len(a_h[p])}, new {nb}/{len(b_h[p])}")
