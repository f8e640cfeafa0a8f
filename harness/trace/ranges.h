/* NVTX ranges in one domain named "accubench", nested run > config > step >
 * micro > forward/backward, and optimizer inside step. Compiled to nothing
 * where the NVTX3 headers are absent. When a recorder is attached, every
 * range is also recorded as a TRACE_RANGE (the trace pass and the export). */
#ifndef ACCUBENCH_RANGES_H
#define ACCUBENCH_RANGES_H

#include "trace.h"

void range_push(const char *name);
void range_pop(void);
/* The recorder that ranges also go to (NULL: none). */
void ranges_attach_recorder(trace_recorder *r);
trace_recorder *ranges_recorder(void);

#endif
