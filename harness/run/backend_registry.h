/* Choosing a backend by name, and the activity collector that goes with it. */
#ifndef ACCUBENCH_BACKEND_REGISTRY_H
#define ACCUBENCH_BACKEND_REGISTRY_H

#include <stddef.h>

#include "backend.h"
#include "collector.h"

/* which: "auto", "cpu" or "cuda". `auto` takes CUDA when a GPU answers and
 * the CPU otherwise, and says why in `note`. BK_OK, or an error with a
 * one-line reason in why. */
int backend_open(const char *which, dtype dt, backend **out, char *note, size_t note_len,
                 char *why, size_t why_len);

/* The device activity collector for b (CUPTI on CUDA), or NULL with the
 * reason in why: then the CPU-style dispatch records are used. */
collector *backend_collector(backend *b, char *why, size_t why_len);

/* Whether the CUDA backend was built into this program. */
int backend_have_cuda(void);

#endif
