/* Names of the enumerations as the CLI, the profiles and the CSV spell
 * them, and their parsers: one table each. The execution modes have a
 * table of their own (modes.h). */
#ifndef ACCUBENCH_NAMES_H
#define ACCUBENCH_NAMES_H

#include "backend.h"
#include "dataset.h"
#include "model.h"
#include "modes.h"

/* Each returns 0 and sets *out, or -1 when the name is unknown. */
int dtype_parse(const char *s, dtype *out);
int reduction_parse(const char *s, reduction *out);
int optimizer_parse(const char *s, optimizer_kind *out);
const char *optimizer_name(optimizer_kind k);

/* "fp32, tf32, bf16" etc. for error messages. */
const char *dtype_names(void);
const char *reduction_names(void);

#endif
