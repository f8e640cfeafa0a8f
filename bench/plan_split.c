#include "plan_split.h"

#include "plural.h"
#include "split.h"

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
    if (split_make_sharded_largest(effective, max_micro, devices, &sp, why, (int)n))
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
