/* One result row: everything measured for one config. Stored once, rendered
 * by separate writers (CSV now; the report reads the CSV back).
 *
 * RESULT_COLUMNS is the single list of columns, in CSV order. Each entry is
 * X(name, type, pass, role): type says how the field is stored and printed,
 * pass says which run measured it (the timed pass and the trace pass are
 * separate runs of the same config, because tracing perturbs timing), and
 * role whether it names the config:
 *   KEY    identifies the config: an axis of the sweep. Rows equal in every
 *          KEY and SPLIT column are the same config (what compare matches);
 *   SPLIT  identifies it too, and is what varies along one of the report's
 *          A/B/C tables, whose rows are equal in every KEY column;
 *   VALUE  describes or measures it: follows from the key (params,
 *          accum_steps), says where it ran (device: compare checks that
 *          once per file), or was measured.
 * Data parallel: devices is the number of ranks, sync when the gradient
 * all-reduce ran (empty: a single process, no all-reduce), shard what
 * each rank keeps (none, optimizer, gradients; empty: a single process);
 * the comm columns are per step, comm_exposed_ms the part of comm_ms the
 * step waited for, busbw as nccl-tests defines it (every collective of the
 * step: its bus bytes over comm_ms), the reduce-scatters and all-gathers
 * of a sharded step counted apart from the all-reduces, mem_need_bytes and
 * mem_peak_bytes one rank's (every rank's is the same), comm_wait_ms the
 * time the collectives waited for the slowest rank to reach them (outside
 * comm_ms and busbw; empty where the engine cannot tell), rank_step_spread_pct the
 * ranks' step medians' range over rank 0's, rank_weight_diff the largest
 * difference between rank 0's weights and any rank's after one step.
 * arm tells apart a config named twice in one sweep (--micro 16,16: an A/A
 * check; 1 otherwise, and for a file from before the column).
 * Interleaved rounds (docs/measuring.md): rows with the same comparison
 * were timed in the same rounds, each round every config for a slice of
 * steps in a fresh random order; rounds is how many rounds their figures
 * use, rounds_dropped how many were left out as disturbed, round_ms each
 * kept round's median step in ms (space-separated, in round order, the
 * same rounds for every row of the comparison: any two rows pair by
 * position), round_pass_ms each of those rounds' median single pass
 * (timed after the row's slice, pass_ms their median), vs_ref the paired
 * ratio of the row's step to its series' reference (the largest
 * micro-batch, arm 1) with its (Yuen) 95% interval vs_ref_lo..hi. Empty: timed alone (--rounds off, one config,
 * a fixed --steps).
 * Trust (docs/measuring.md): step_ms_ci_lo..hi is the median's
 * distribution-free 95% interval (a row timed in rounds: its median and
 * interval over the kept rounds' medians, the round the unit);
 * probe_tflops_before/after the peak GEMM probed just before and after the
 * timed steps, mfu_pct against the higher
 * of the two (each the fastest of its reps), mfu_datasheet_pct against the
 * device's dense datasheet rate for the dtype (empty where the backend
 * knows none: the CPU, a GPU its table does not name), probe_drift_pct their
 * difference over the higher, probe_noise_pct the larger of the two
 * probes' own spread (median over fastest rep); what else
 * ran meanwhile: other_cpu_pct and steal_pct (of all CPUs' time, from
 * /proc), sm_clock_mhz (the lower reading) and clock_events (NVML's
 * reasons, either reading); flags "noisy" and/or "disturbed" (blank:
 * clean), the figures behind them in the note.
 * The counting pass (harness/run/passes/count_pass.h: a few steps apart from the
 * timed ones): host_syncs_per_step (the step's syncs, downloads and timer
 * reads), gemm_ms_per_step (its GEMMs' time, where a dispatch is the
 * device's work: the CPU) and gemm_shapes ("MxNxK NT: calls, ms and MFU
 * per step" by shape, the costliest first).
 *
 * grad_noise_scale is B_simple = tr(S) / |G|^2 (McCandlish et al. 2018;
 * docs/noise-scale.md), from the starting weights, with its jackknife
 * error, in examples as effective_batch counts them (the estimate in valid
 * items, tokens for a GPT, over the valid items an example holds);
 * noise_windows the windows it came from (those --dump writes);
 * grad_sq_micro and grad_sq_window the mean squared norms of the
 * small batches' and the windows' own mean gradients it came from.
 * recompute is what the backward recomputed instead of keeping (none,
 * gelu, block); recompute_flops_per_step what that recomputation did,
 * apart from flops_per_step, which (and so tflops and mfu_pct) stays the
 * useful work's.
 * grad_dtype is what the accumulated gradient was held in between
 * micro-batches (fp32, or bf16: rounded to bf16 after each micro-batch,
 * emulated on fp32 storage, so mem_need_bytes is fp32's); grad_rel_err is
 * then that accumulator's error against the fp32 full-batch gradient.
 * The optimizer is the same for a whole run: it is in the metadata
 * (`# optimizer:`), not a column, and compare checks it once per file. */
#ifndef ACCUBENCH_RESULT_ROW_H
#define ACCUBENCH_RESULT_ROW_H

#include <stddef.h>
#include <stdint.h>

#define RESULT_COLUMNS(X)                           \
    X(backend, TEXT, config, KEY)                   \
    X(device, TEXT, config, VALUE)                  \
    X(model, TEXT, config, KEY)                     \
    X(params, INT, config, VALUE)                   \
    X(dtype, TEXT, config, KEY)                     \
    X(recompute, TEXT, config, KEY)                 \
    X(grad_dtype, TEXT, config, KEY)                \
    X(mode, TEXT, config, KEY)                      \
    X(reduction, TEXT, config, KEY)                 \
    X(effective_batch, INT, config, KEY)            \
    X(micro_batch, INT, config, SPLIT)              \
    X(arm, INT, config, SPLIT)                      \
    X(accum_steps, INT, config, VALUE)              \
    X(last_micro_batch, INT, config, VALUE)         \
    X(devices, INT, config, KEY)                    \
    X(sync, TEXT, config, KEY)                      \
    X(shard, TEXT, config, KEY)                     \
    X(step_ms_median, REAL, timed, VALUE)           \
    X(step_ms_ci_lo, REAL, timed, VALUE)            \
    X(step_ms_ci_hi, REAL, timed, VALUE)            \
    X(step_ms_p10, REAL, timed, VALUE)              \
    X(step_ms_p90, REAL, timed, VALUE)              \
    X(step_noise_pct, REAL, timed, VALUE)           \
    X(samples, INT, timed, VALUE)                   \
    X(comparison, TEXT, timed, VALUE)               \
    X(rounds, INT, timed, VALUE)                    \
    X(rounds_dropped, INT, timed, VALUE)            \
    X(round_ms, TEXT, timed, VALUE)                 \
    X(round_pass_ms, TEXT, timed, VALUE)            \
    X(vs_ref, REAL, timed, VALUE)                   \
    X(vs_ref_lo, REAL, timed, VALUE)                \
    X(vs_ref_hi, REAL, timed, VALUE)                \
    X(host_enqueue_ms, REAL, timed, VALUE)          \
    X(pass_ms, REAL, timed, VALUE)                  \
    X(samples_per_s, REAL, timed, VALUE)            \
    X(tokens_per_s, REAL, timed, VALUE)             \
    X(flops_per_step, REAL, config, VALUE)          \
    X(recompute_flops_per_step, REAL, config, VALUE) \
    X(tflops, REAL, timed, VALUE)                   \
    X(mfu_pct, REAL, timed, VALUE)                  \
    X(mfu_datasheet_pct, REAL, timed, VALUE)        \
    X(probe_tflops_before, REAL, timed, VALUE)      \
    X(probe_tflops_after, REAL, timed, VALUE)       \
    X(probe_drift_pct, REAL, timed, VALUE)          \
    X(probe_noise_pct, REAL, timed, VALUE)          \
    X(other_cpu_pct, REAL, timed, VALUE)            \
    X(steal_pct, REAL, timed, VALUE)                \
    X(sm_clock_mhz, REAL, timed, VALUE)             \
    X(clock_events, TEXT, timed, VALUE)             \
    X(dispatches_per_step, REAL, timed, VALUE)      \
    X(host_syncs_per_step, REAL, count, VALUE)      \
    X(gemm_ms_per_step, REAL, count, VALUE)         \
    X(gemm_shapes, TEXT, count, VALUE)              \
    X(grad_rel_err, REAL, check, VALUE)             \
    X(loss, REAL, check, VALUE)                     \
    X(loss_sum, REAL, check, VALUE)                 \
    X(mem_need_bytes, INT, config, VALUE)           \
    X(mem_peak_bytes, INT, timed, VALUE)            \
    X(mem_held_bytes, INT, timed, VALUE)            \
    X(kernels_per_step, REAL, trace, VALUE)         \
    X(launch_calls_per_step, REAL, trace, VALUE)    \
    X(gpu_busy_ms, REAL, trace, VALUE)              \
    X(gpu_busy_pct, REAL, trace, VALUE)             \
    X(idle_host_wait_pct, REAL, trace, VALUE)       \
    X(idle_gap_pct, REAL, trace, VALUE)             \
    X(launch_latency_us_median, REAL, trace, VALUE) \
    X(launch_latency_us_p90, REAL, trace, VALUE)    \
    X(cupti_step_ms, REAL, trace, VALUE)            \
    X(cupti_dropped, INT, trace, VALUE)             \
    X(forward_ms, REAL, trace, VALUE)               \
    X(backward_ms, REAL, trace, VALUE)              \
    X(optimizer_ms, REAL, trace, VALUE)             \
    X(idle_ms, REAL, trace, VALUE)                  \
    X(allreduce_calls_per_step, REAL, timed, VALUE) \
    X(allreduce_bytes_per_step, REAL, timed, VALUE) \
    X(comm_ms, REAL, timed, VALUE)                  \
    X(comm_exposed_ms, REAL, timed, VALUE)          \
    X(busbw_gbps, REAL, timed, VALUE)               \
    X(reduce_scatter_calls_per_step, REAL, timed, VALUE) \
    X(reduce_scatter_bytes_per_step, REAL, timed, VALUE) \
    X(allgather_calls_per_step, REAL, timed, VALUE) \
    X(allgather_bytes_per_step, REAL, timed, VALUE) \
    X(comm_wait_ms, REAL, timed, VALUE)             \
    X(rank_step_spread_pct, REAL, timed, VALUE)     \
    X(rank_weight_diff, REAL, check, VALUE)         \
    X(flags, TEXT, timed, VALUE)                    \
    X(grad_noise_scale, REAL, check, VALUE)         \
    X(grad_noise_scale_err, REAL, check, VALUE)     \
    X(noise_windows, INT, check, VALUE)             \
    X(grad_sq_micro, REAL, check, VALUE)            \
    X(grad_sq_window, REAL, check, VALUE)           \
    X(status, TEXT, config, VALUE)                  \
    X(note, TEXT, config, VALUE)

/* Storage per type. A REAL that was not measured is NAN and prints empty;
 * an INT that was not measured is -1 and prints empty. */
#define RESULT_TYPE_TEXT char
#define RESULT_TEXT_LEN 480

typedef struct result_row {
#define RESULT_FIELD_TEXT(name) char name[RESULT_TEXT_LEN];
#define RESULT_FIELD_INT(name) int64_t name;
#define RESULT_FIELD_REAL(name) double name;
#define RESULT_FIELD(name, type, pass, role) RESULT_FIELD_##type(name)
    RESULT_COLUMNS(RESULT_FIELD)
#undef RESULT_FIELD
#undef RESULT_FIELD_TEXT
#undef RESULT_FIELD_INT
#undef RESULT_FIELD_REAL
} result_row;

/* A row with every number unmeasured (NAN / -1) and empty text. */
void result_row_clear(result_row *r);

/* Appends a remark to the row's note, "; " after the ones before; one cut
 * to the note's size, or left out as it is full, ends the note in "...". */
void row_note(result_row *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* RESULT_COLUMNS as data, for code that walks the columns by their marks
 * (compare's matching, the report's grouping, the console table). */
typedef enum result_type { RESULT_IS_TEXT, RESULT_IS_INT, RESULT_IS_REAL } result_type;
typedef enum result_role { RESULT_KEY, RESULT_SPLIT, RESULT_VALUE } result_role;

typedef struct result_column {
    const char *name;
    result_type type;
    const char *pass;   /* "config", "timed", "check", "trace" */
    result_role role;
    size_t offset;      /* of the field in result_row */
} result_column;

extern const result_column result_columns[];
extern const int result_column_count;

/* The column called `name`, or NULL. */
const result_column *result_column_find(const char *name);
/* A field through its column: the text of a TEXT column, the number of an
 * INT or REAL one (an INT as a double: exact for every count we store). */
const char *result_text(const result_row *r, const result_column *c);
double result_number(const result_row *r, const result_column *c);
/* Equal in column c (unmeasured equals unmeasured). */
int result_column_equal(const result_row *a, const result_row *b, const result_column *c);

/* The same config: equal in every KEY and SPLIT column. */
int result_same_config(const result_row *a, const result_row *b);
/* The same config but for the split: equal in every KEY column. */
int result_same_series(const result_row *a, const result_row *b);
/* The same config but for one key column (by name): rows to set side by
 * side along that axis (a mode against another). */
int result_same_config_but(const result_row *a, const result_row *b, const char *column);
/* A config's second arm (arm 2: a micro-batch named twice, --micro 16,16,
 * an A/A check): the same config timed again. Only the A/A line and
 * section read it against its first arm (and the splits table lists it,
 * labelled); whatever picks, counts, ranks, pairs or pools configs takes
 * each config once, from its first arm. A macro: the run's result_row and
 * the report's csv_row both hold `arm`. */
#define RESULT_SECOND_ARM(r) ((r)->arm > 1)

/* Copies the columns one pass fills ("check": the gradient check and the
 * noise scale) from one row to another; the others stay as they are. */
void result_copy_pass(result_row *to, const result_row *from, const char *pass);

/* The KEY and SPLIT columns' names in CSV order, sep between them:
 * "backend, model, ..." for a sentence, "backend model ..." for the CSV's
 * `# config_key:` line. */
void result_key_names(char *out, size_t len, const char *sep);

/* The status vocabulary of the `status` column. */
#define STATUS_OK "ok"
#define STATUS_OOM "oom"
#define STATUS_SKIPPED "skipped"
#define STATUS_ERROR "error"

#endif
