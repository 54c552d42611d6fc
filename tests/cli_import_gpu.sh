#!/usr/bin/env bash
# Kernels as written, on a device (CTest label gpu; exit 77 = no device answers): a Kernel
# Tuner style kernel imported with `amk import --kernel` runs with its constant memory filled
# by the host, an input filled with a constant, float/double/int scalars, a header of its
# folder, inputs given as .npy data and a user-supplied answer. Each feature can fail:
#  - a reference that reads the filter through its pointer argument agrees with the kernel,
#    which reads the __constant__ copy, only if the host filled the symbol;
#  - the answer file, computed here from the data files, holds only if every input and
#    scalar reached the kernel as written; a wrong answer makes the verdict `wrong`;
#  - a symbol the code object lacks is the config's run_error, naming it.
# Run as: bash cli_import_gpu.sh AMK_BINARY SOURCE_DIR
set -euo pipefail
source "$2/tests/fixtures/cli/lib.sh"
cli_setup "$@"
AS="$SRC/tests/fixtures/t1/asis"
run import "$AS/asis.json" --kernel "$AS/asis.cu" -o as
expect_rc 0
echo '{"kernel": "asis", "shape": {}, "params": {"block_size_x": 64, "tile_size_x": 4}}' >c.json
run evaluate c.json --spec-dir as --backend gpu
if [ "$RC" -eq 4 ]; then
    echo "cli_import_gpu: SKIP: no GPU device answers: $(tail -1 "$WORK/err")"
    exit 77
fi
expect_rc 0
expect_py "$WORK/out" 'd["status"] == "ok" and d["correct"] is True'

# 1. an independent reference that reads coef from global memory (its pointer argument)
mkdir asg && cp as/* asg/
cat >asg/ref_global.cu <<'CU'
#include "asis_coef.h"
__global__ void ref_global(float *y, const float *x, const float *bias, const float *coef_arg,
                           float alpha, double beta, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = x[i] * coef_arg[i % COEF_N] + alpha * bias[i] + (float)beta;
}
CU
python3 - asg/spec.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["name"] = "asis_global"
d["reference"] = {"source": "ref_global.cu", "entry": "ref_global", "args": d["args"],
                  "launch": {"grid": ["cdiv(problem_size_x, 256)", "1", "1"],
                             "block": ["256", "1", "1"], "shared_bytes": "0"}}
json.dump(d, open(sys.argv[1], "w"), indent=1)
PY
sed 's/"asis"/"asis_global"/' c.json >cg.json
run evaluate cg.json --spec-dir asg --backend gpu
expect_rc 0
expect_py "$WORK/out" 'd["status"] == "ok"'
# a symbol the kernel's code object lacks: the candidate's run error, naming it
python3 - asg/spec.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["buffers"][3]["symbol"] = "no_such_symbol"
json.dump(d, open(sys.argv[1], "w"), indent=1)
PY
run evaluate cg.json --spec-dir asg --backend gpu
expect_rc 0
expect_py "$WORK/out" 'd["status"] == "run_error" and "no __constant__ symbol" in d["reason"] and "no_such_symbol" in d["reason"]'

# 2. data files and an answer: y = x * coef[i % 64] + 1.5 * 0.25 - 0.5, computed here
python3 - <<'PY'
import random, struct
def save(path, code, vals):
    hdr = "{'descr': '<%s', 'fortran_order': False, 'shape': (%d,), }" % (code, len(vals))
    hdr += " " * (63 - (10 + len(hdr)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode())
        f.write(struct.pack("<%d%s" % (len(vals), "f"), *vals))
rnd = random.Random(7)
f32 = lambda v: struct.unpack("<f", struct.pack("<f", v))[0]
x = [f32(rnd.uniform(-1, 1)) for _ in range(100000)]
coef = [f32(rnd.uniform(0.5, 1.5)) for _ in range(64)]
y = [f32(f32(x[i] * coef[i % 64]) + f32(1.5 * 0.25) + f32(-0.5)) for i in range(100000)]
save("x.npy", "f4", x)
save("coef.npy", "f4", coef)
save("y.npy", "f4", y)
save("y_wrong.npy", "f4", [v + 0.5 for v in y])
PY
run import "$AS/asis.json" --kernel "$AS/asis.cu" -o asd --data x=x.npy,coef=coef.npy --answer y=y.npy
expect_rc 0
run evaluate c.json --spec-dir asd --backend gpu
expect_rc 0
expect_py "$WORK/out" 'd["status"] == "ok"'
run import "$AS/asis.json" --kernel "$AS/asis.cu" -o asw --data x=x.npy,coef=coef.npy --answer y=y_wrong.npy
expect_rc 0
run evaluate c.json --spec-dir asw --backend gpu
expect_rc 0
expect_py "$WORK/out" 'd["status"] == "wrong"'

# 3. --vary: filter_width changes the output; checked against the default config it is wrong,
# against the default with the same filter_width (reference.vary) it is ok, and says so
cat >fw.cu <<'CU'
__global__ void scale_fw(float *y, const float *x, int n)
{
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n)
        y[i] = filter_width * x[i];
}
CU
cat >fw.json <<'JS'
{"General": {"BenchmarkName": "fw", "OutputFormat": "JSON"},
 "ConfigurationSpace": {"TuningParameters": [
   {"Name": "block_size_x", "Type": "int", "Values": "[32, 64]", "Default": 32},
   {"Name": "filter_width", "Type": "int", "Values": "[1, 2]", "Default": 1}],
  "Conditions": []},
 "KernelSpecification": {"Language": "CUDA", "KernelName": "scale_fw", "KernelFile": "fw.cu",
  "GlobalSizeType": "CUDA", "LocalSize": {"X": "block_size_x", "Y": "1", "Z": "1"},
  "GridDivX": ["block_size_x"], "ProblemSize": [4096], "SharedMemory": 0,
  "Arguments": [
   {"Name": "y", "Type": "float", "MemoryType": "Vector", "AccessType": "WriteOnly",
    "FillType": "Constant", "FillValue": 0.0, "Size": "ProblemSize[0]", "Output": 1},
   {"Name": "x", "Type": "float", "MemoryType": "Vector", "AccessType": "ReadOnly",
    "FillType": "Random", "FillValue": 1.0, "Size": "ProblemSize[0]"},
   {"Name": "n", "Type": "int32", "MemoryType": "Scalar", "FillValue": 4096}]}}
JS
echo '{"kernel": "fw", "shape": {}, "params": {"block_size_x": 64, "filter_width": 2}}' >fw2.json
run import fw.json --kernel fw.cu -o fwd
expect_rc 0
run evaluate fw2.json --spec-dir fwd --backend gpu
expect_rc 0
expect_py "$WORK/out" 'd["status"] == "wrong"'
run import fw.json --kernel fw.cu --vary filter_width -o fwv
expect_rc 0
run evaluate fw2.json --spec-dir fwv --backend gpu
expect_rc 0
expect_py "$WORK/out" 'd["status"] == "ok" and "filter_width (no independent reference" in d["notes"]'
done_ok
