/* The activity-record array and its string table. */
#include "trace.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

uint64_t trace_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int trace_recorder_init(trace_recorder *r, size_t capacity)
{
    memset(r, 0, sizeof *r);
    r->records = calloc(capacity ? capacity : 1, sizeof *r->records);
    if (!r->records)
        return -1;
    r->capacity = capacity;
    r->current_step = -1;
    return 0;
}

void trace_recorder_free(trace_recorder *r)
{
    for (size_t i = 0; i < r->name_count; i++)
        free(r->names[i]);
    free(r->names);
    free(r->records);
    memset(r, 0, sizeof *r);
}

void trace_recorder_clear(trace_recorder *r)
{
    r->count = 0;
    r->dropped = 0;
    r->current_step = -1;
    r->range_depth = 0;
}

const char *trace_intern(trace_recorder *r, const char *name)
{
    if (!name)
        name = "?";
    for (size_t i = 0; i < r->name_count; i++)
        if (strcmp(r->names[i], name) == 0)
            return r->names[i];
    if (r->name_count == r->name_capacity) {
        size_t cap = r->name_capacity ? 2 * r->name_capacity : 64;
        char **grown = realloc(r->names, cap * sizeof *grown);
        if (!grown)
            return NULL;
        r->names = grown;
        r->name_capacity = cap;
    }
    char *copy = strdup(name);
    if (!copy)
        return NULL;
    r->names[r->name_count++] = copy;
    return copy;
}

int trace_add(trace_recorder *r, trace_kind kind, const char *name,
              uint64_t start_ns, uint64_t end_ns, uint32_t stream,
              uint32_t correlation)
{
    const char *interned = trace_intern(r, name);
    if (r->count == r->capacity || !interned) {
        r->dropped++;
        return -1;
    }
    trace_record *t = &r->records[r->count++];
    t->kind = kind;
    t->start_ns = start_ns;
    t->end_ns = end_ns;
    t->stream = stream;
    t->correlation = correlation;
    t->step = r->current_step;
    t->depth = kind == TRACE_RANGE ? r->range_depth : 0;
    t->name = interned;
    return 0;
}

void trace_range_push(trace_recorder *r, const char *name)
{
    uint64_t now = trace_now_ns();
    int depth = r->range_depth;
    if (trace_add(r, TRACE_RANGE, name, now, now, 0, 0) == 0 &&
        depth < (int)(sizeof r->open_ranges / sizeof r->open_ranges[0]))
        r->open_ranges[depth] = r->count - 1;
    else if (depth < (int)(sizeof r->open_ranges / sizeof r->open_ranges[0]))
        r->open_ranges[depth] = (size_t)-1;
    r->range_depth++;
}

void trace_range_pop(trace_recorder *r)
{
    if (r->range_depth == 0)
        return;
    r->range_depth--;
    int depth = r->range_depth;
    if (depth < (int)(sizeof r->open_ranges / sizeof r->open_ranges[0]) &&
        r->open_ranges[depth] != (size_t)-1)
        r->records[r->open_ranges[depth]].end_ns = trace_now_ns();
}
