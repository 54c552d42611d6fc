"""Where the trials of bench/loop_repeat.sh's runs went: per run, the trials each proposer
made (the results' source column), the compile time (compile_ms), the run worker's time
(checks + benchmark, from the row's note), and the compile time of the surrogate's picks.
usage: python3 costs.py OUT   (OUT: loop_repeat.sh's folder: runs.txt, r1.tsv, ...)"""
import csv
import re
import statistics as st
import sys

out = sys.argv[1]
print("| run | build | seed | trials | surrogate picks | compile ms, mean (median) | surrogate "
      "picks' compile ms, mean | run job ms, mean | sum of compile / 16 workers + run jobs, s |")
print("|---|---|---|---|---|---|---|---|---|")
for line in open(f"{out}/runs.txt"):
    i, seed, build = line.split(None, 2)
    rows = list(csv.DictReader((l for l in open(f"{out}/r{i}.tsv") if not l.startswith("#")),
                               delimiter="\t"))
    comp = [float(r["compile_ms"]) for r in rows if r["compile_ms"] not in ("", "nan")]
    pick = [float(r["compile_ms"]) for r in rows
            if r["source"] == "surrogate" and r["compile_ms"] not in ("", "nan")]
    run = [int(m.group(1)) + int(m.group(2)) for m in
           (re.search(r"checks (\d+) ms, benchmark (\d+) ms", r["note"]) for r in rows) if m]
    print(f"| {i} | {build.strip()} | {seed} | {len(rows)} | {len(pick)} | "
          f"{st.mean(comp):.0f} ({st.median(comp):.0f}) | {st.mean(pick):.0f} | "
          f"{st.mean(run):.0f} | {sum(comp) / 16e3 + sum(run) / 1e3:.1f} |")
