/* One row of the sweep before and after its config runs (sweep_row.c). */
#ifndef ACCUBENCH_SWEEP_ROW_H
#define ACCUBENCH_SWEEP_ROW_H

#include "config.h"
#include "result_row.h"
#include "sweep_state.h"

/* The config columns of r for c (its row cleared first). */
void sweep_row_fill(result_row *r, const sweep *s, const config *c);
/* Whether r's config fits the cap and the device; 0 with why in its note. */
int sweep_row_fits(const sweep *s, result_row *r);
/* The progress line of the config r is for. */
void sweep_row_progress(sweep *s, const result_row *r);
/* The config columns of r for c (its row cleared first). */
void sweep_row_fill(result_row *r, const sweep *s, const config *c);
/* Whether r's config fits the cap and the device; 0 with why in its note. */
int sweep_row_fits(const sweep *s, result_row *r);
/* The progress line of the config r is for. */
void sweep_row_progress(sweep *s, const result_row *r);
/* The config columns of r for c and its progress line; 1 when c can run,
 * 0 when r is final (skipped, oom, or its data could not be made). */
int sweep_row_start(sweep *s, const sweep_place *p, const config *c, result_row *r);
/* The current config finished with r: the progress told, then r written
 * (the console table, the CSV); 0, or -1 when the CSV could not be written
 * or the device is lost. */
int sweep_row_emit(sweep *s, const result_row *r);
/* r written, the progress told already (progress_config_done_marked). */
int sweep_row_write(sweep *s, const result_row *r);

#endif
