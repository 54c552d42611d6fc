#!/usr/bin/env bash
# s31 call 3: cuBLASLt's heuristic candidates with their config attributes (tile, stages, cluster) at gemm_hopper's shapes; which Python packages the machine has.
R=$OUT/r; mkdir -p $R
export LD_LIBRARY_PATH=$PWD/.device-libs/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > "$R/gpu.txt" 2>&1
for s in "4096 4096 4096" "8192 8192 8192" "8192 14336 4096" "16 4096 14336"; do
  timeout 60 .probes/cublas_algos $s 8 >> $R/algos.txt 2>&1
done
for py in python3 /opt/torch/.venv/bin/python; do $py -c "
import importlib, sys
print(sys.executable, sys.version.split()[0])
for m in ['numpy','scipy','sklearn','skopt','pandas','jsonschema','constraint','xmltodict']:
    try: importlib.import_module(m); print(' ', m, 'yes')
    except Exception as e: print(' ', m, 'no', type(e).__name__)
" >> $R/py.txt 2>&1; done
nproc >> $R/py.txt
cd $OUT && tar czf r.tgz r && rm -rf r
