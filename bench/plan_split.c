#include "plan_split.h"

#include "plural.h"
#include "split.h"

/* The largest micro-batch up to max_micro whose split leaves no device
 * without a part of the last micro-batch: a smaller one can still reach E
 * where the largest cannot (E = 7 on 3 devices: 3 x 1, not 2 x 2). The
 * reason given is the largest's. */
static int largest_split(int effective, int max_micro, int devices, split *sp, char *why,
                         size_t n)
{
    int per_device = (effective + devices - 1) / devices;
    int micro = max_micro < per_device ? max_micro : per_device;
    if (split_make_sharded(effective, micro, devices, sp, why, (int)n) == 0)
        return 0;
    char ignored[200];
    for (int m = micro - 1; m >= 1; m--)
        if (split_make_sharded(effective, m, devices, sp, ignored, sizeof ignored) == 0)
            return 0;
    return -1;
}

/* "2 devices x 3 + 1 device x 4": the last micro-batch's parts where the
 * devices do not divide it (split_shard: near-equal, the larger last). */
static void write_ragged_parts(FILE *f, int examples, int devices)
{
    int small = examples / devices, larger = examples % devices;
    fprintf(f, "%d %s x %d + %d %s x %d", devices - larger,
            plural(devices - larger, "device", "devices"), small, larger,
            plural(larger, "device", "devices"), small + 1);
}

int plan_split_write(FILE *f, int effective, int max_micro, int devices, char *why, size_t n)
{
    split sp;
    if (largest_split(effective, max_micro, devices, &sp, why, n))
        return -1;
    int last_examples = sp.global - (sp.accum - 1) * sp.micro * sp.devices;
    int ragged = last_examples % sp.devices != 0;
    fprintf(f, "effective batch:    %d\n", sp.global);
    fprintf(f, "devices:            %d\n", sp.devices);
    fprintf(f, "micro-batch:        %d\n", sp.micro);
    fprintf(f, "accumulation steps: %d\n", sp.accum);
    if (ragged)
        fprintf(f, "last micro-batch:   %d or %d a device (its %d examples do not divide over "
                   "%d devices)\n", sp.last - 1, sp.last, last_examples, sp.devices);
    else if (sp.last != sp.micro)
        fprintf(f, "last micro-batch:   %d (the division is not whole)\n", sp.last);
    fprintf(f, "effective reached:  %d = ", sp.global);
    if (ragged) {
        if (sp.accum > 1)
            fprintf(f, "%d x %d x %d devices + ", sp.micro, sp.accum - 1, sp.devices);
        write_ragged_parts(f, last_examples, sp.devices);
    } else {
        if (sp.last != sp.micro)
            fprintf(f, "(%d x %d + %d)", sp.micro, sp.accum - 1, sp.last);
        else
            fprintf(f, "%d x %d", sp.micro, sp.accum);
        if (sp.devices > 1)
            fprintf(f, " x %d devices", sp.devices);
    }
    fprintf(f, "\n");
    return 0;
}
