/* One result row: everything measured for one config. Stored once, rendered
 * by separate writers (CSV now; the report reads the CSV back).
 *
 * RESULT_COLUMNS is the single list of columns, in CSV order. Each entry is
 * X(name, type, pass): type says how the field is stored and printed, pass
 * says which run measured it (the timed pass and the trace pass are separate
 * runs of the same config, because tracing perturbs timing). */
#ifndef ACCUBENCH_RESULT_ROW_H
#define ACCUBENCH_RESULT_ROW_H

#include <stdint.h>

#define RESULT_COLUMNS(X)                        \
    X(backend, TEXT, config)                     \
    X(device, TEXT, config)                      \
    X(model, TEXT, config)                       \
    X(params, INT, config)                       \
    X(dtype, TEXT, config)                       \
    X(mode, TEXT, config)                        \
    X(reduction, TEXT, config)                   \
    X(effective_batch, INT, config)              \
    X(micro_batch, INT, config)                  \
    X(accum_steps, INT, config)                  \
    X(last_micro_batch, INT, config)             \
    X(devices, INT, config)                      \
    X(step_ms_median, REAL, timed)               \
    X(step_ms_p10, REAL, timed)                  \
    X(step_ms_p90, REAL, timed)                  \
    X(step_noise_pct, REAL, timed)               \
    X(samples, INT, timed)                       \
    X(host_enqueue_ms, REAL, timed)              \
    X(pass_ms, REAL, timed)                      \
    X(samples_per_s, REAL, timed)                \
    X(flops_per_step, REAL, config)              \
    X(tflops, REAL, timed)                       \
    X(mfu_pct, REAL, timed)                      \
    X(dispatches_per_step, REAL, timed)          \
    X(grad_rel_err, REAL, check)                 \
    X(loss, REAL, check)                         \
    X(mem_need_bytes, INT, config)               \
    X(mem_peak_bytes, INT, timed)                \
    X(kernels_per_step, REAL, trace)             \
    X(launch_calls_per_step, REAL, trace)        \
    X(gpu_busy_ms, REAL, trace)                  \
    X(gpu_busy_pct, REAL, trace)                 \
    X(idle_host_wait_pct, REAL, trace)           \
    X(idle_gap_pct, REAL, trace)                 \
    X(launch_latency_us_median, REAL, trace)     \
    X(launch_latency_us_p90, REAL, trace)        \
    X(cupti_step_ms, REAL, trace)                \
    X(cupti_dropped, INT, trace)                 \
    X(forward_ms, REAL, trace)                   \
    X(backward_ms, REAL, trace)                  \
    X(optimizer_ms, REAL, trace)                 \
    X(idle_ms, REAL, trace)                      \
    X(status, TEXT, config)                      \
    X(note, TEXT, config)

/* Storage per type. A REAL that was not measured is NAN and prints empty;
 * an INT that was not measured is -1 and prints empty. */
#define RESULT_TYPE_TEXT char
#define RESULT_TEXT_LEN 160

typedef struct result_row {
#define RESULT_FIELD_TEXT(name) char name[RESULT_TEXT_LEN];
#define RESULT_FIELD_INT(name) int64_t name;
#define RESULT_FIELD_REAL(name) double name;
#define RESULT_FIELD(name, type, pass) RESULT_FIELD_##type(name)
    RESULT_COLUMNS(RESULT_FIELD)
#undef RESULT_FIELD
#undef RESULT_FIELD_TEXT
#undef RESULT_FIELD_INT
#undef RESULT_FIELD_REAL
} result_row;

/* A row with every number unmeasured (NAN / -1) and empty text. */
void result_row_clear(result_row *r);

/* The status vocabulary of the `status` column. */
#define STATUS_OK "ok"
#define STATUS_OOM "oom"
#define STATUS_SKIPPED "skipped"
#define STATUS_ERROR "error"

#endif
