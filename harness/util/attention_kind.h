/* How a decoder's causal attention is arranged: one table
 * (attention_kind.c), a row per arrangement. `fused` is one op a pass
 * that keeps no scores (only each row's log-sum-exp); `unfused` is what
 * a backend without that op runs: the permutes, strided-batched GEMMs
 * and the causal softmax (harness/models/attention.h). A backend runs
 * `fused` where its ops table has the op, so the arrangement is a choice
 * of table, made once when the backend opens.
 *
 * Each backend that offers both reads an environment variable of its own
 * (ACCUBENCH_CPU_ATTENTION, ACCUBENCH_CUDA_ATTENTION) through the one
 * parser below, and states that variable and its default beside its
 * constructor's declaration. Not an axis of the sweep (yet): a run takes
 * one arrangement, and its CSV's `# attention:` line names the row. It
 * lives in util so that the backends, the metadata and the program read
 * the same rows. */
#ifndef ACCUBENCH_ATTENTION_KIND_H
#define ACCUBENCH_ATTENTION_KIND_H

#include <stddef.h>

#include "axis.h"

typedef int attention_kind; /* a row of attention_axis */

/* Every row has a name in code: a backend picks its ops table by it. */
enum { ATTENTION_FUSED = 0, ATTENTION_UNFUSED, ATTENTION_ROWS };

extern const axis attention_axis;
#define attention_name(k) axis_name(&attention_axis, (k))

/* The arrangement the environment variable `var` names: 0 with *out set
 * (dflt where var is unset), or -1 with, in why (when not NULL), the one
 * line "VAR='value': needs fused or unfused (unset it for DFLT, this
 * backend's default)". A set but empty variable is a bad value: a
 * misspelt assignment must not run the default unsaid. */
int attention_from_env(const char *var, attention_kind dflt, attention_kind *out, char *why,
                       size_t len);

#endif
