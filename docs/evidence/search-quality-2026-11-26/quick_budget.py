#!/usr/bin/env python3
# The quick measurement used while iterating (tried-and-lost.md): `amk loop --budget 200` per
# development pair and seed, best / optimum of the fastest row after 25, 50, 100, 200 trials
# (what best.json hands back on these replays: the bench counted 0 runs where it was not),
# and which proposal sources improved the best.
#   W=WORK FIRST=1 python3 quick_budget.py AMK SEEDS [KERNEL/GPU,...]
# WORK: a bench --work folder (search_vs_kerneltuner.py leaves specs/ and KERNEL/GPU/cache.json
# there). With evolve as shipped before this change it gives the bench's numbers exactly
# (1.070 at 200, seeds 1..20).
import sys, json, subprocess, os, statistics, collections
from concurrent.futures import ThreadPoolExecutor
amk = sys.argv[1]; seeds = int(sys.argv[2]); pairs = sys.argv[3].split(',') if len(sys.argv) > 3 else \
  ['convolution_milo/A100','convolution_milo/MI250X','convolution_milo/W6600','dedispersion_milo/A100','dedispersion_milo/MI250X']
first = int(os.environ.get('FIRST', '1')); W = os.environ['W']
budget = int(os.environ.get('BUDGET', '200'))
opt = {}
for p in pairs:
    c = json.load(open(f'{W}/{p}/cache.json'))['cache']
    opt[p] = min(v['time'] for v in c.values() if isinstance(v.get('time'), (int, float)))
def one(p, s):
    k = p.split('/')[0]
    tsv = f'/dev/shm/s4q-{os.getpid()}-{p.replace("/","_")}-{s}.tsv'
    subprocess.run([amk, '--quiet', 'loop', k, '--spec-dir', f'{W}/specs/{k}', '--backend', f'sim:{W}/{p}/cache.json',
                    '--seed', str(s), '--budget', str(budget), '--results', tsv, '--best', tsv + '.json'],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rows = [l.rstrip('\n').split('\t') for l in open(tsv) if not l.startswith('#')]
    h = rows[0]; rows = rows[1:]
    il, ist, isrc = h.index('latency_us'), h.index('status'), h.index('source')
    out = {}; best = float('inf'); src = collections.Counter(); srcwin = collections.Counter()
    for i, r in enumerate(rows, 1):
        src[r[isrc]] += 1
        if r[ist] == 'ok':
            l = float(r[il]) / 1000
            if l < best: best = l; srcwin[r[isrc]] += 1
        if i in (25, 50, 100, 200, 400, 800): out[i] = best / opt[p]
    os.unlink(tsv); os.unlink(tsv + '.json')
    return p, s, out, src, srcwin
jobs = [(p, s) for p in pairs for s in range(first, first + seeds)]
with ThreadPoolExecutor(2) as ex:
    res = list(ex.map(lambda a: one(*a), jobs))
marks = [m for m in (25, 50, 100, 200, 400, 800) if m <= budget]
print('pair ' + ' '.join(f'@{m:<5d}' for m in marks))
means = collections.defaultdict(list)
src = collections.Counter(); win = collections.Counter()
for p in pairs:
    rr = [r for r in res if r[0] == p]
    line = []
    for m in marks:
        v = statistics.mean(r[2][m] for r in rr); means[m].append(v); line.append(f'{v:.3f}')
    for r in rr: src.update(r[3]); win.update(r[4])
    print(p, ' '.join(line))
print('mean', ' '.join(f'{statistics.mean(means[m]):.3f}' for m in marks))
print('sources', dict(src)); print('improving', dict(win))
