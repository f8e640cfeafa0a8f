/* The model kinds there are, and the names a person gives a model: a preset
 * (tiny, S, ...) or a kind and its shape (mlp:hidden=2048,layers=6,
 * classes=1000). Adding a kind is one file and one row in registry.c. */
#ifndef ACCUBENCH_REGISTRY_H
#define ACCUBENCH_REGISTRY_H

#include <stddef.h>

#include "model_kind.h"

/* Every kind, in the table's order; *count is set to how many. */
const model_kind *const *model_kinds(int *count);
/* The kind named `name` ("mlp"), or NULL. */
const model_kind *model_kind_find(const char *name);

/* A preset name or kind:key=value,... (',' or ';' between the keys, any
 * order, every key once). 0 and *out, or -1 with a one-line reason naming
 * the text. */
int model_spec_parse(const char *text, model_spec *out, char *why, size_t why_len);

/* A comma list of models, custom shapes among them: a key=value item
 * continues the shape before it. Returns the count (at most max), or -1
 * with a reason. */
int model_spec_list_parse(const char *list, model_spec *out, int max, char *why,
                          size_t why_len);

/* "tiny, S, M, L, XL; or mlp:hidden=N,layers=N,classes=N" for messages
 * and the usage text. */
const char *model_names(void);

#endif
