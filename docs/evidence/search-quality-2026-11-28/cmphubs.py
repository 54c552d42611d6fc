import json, sys, math, statistics as st
from scipy import stats as ss
K = 'amk evolve (default)'
def w(a, b):
    va, vb = st.variance(a) / len(a), st.variance(b) / len(b); se = math.sqrt(va + vb); d = st.mean(b) - st.mean(a)
    df = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1)); q = ss.t.ppf(0.975, df)
    return f"{d:+.3f} [{d - q * se:+.3f}, {d + q * se:+.3f}]"
print('| copy | time main | time new | Δ time (95 %) | at 200 main | at 200 new | Δ at 200 |')
print('|---|---|---|---|---|---|---|')
for h in range(1, 7):
    a = json.load(open(f'/tmp/isl/hub-{sys.argv[1]}-{h}/scores.json')); b = json.load(open(f'/tmp/isl/hub-{sys.argv[2]}-{h}/scores.json'))
    p = 'convolution_milo/A100'
    A = list(a['time_score'][K][p].values()); B = list(b['time_score'][K][p].values())
    Ah = [r['200'] for r in a['handed_back_over_optimum'][K][p]]; Bh = [r['200'] for r in b['handed_back_over_optimum'][K][p]]
    print(f'| hub{h} | {st.mean(A):.3f} | {st.mean(B):.3f} | {w(A, B)} | {st.mean(Ah):.3f} | {st.mean(Bh):.3f} | {w(Ah, Bh)} |')
