# Writes a valid accubench results CSV of `rows` rows (awk -v rows=N
# [-v seed=S] [-v slow=F]), for timing report and compare at scale.
# Each config is one model (m0, m1, ...) at effective batch 64 in async
# mode, split as micro-batch 64, 32, ..., 1: seven rows per series, every
# row a distinct config. `seed` varies the step times, `slow` scales them
# (a second file to compare against the first).
BEGIN {
    if (rows == "") rows = 10000
    if (slow == "") slow = 1
    srand(seed == "" ? 1 : seed)
    print "# tool_version: 0.1.0"
    print "# backend: cpu"
    print "# device: synthetic"
    print "# dtype: fp32"
    print "# optimizer: adamw lr 0.001"
    print "# peak_gemm_tflops: 1.9"
    print "# mem_cap_bytes: "
    header = "backend,device,model,params,dtype,mode,reduction,effective_batch,micro_batch," \
             "accum_steps,last_micro_batch,devices,step_ms_median,step_ms_p10,step_ms_p90," \
             "step_noise_pct,samples,host_enqueue_ms,pass_ms,samples_per_s,flops_per_step," \
             "tflops,mfu_pct,dispatches_per_step,grad_rel_err,loss,mem_need_bytes," \
             "mem_peak_bytes,kernels_per_step,launch_calls_per_step,gpu_busy_ms,gpu_busy_pct," \
             "idle_host_wait_pct,idle_gap_pct,launch_latency_us_median,launch_latency_us_p90," \
             "cupti_step_ms,cupti_dropped,forward_ms,backward_ms,optimizer_ms,idle_ms,status,note"
    print header
    for (i = 0; i < rows; i++) {
        model = "m" int(i / 7)
        micro = 2 ^ (6 - i % 7)
        k = 64 / micro
        pass = (0.5 + micro * 0.03) * (1 + rand() * 0.01) * slow
        step = (k * pass + 0.2) * slow
        printf "cpu,synthetic,%s,16801792,fp32,async,sum,64,%d,%d,%d,1,%.4f,%.4f,%.4f,%.2f,%d," \
               "%.4f,%.4f,%.1f,6.4e+09,%.4f,%.3f,%d,%.3e,%.5f,%d,%d,,,,,,,,,,,,,,,ok,\n",
               model, micro, k, micro, step, step * 0.99, step * 1.01, 0.5 + rand(), 50 + i % 100,
               step * 0.9, pass, 64000 / step, 6.4 / step, 6.4 / step / 1.9 * 100, 34 * k,
               rand() * 1e-6, 6.9 + rand() * 0.01, 268959936 + micro * 65536,
               274339134 + micro * 65536
    }
}
