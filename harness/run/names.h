/* Names of the enumerations as the CLI, the profiles and the CSV spell
 * them, and their parsers: one table each. */
#ifndef ACCUBENCH_NAMES_H
#define ACCUBENCH_NAMES_H

#include "backend.h"
#include "dataset.h"
#include "model.h"
#include "reduction.h"

/* Each returns 0 and sets *out, or -1 when the name is unknown (the
 * dtype's name and parser are in dtype_table.h). */
int mode_parse(const char *s, exec_mode *out);
int optimizer_parse(const char *s, optimizer_kind *out);
const char *optimizer_name(optimizer_kind k);

/* "async, sync, graph, ..." etc. for error messages. */
const char *mode_names(void);

#endif
