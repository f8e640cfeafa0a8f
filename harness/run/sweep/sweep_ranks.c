/* The ranks' settling before the first config (sweep_ranks.h). */
#include "sweep_ranks.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "config.h"
#include "cpu_sample.h"
#include "dp_check.h"

void sweep_ranks_share_pids(comm *world)
{
    int n = world->size;
    double *ids = calloc((size_t)n, sizeof *ids);
    long *pids = calloc((size_t)n, sizeof *pids);
    if (ids && pids) {
        ids[world->rank] = (double)getpid();
        if (world->ops->host_allreduce(world, ids, n, COMM_SUM) == 0) {
            for (int i = 0; i < n; i++)
                pids[i] = (long)ids[i];
            cpu_sample_set_run(pids, n);
        }
    }
    free(ids);
    free(pids);
}

int sweep_ranks_agree(sweep *s, const run_options *o)
{
    int mine = config_fingerprint(o, 1);
    if (dp_agree_all(s->world, mine == dp_agree_root_int(s->world, mine)))
        return 1;
    if (s->writer)
        fprintf(stderr, "accubench: the ranks were started with other sweeps (another rank's "
                        "configs are not rank 0's): give every rank the same options "
                        "(--mem-cap may differ)\n");
    return 0;
}
