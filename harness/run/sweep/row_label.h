/* How a config's row is named for people: the progress line, the trace
 * file's label, the console table's note and the run's summary spell it
 * one way, so that rows that differ only in a lever read apart. */
#ifndef ACCUBENCH_ROW_LABEL_H
#define ACCUBENCH_ROW_LABEL_H

#include <stddef.h>

#include "result_row.h"

/* The levers that set r apart where they are not the default, as
 * "recompute block shard optimizer grad bf16" ("" for none). */
void row_label_levers(const result_row *r, char *out, size_t len);

/* "gpt-tiny fp32 K=2: 8+4 async sum recompute block grad bf16": the config
 * r is for, its split as the table writes it (split_text.h: never 8x2 for
 * 8+4), the sync and the levers. */
void row_label_of(const result_row *r, char *out, size_t len);
/* The same with the model named `model` (the console table's spelling of
 * a long custom shape: the run's summary lines up under the table). */
void row_label_named(const result_row *r, const char *model, char *out, size_t len);

#endif
