#!/usr/bin/env bash
# The card a bench ran on, one line: "Card: name, serial, UUID, driver". H100s of one model
# differ by about 0.5-1 % in gemm_hopper's ratios to cuBLAS (evidence h100-2026-11-26-stores),
# so a comparison across calls needs to know which card ran. Never fails.
card=$(nvidia-smi --query-gpu=name,serial,uuid,driver_version --format=csv,noheader 2>/dev/null |
    head -1)
printf 'Card: %s\n' "${card:-unknown (nvidia-smi did not answer)}"
