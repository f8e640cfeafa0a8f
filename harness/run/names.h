/* Names of the enumerations as the CLI, the profiles and the CSV spell
 * them, and their parsers: one table each. The execution modes have a
 * table of their own (modes.h). */
#ifndef ACCUBENCH_NAMES_H
#define ACCUBENCH_NAMES_H

#include "backend.h"
#include "dataset.h"
#include "model.h"
#include "modes.h"
#include "reduction.h"

/* Returns 0 and sets *out, or -1 when the name is unknown. The other axes
 * keep their names with their tables: dtype_table.h, modes.h, reduction.h. */
int optimizer_parse(const char *s, optimizer_kind *out);
const char *optimizer_name(optimizer_kind k);

#endif
