/* Every axis of the sweep through its one descriptor (axis.h): each row's
 * name parses back to its row, the names are unique and filled in, the
 * lists and the metadata are made from the rows, an unknown name is
 * refused with the rows it could have been. Looped over the tables: a row
 * added to any of them is checked here with no line of this file. */
#include <stdio.h>
#include <string.h>

#include "attention_kind.h"
#include "check.h"
#include "dtype_table.h"
#include "grad_dtype.h"
#include "modes.h"
#include "optimizer.h"
#include "recompute.h"
#include "reduction.h"
#include "shard_modes.h"
#include "sync_modes.h"

static void check_axis(const axis *a)
{
    char list[1024], why[1200];
    axis_names(a, list, sizeof list, ", ");
    CHECK(a->count > 0);
    for (int i = 0; i < a->count; i++) {
        const axis_row *r = axis_row_at(a, i);
        CHECK(r && r->name && *r->name && r->description && *r->description);
        int back = -1;
        CHECK(axis_parse(a, NULL, r->name, &back, why, sizeof why) == 0 && back == i);
        CHECK(strstr(list, r->name) != NULL);
        for (int j = 0; j < i; j++)
            CHECK(strcmp(axis_name(a, j), r->name) != 0);
        CHECK(strcmp(r->name, AXIS_ALL) != 0); /* a list's word for every row */
        char line[512], want[512];
        axis_describe(a, &i, 1, line, sizeof line);
        snprintf(want, sizeof want, "%s (%s)", r->name, r->description);
        CHECK(strcmp(line, want) == 0);
    }
    CHECK(axis_row_at(a, a->count) == NULL && axis_row_at(a, -1) == NULL);
    CHECK(strcmp(axis_name(a, a->count), "?") == 0);
    int out = 7;
    CHECK(axis_parse(a, NULL, "no-such-row", &out, why, sizeof why) == -1 && out == 7);
    char want[1200];
    snprintf(want, sizeof want, "unknown %s 'no-such-row' (known: %s)", a->what, list);
    CHECK(strcmp(why, want) == 0);
    CHECK(axis_parse(a, "--key", "", &out, why, sizeof why) == -1 &&
          strncmp(why, "unknown --key ''", 16) == 0);
}

/* Two rows described: "; " between them; a short buffer is cut, never
 * overrun. */
static void test_describe_two(void)
{
    int both[] = {0, mode_axis.count - 1};
    char line[512], cut[12];
    axis_describe(&mode_axis, both, 2, line, sizeof line);
    CHECK(strstr(line, "); ") != NULL);
    axis_describe(&mode_axis, both, 2, cut, sizeof cut);
    CHECK(strlen(cut) == sizeof cut - 1 && strncmp(line, cut, sizeof cut - 1) == 0);
}

int main(void)
{
    const axis *axes[] = {&mode_axis, &sync_axis, &shard_axis, &reduction_axis, &dtype_axis,
                          &optimizer_axis, &optimizer_at_axis, &recompute_axis,
                          &grad_dtype_axis, &attention_axis};
    for (size_t i = 0; i < sizeof axes / sizeof axes[0]; i++)
        check_axis(axes[i]);
    test_describe_two();
    return check_finish("test_axis");
}
