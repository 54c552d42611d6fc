"""Development landscapes for the third package loss (issue 25, dedispersion A6000): copies of
benchmark_hub's dedispersion_milo space whose T1 Default is a valid config ranked between
the 20th and 30th percentile on both development GPUs (A100, MI250X). amk's start on the
held-out A6000 (the nearest valid config to the T1 Default, which breaks a restriction)
ranks 23 % there, against 7-8 % on the development GPUs. Chosen from the development
cachefiles alone.
    python3 make_dedisp_hubs.py HUB CACHEFILES OUT   # writes OUT/hub7..9"""
import os, random, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "search-quality-2026-11-27-b"))
from make_proxy_hubs import ranks_between, write_hub  # noqa: E402

hub, cdir, out = sys.argv[1:4]
rank, mid = ranks_between(cdir, "dedispersion_milo", ["A100", "MI250X"], 0.20, 0.30)
random.seed(17)
for i, key in enumerate(random.sample(mid, 3), 7):
    write_hub(hub, cdir, f"{out}/hub{i}", key.split(","), "dedispersion_milo")
    print(f"hub{i}: Default {key}, rank " + ", ".join(f"{g} {rank[g][key]:.2f}" for g in rank))
