/* The `# key: value` lines at the top of a run's CSV: what ran, where,
 * with which settings, and which pass measured which columns. */
#ifndef ACCUBENCH_RUN_METADATA_H
#define ACCUBENCH_RUN_METADATA_H

#include "backend.h"
#include "csv_writer.h"
#include "options.h"

/* Where a run was started from: the program, its revision, the command. */
typedef struct run_context {
    const char *argv0;
    const char *git_rev;
    const char *command_line;
} run_context;

/* The CSV's `# attention:` value, into out: the row of the attention
 * table (attention_kind.h) b's ops table runs (its fused op, or the
 * unfused path where the table has none), "NAME (description)", the same
 * words for the run's line and for each dtype's (sweep_peak.c). */
const char *run_metadata_attention(const backend *b, char *out, size_t len);

/* note: how the backend was chosen ("" when it was named). */
void run_metadata_write(csv_writer *w, const run_options *o, const backend *b,
                        const run_context *ctx, const char *note);

#endif
