/* A model's spec by name, for the tests: a CHECK fails (and the reason is
 * printed) when the registry refuses the name. Include after check.h. */
#ifndef ACCUBENCH_TEST_SPEC_H
#define ACCUBENCH_TEST_SPEC_H

#include <stdio.h>

#include "registry.h"

static inline model_spec test_spec(const char *name)
{
    model_spec s;
    char why[300];
    int rc = model_spec_parse(name, &s, why, sizeof why);
    CHECK(rc == 0);
    if (rc)
        fprintf(stderr, "  %s\n", why);
    return s;
}

#endif
