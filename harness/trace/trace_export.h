/* One step of a trace as Chrome trace-event JSON, for Perfetto
 * (ui.perfetto.dev) or chrome://tracing: no Nsight needed.
 *
 * Layout: process 1 "host" has a row for the NVTX ranges (tid 1), one for
 * host waits on the device (tid 2) and one per host thread for the launch
 * and other runtime/driver calls (tid 10 + thread id); process 2 "device"
 * has one row per stream (tid = stream id; on the CPU backend the
 * dispatches, tid 0). Every interval is a
 * complete event (ph "X", ts and dur in microseconds from the step's start,
 * pid, tid, name, cat); a flow (ph "s" on the host call, ph "f" with bp "e"
 * on the device record, one id per pair) joins each launch or runtime call to
 * the device work it issued. The CPU backend has no launch records (a
 * dispatch is its own launch), so its trace has no flows. */
#ifndef ACCUBENCH_TRACE_EXPORT_H
#define ACCUBENCH_TRACE_EXPORT_H

#include <stddef.h>

#include "trace.h"

/* Writes the records of step `step` (0-based, in the order of the "step"
 * ranges; -1: the last step) of recs[0..n) to `path`, through a temporary
 * and a rename so that a reader never sees half a file (atomic_file.h).
 * `label` (may be NULL) names the config in the file's metadata. Returns 0,
 * or -1 with a one-line reason in why. */
int trace_export_chrome(const char *path, const trace_record *recs, size_t n,
                        int step, const char *label, char *why, size_t why_len);

/* Whether `path` may be written as a trace: absent, empty, or a trace this
 * program wrote (it begins as trace_export_chrome begins). Anything else,
 * a results CSV or the --profile being read, would be lost to the rename. */
int trace_export_replaceable(const char *path);

#endif
