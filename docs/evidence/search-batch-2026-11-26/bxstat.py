"""Mean (over seeds) best / optimum handed back, per recorded sweep, old -> new, for each TAG:
files bx_old_TAG.txt and bx_new_TAG.txt (batchexp.sh output: kernel seed best_us shape) in this
folder; the optimum is the sweep's fastest measured ok row at that shape.
usage: python3 bxstat.py TAG ...   (from the repository root or anywhere)"""
import collections, os, sys
HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "..", "..", "space_defs", "data")


def opt(kernel, shape):
    best = float("inf")
    for line in open(os.path.join(DATA, kernel + ".tsv")):
        f = line.rstrip("\n").split("\t")
        if len(f) > 9 and f[2] == kernel and f[3] == shape and f[7] == "ok" and f[9] == "measured":
            best = min(best, float(f[8]))
    return best


def load(p):
    d = collections.defaultdict(list)
    for line in open(os.path.join(HERE, p)):
        k, s, lat, shape = line.split()
        d[(k, shape)].append(float(lat))
    return d


for tag in sys.argv[1:]:
    o, n = load("bx_old_%s.txt" % tag), load("bx_new_%s.txt" % tag)
    print("%s: mean best / optimum over %d seeds, old -> new" % (tag, len(next(iter(o.values())))))
    ro, rn = [], []
    for key in o:
        op = opt(*key)
        a = sum(x / op for x in o[key]) / len(o[key])
        b = sum(x / op for x in n[key]) / len(n[key])
        ro.append(a)
        rn.append(b)
        print("  %-18s %.4f -> %.4f" % (key[0], a, b))
    print("  %-18s %.4f -> %.4f" % ("mean of sweeps", sum(ro) / len(ro), sum(rn) / len(rn)))
