import json, sys, math, statistics as st
from scipy import stats as ss
K='amk evolve (default)'
def load(d):
    x=json.load(open(d+'/scores.json')); return x['time_score'][K], x['handed_back_over_optimum'][K]
a_t,a_h=load(sys.argv[1]); b_t,b_h=load(sys.argv[2])
pairs=sorted(a_t)
def welch(a,b):
    ma,mb=st.mean(a),st.mean(b); va,vb=st.variance(a)/len(a),st.variance(b)/len(b); se=math.sqrt(va+vb)
    if se==0: return f'{mb-ma:+.3f} (no spread)'
    df=(va+vb)**2/(va**2/(len(a)-1)+vb**2/(len(b)-1)); q=ss.t.ppf(0.975,df); d=mb-ma
    return f"{d:+.3f} [{d-q*se:+.3f}, {d+q*se:+.3f}]"
print('| pair | time main | time new | Δ time (95 %) | at 200 main | at 200 new | Δ at 200 (95 %) |')
print('|---|---|---|---|---|---|---|')
for p in pairs:
    A=[a_t[p][s] for s in sorted(a_t[p],key=int)]; B=[b_t[p][s] for s in sorted(b_t[p],key=int)]
    Ah=[r['200'] for r in a_h[p]]; Bh=[r['200'] for r in b_h[p]]
    print(f"| {p} | {st.mean(A):.3f} ± {st.pstdev(A):.3f} | {st.mean(B):.3f} ± {st.pstdev(B):.3f} | {welch(A,B)} | {st.mean(Ah):.3f} | {st.mean(Bh):.3f} | {welch(Ah,Bh)} |")
seeds=sorted(a_t[pairs[0]],key=int)
A=[st.mean(a_t[p][s] for p in pairs) for s in seeds]; B=[st.mean(b_t[p][s] for p in pairs) for s in seeds]
Ah=[st.mean(a_h[p][i]['200'] for p in pairs) for i in range(len(seeds))]; Bh=[st.mean(b_h[p][i]['200'] for p in pairs) for i in range(len(seeds))]
print(f"| aggregate | {st.mean(A):.3f} ± {st.pstdev(A):.3f} | {st.mean(B):.3f} ± {st.pstdev(B):.3f} | {welch(A,B)} | {st.mean(Ah):.4f} | {st.mean(Bh):.4f} | {welch(Ah,Bh)} |")
