#!/usr/bin/env python3
"""Decodes bench/cublas_algos.cu's output: each candidate's tile, stages, cluster, inner shape
and reduction scheme, from the enum values to their names in cublasLt.h (read from the CUDA
toolkit, so no table here goes stale).

usage: bench/cublas_algos.py OUTPUT [--header /usr/local/cuda/include/cublasLt.h]"""
import argparse
import re
import sys

FIELDS = {"tile": "CUBLASLT_MATMUL_TILE_", "stages": "CUBLASLT_MATMUL_STAGES_",
          "cluster": "CUBLASLT_CLUSTER_SHAPE_", "inner": "CUBLASLT_MATMUL_INNER_SHAPE_",
          "reduction": "CUBLASLT_REDUCTION_SCHEME_"}


def enum_names(header):
    names = {f: {} for f in FIELDS}
    for m in re.finditer(r"^\s*(CUBLASLT_\w+)\s*=\s*(\d+)\s*,?", open(header).read(), re.M):
        for field, prefix in FIELDS.items():
            if m.group(1).startswith(prefix):
                names[field].setdefault(int(m.group(2)), m.group(1)[len(prefix):])
    return names


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("output")
    ap.add_argument("--header", default="/usr/local/cuda/include/cublasLt.h")
    a = ap.parse_args()
    names = enum_names(a.header)
    for line in open(a.output):
        def name(m):
            field, v = m.group(1), int(m.group(2))
            return f"{field}={names[field].get(v, v)}" if field in names else m.group(0)
        sys.stdout.write(re.sub(r"(\w+)=(\d+)", name, line))


if __name__ == "__main__":
    main()
