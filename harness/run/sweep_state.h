/* What the configs of one sweep share: the options, the device, the
 * collector, the CSV being written, the measured peak. Private to run/. */
#ifndef ACCUBENCH_SWEEP_STATE_H
#define ACCUBENCH_SWEEP_STATE_H

#include <signal.h>

#include "backend.h"
#include "collector.h"
#include "csv_writer.h"
#include "options.h"
#include "progress.h"

typedef struct sweep {
    const run_options *o;
    backend *b;
    collector *col;
    csv_writer csv;
    double peak_tflops;
    int trace_written;
    int failures;
    const volatile sig_atomic_t *stop; /* set by SIGINT: finish no more configs */
    progress *progress;                /* NULL: none */
} sweep;

#endif
