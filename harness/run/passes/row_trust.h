/* Whether a row's figures can be trusted, and why not: its median's
 * interval, its MFU against the peak probed beside it, what else ran
 * meanwhile, and the flags (harness/results/row_flags.h) with the figures
 * behind them in the note. */
#ifndef ACCUBENCH_ROW_TRUST_H
#define ACCUBENCH_ROW_TRUST_H

#include "config_watch.h"
#include "measure.h"
#include "result_row.h"

/* The thresholds (docs/measuring.md). */
#define TRUST_MAX_DRIFT_PCT 10.0     /* the probes after vs before */
#define TRUST_MAX_MFU_PCT 100.0      /* of the higher probe: more is impossible */
/* Other processes and steal, each of all CPUs' time. Measured on a 2-core
 * VM (docs/measuring.md): a loop busy 10% of one core (3-4.6% of the CPUs)
 * slowed model S at 16x4 by 7-26%, past the comparison's 2% threshold; a
 * quiet machine reads 0-0.9%. Steal takes our own CPUs' time: the same. */
#define TRUST_MAX_OTHER_CPU_PCT 2.0
#define TRUST_MAX_STEAL_PCT 2.0
/* A round's sample is in whole clock ticks: a round is judged disturbed only
 * past this many ticks as well, so that one stray tick of a short round
 * (1.7% of a 0.3 s round on 2 CPUs) drops nothing. */
#define TRUST_MIN_TICKS 3.0
/* On a backend whose host computes each op (the CPU), a step cannot take
 * much less than its K passes; shorter by more than this share, one of the
 * two timings was disturbed. Not less: a pass timed alone starts on cold
 * caches and a sleeping thread pool, and on a quiet 2-core machine model S
 * at 8x8 took 106.8 ms a step against 8 x 14.91 ms single passes (10.4%
 * shorter, undisturbed); the disturbed run the check is for was 21% short
 * (541 ms against 685). */
#define TRUST_NAIVE_SLACK 0.20

typedef struct trust_limits {
    int adaptive;          /* no --steps: min-samples applies */
    int min_samples;
    double max_noise_pct;
    int passes_serial;     /* BK_CAP_DISPATCH_IS_DEVICE_WORK: no overlap */
    int rounds;            /* timed in interleaved rounds: the rounds' agreement,
                            * not a sample count, says whether it is noisy */
} trust_limits;

/* The limits of a run: its options and what its backend is. */
trust_limits trust_limits_of(const measure_options *mo, const backend *b);

/* The run's metadata on the probes, the samplers and the thresholds. */
struct csv_writer;
void trust_meta(struct csv_writer *csv, const config_watch *w);

/* The interval, the probes (MFU against the higher), the disturbance
 * columns from the marks taken before and after the timed steps, then the
 * flags (row_classify). */
void row_fill_trust(result_row *r, const step_timing *t, const watch_mark *before,
                    const watch_mark *after, const trust_limits *lim);

/* Sets r->flags from the row's own columns and appends the figures behind
 * each flag to its note. */
void row_classify(result_row *r, const trust_limits *lim);

#endif
