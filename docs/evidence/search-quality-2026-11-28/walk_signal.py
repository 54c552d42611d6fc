# The walk's first trials from the Default: how many times the best improved, and by what
# factor, per pair and seed (amk evolve, --budget W). usage: walk_signal.py CF_DIR KERNEL/GPU,... SEEDS
import csv, gzip, json, subprocess, sys, statistics as st
from pathlib import Path
cf, pairs, nseeds = sys.argv[1], sys.argv[2].split(','), int(sys.argv[3])
AMK = '/work/main/build/amk'; SPECS = '/tmp/isl/main_401/work/specs'
W = {'convolution_milo': 28, 'dedispersion_milo': 2 * 8 + 8}
for pair in pairs:
    k, g = pair.split('/')
    sim = f'{cf}/{k}/{g}.json.gz'
    c = json.load(gzip.open(sim, 'rt'))['cache']
    ts = sorted(e['time'] for e in c.values() if not isinstance(e['time'], str))
    rows = []
    for seed in range(1, nseeds + 1):
        r = Path(f'/dev/shm/sig-{seed}.tsv'); r.unlink(missing_ok=True)
        subprocess.run([AMK, '--quiet', 'loop', k, '--spec-dir', SPECS, '--backend', f'sim:{sim}',
                        '--strategy', 'evolve', '--seed', str(seed), '--budget', str(W[k]),
                        '--results', str(r)], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        lat = []
        with open(r) as f:
            for row in csv.DictReader((ln for ln in f if not ln.startswith('#')), delimiter='\t'):
                try: lat.append(float(row['latency_us']))
                except ValueError: lat.append(float('inf'))
        d = lat[0]; best = d; imp = 0
        for x in lat[1:]:
            if x < best: best = x; imp += 1
        rank = sum(t < d / 1000 for t in ts) / len(ts) if d != float('inf') else 1
        rows.append((imp, d / best, rank))
    imps = [r[0] for r in rows]; fac = [r[1] for r in rows]
    print(f'{pair}: default rank {rows[0][2]:.3f}; improvements in {W[k]} trials: median {st.median(imps)} range {min(imps)}-{max(imps)}; default/best median {st.median(fac):.2f} range {min(fac):.2f}-{max(fac):.2f}')
