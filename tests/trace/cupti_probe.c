/* The CUPTI collector without a workload: where CUPTI cannot run (no GPU,
 * no driver) create() must fail with a reason that names the CUPTI call;
 * where it can, start() and stop() must work and deliver no device work.
 * Prints one line; exit 0 on either clean outcome. Built only where nvcc is
 * (see the CUDA probes in mk/tests.mk), run by tests/e2e_cupti_absent.sh. */
#include <stdio.h>
#include <string.h>

#include "backend.h"
#include "collector.h"
#include "cupti_collector.h"
#include "trace.h"

int main(void)
{
    char why[400] = "";
    collector *c = NULL;
    int rc = cupti_collector_create(&c, why, sizeof why);
    if (rc != BK_OK) {
        int named = strstr(why, "CUPTI") != NULL && strstr(why, "cupti") != NULL;
        printf("cupti: unavailable (%s)\n", why);
        return c == NULL && named ? 0 : 1;
    }
    /* A second collector in the same process is refused, not corrupted. */
    collector *second = NULL;
    char why2[400] = "";
    int rc2 = cupti_collector_create(&second, why2, sizeof why2);
    trace_recorder rec;
    if (trace_recorder_init(&rec, 1024) != 0)
        return 1;
    int ok = rc2 != BK_OK && second == NULL;
    if (c->ops->start(c) != BK_OK) {
        printf("cupti: start failed: %s\n", c->error);
        ok = 0;
    } else if (c->ops->stop(c, &rec) != BK_OK) {
        printf("cupti: stop failed: %s\n", c->error);
        ok = 0;
    } else {
        size_t device = 0;
        for (size_t i = 0; i < rec.count; i++)
            device += rec.records[i].kind == TRACE_KERNEL;
        printf("cupti: available; %zu records, %zu kernels, %llu dropped\n", rec.count,
               device, c->dropped);
        ok = ok && device == 0;
    }
    c->ops->destroy(c);
    trace_recorder_free(&rec);
    return ok ? 0 : 1;
}
