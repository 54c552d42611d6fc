#!/usr/bin/env bash
# Does the new build propose what the knob build proposed with AMK_K_STALL=12? The same
# configs in the same order, run by run (--budget 300: the plateau rule may fire).
#   NEW=build/amk KNOB=WT/build/amk SIMS=DIR SPECS=DIR FIRST=1 LAST=20 bash ident.sh
# SIMS: a folder with KERNEL/GPU/cache.json, the bench's sim files (its work/ folder);
# SPECS: the bench's work/specs.
set -u
n=0 d=0
for pair in convolution_milo/A100 convolution_milo/H200 convolution_milo/MI250X convolution_milo/W6600 \
            dedispersion_milo/A100 dedispersion_milo/MI250X convolution_milo/A4000 dedispersion_milo/A6000; do
    k=${pair%/*} g=${pair#*/}
    for seed in $(seq "${FIRST:-1}" "${LAST:-20}"); do
        for b in new knob; do
            if [ $b = new ]; then a=$NEW e=""; else a=$KNOB e="AMK_K_STALL=12"; fi
            env $e "$a" --quiet loop "$k" --spec-dir "$SPECS/$k" --backend "sim:$SIMS/$k/$g/cache.json" \
                --strategy evolve --seed "$seed" --budget 300 --results "/tmp/ident-$b.tsv" \
                --best /dev/null >/dev/null 2>&1
        done
        [ "$(wc -l < /tmp/ident-new.tsv)" -gt 100 ] || echo "short run: $pair seed $seed"
        n=$((n + 1))
        cmp -s <(cut -f5 /tmp/ident-new.tsv) <(cut -f5 /tmp/ident-knob.tsv) ||
            { d=$((d + 1)); echo "differs: $pair seed $seed"; }
        rm -f /tmp/ident-new.tsv /tmp/ident-knob.tsv
    done
done
echo "$d of $n runs differ"
