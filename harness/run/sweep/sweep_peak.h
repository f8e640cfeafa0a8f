/* The device's peak GEMM rate in each dtype of the run, measured before
 * the configs, and the metadata lines that describe one dtype. */
#ifndef ACCUBENCH_SWEEP_PEAK_H
#define ACCUBENCH_SWEEP_PEAK_H

#include "options.h"
#include "sweep_state.h"

/* For each dtype of the run in order, the backend switched to it: its
 * peak into s->peak_tflops (NAN where it failed, counted as a failure),
 * and its lines (the peak, its shape and memory, the datasheet rate, the
 * attention and library the backend runs in it, how the dtype was
 * chosen: dtype_note). The last dtype's go under their plain names and
 * each earlier one's as NAME_DTYPE ("peak_gemm_tflops_fp32"), as an
 * appended file keeps them (csv_existing.c), where the report finds
 * them. The backend is left in the run's first dtype. */
void sweep_peaks(sweep *s, const run_options *o, const char *dtype_note);

#endif
