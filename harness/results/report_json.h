/* RUN.json beside the report (report_json.c). */
#ifndef ACCUBENCH_REPORT_JSON_H
#define ACCUBENCH_REPORT_JSON_H

#include <stddef.h>
#include <stdio.h>

#include "report.h"

/* The record of in (a report_input *) as JSON into f: an atomic_writer
 * (atomic_file.h). Returns 0. */
int report_json_write(FILE *f, void *ctx, char *why, size_t why_len);

#endif
