/* The A/A check in words: one config timed twice (arms 1 and 2 of one
 * comparison), arm 2 over arm 1 by the rule. One producer of each
 * sentence for every place that states it (the report's Markdown and
 * HTML, RUN.json, the console of `accubench report`, which make bench
 * prints last, and the run's summary), so that none words or rounds it
 * apart from the others. */
#ifndef ACCUBENCH_AA_CHECK_H
#define ACCUBENCH_AA_CHECK_H

#include <stddef.h>

#include "csv_read.h"

/* "S, E = 64, 16x4 (async, sum reduction, fp32, cpu): arm 2 / arm 1 =
 * 1.005x [0.970..1.041], not yet separated (...); the rule held (...)."
 * (paired_aa_text), into out. */
void aa_sentence(const csv_row *one, const csv_row *two, char *out, size_t len);

/* 1 where the rule called the pair apart (faster or slower): a config
 * against itself, so the rounds favoured one arm on this run. */
int aa_failed(const csv_row *one, const csv_row *two);

/* The command that times the pair again beside the rest of its series
 * (rows[0..n) sharing one's key columns that ran, each micro-batch as the
 * run named it, the pair's twice): "accubench run --backend cpu --model S
 * --effective 64 --micro 64,16,16,8 --mode async --dtype fp32", with
 * every lever the series set and, on several devices, mpirun before it. */
void aa_recheck_command(const csv_row *rows, size_t n, const csv_row *one, char *out,
                        size_t len);

/* What every output that states a failed pair starts its line with: make
 * bench repeats these lines as its console's last (scripts/bench.sh). */
#define AA_FAILED_LEAD "A/A check FAILED"

/* The one line a failed pair gets wherever it is said: "A/A check FAILED
 * for model S at effective batch 64 (16x4; async, ...): arm 2 / arm 1 =
 * 1.06x [1.03..1.09], slower. This model's verdicts at this effective
 * batch may carry a bias of that size; re-check: accubench run ...". */
void aa_failed_line(const csv_row *rows, size_t n, const csv_row *one, const csv_row *two,
                    char *out, size_t len);

#endif
