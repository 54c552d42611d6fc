#!/usr/bin/env bash
# s36 call 4 (H100), issue 21: where c0-P4 and 128x320 E2 lose to cuBLAS at the LLM shape per clock:
# Nsight Compute sections of gemm_hopper (probe) and cuBLAS's kernel in the same process.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,serial --format=csv > "$R/gpu.txt" 2>&1
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
echo "ncu: $NCU" | tee $R/steps.txt
$NCU --version >> $R/steps.txt 2>&1
for i in 0 1; do
  timeout 240 $NCU -k regex:'gemm_hopper_kernel|nvjet|sm90' -s 3 -c 2 --section SpeedOfLight --section MemoryWorkloadAnalysis \
    --section ComputeWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats \
    --metrics sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,lts__t_sectors_srcunit_tex_op_read.sum,l1tex__m_xbar2l1tex_read_bytes.sum,lts__t_bytes.sum,dram__bytes_read.sum,dram__bytes_write.sum,sm__cycles_elapsed.avg,gpc__cycles_elapsed.max \
    .probes14/probe$i 8192 14336 4096 plain > $R/ncu$i.txt 2>&1
  echo "probe$i rc $?" >> $R/steps.txt
done
cd $OUT && tar czf r.tgz r && rm -rf r
