/* The sweep's row axes (sweep_axes, config.h) walked from their rows
 * alone: every row, whatever its axis, is an option of `accubench run`,
 * nests inside the one before it, takes its values from its option list
 * in order, and falls back to its `off` value where the list is empty or
 * it needs ranks the run lacks (a lever's, levers.h, from its row there).
 * A new axis is held to this by its row. */
#include <string.h>

#include "check.h"
#include "config.h"
#include "result_row.h"

static void set(run_options *o, const char *key, const char *value)
{
    char why[300];
    CHECK(options_set(o, key, value, why, sizeof why) == 0);
}

static int *values_of(run_options *o, int a)
{
    return (int *)(void *)((char *)o + sweep_axes[a].option->list);
}

static int *count_of(run_options *o, int a)
{
    return (int *)(void *)((char *)o + sweep_axes[a].option->count);
}

static int value_in(const config *c, int a)
{
    return *(const int *)(const void *)((const char *)c + sweep_axes[a].field);
}

/* One split on one rank, every axis given its table's first two rows (or
 * its one), listed in reverse so that the list's order, not the table's,
 * is what the walk follows. */
static void one_split(run_options *o, int lengths[SWEEP_AXES_MAX])
{
    options_defaults(o);
    set(o, "model", "tiny");
    set(o, "effective", "4");
    set(o, "micro", "2");
    set(o, "devices", "1");
    for (int a = 0; a < sweep_axes_n; a++) {
        const sweep_axis *ax = &sweep_axes[a];
        const axis *table = ax->option->ax;
        CHECK(table && table->count >= 1 && ax->option->cap >= 2);
        CHECK(sweep_axis_off(ax) >= 0 && sweep_axis_off(ax) < table->count);
        lengths[a] = table->count >= 2 ? 2 : 1;
        for (int i = 0; i < lengths[a]; i++)
            values_of(o, a)[i] = lengths[a] - 1 - i;
        *count_of(o, a) = lengths[a];
    }
}

/* Every combination once, the last axis the fastest: config n's place is
 * n written in the mixed radix of the axes' lengths. */
static void test_nesting(void)
{
    run_options o;
    int lengths[SWEEP_AXES_MAX], total = 1;
    one_split(&o, lengths);
    for (int a = 0; a < sweep_axes_n; a++)
        total *= lengths[a];
    config_iter it;
    config c;
    config_iter_start(&it, &o, 1);
    int n = 0;
    while (config_next(&it, &c)) {
        int rest = n;
        for (int a = sweep_axes_n - 1; a >= 0; a--) {
            CHECK(value_in(&c, a) == values_of(&o, a)[rest % lengths[a]]);
            rest /= lengths[a];
        }
        CHECK(c.opens == (n ? CONFIG_ROW : CONFIG_MODEL));
        n++;
    }
    CHECK(n == total && config_count(&o, 1) == total);
}

/* An axis whose list is empty runs its off value, and one that needs
 * ranks runs it on one process whatever its list. */
static void test_off(void)
{
    for (int a = 0; a < sweep_axes_n; a++) {
        run_options o;
        int lengths[SWEEP_AXES_MAX];
        one_split(&o, lengths);
        *count_of(&o, a) = 0;
        config_iter it;
        config c;
        int n = 0;
        config_iter_start(&it, &o, 1);
        while (config_next(&it, &c))
            n += value_in(&c, a) == sweep_axis_off(&sweep_axes[a]);
        CHECK(n == config_count(&o, 1) && n > 0);

        one_split(&o, lengths);
        int expected = 1;
        for (int b = 0; b < sweep_axes_n; b++)
            expected *= sweep_axis_ranks_only(&sweep_axes[b]) ? 1 : lengths[b];
        int ranks_only = sweep_axis_ranks_only(&sweep_axes[a]);
        config_iter_start(&it, &o, 0);
        n = 0;
        while (config_next(&it, &c)) {
            n++;
            if (ranks_only)
                CHECK(value_in(&c, a) == sweep_axis_off(&sweep_axes[a]) && !c.data_parallel);
        }
        CHECK(n == expected);
    }
}

/* Each axis is set by one option row, and no two axes share a list. */
static void test_options(void)
{
    for (int a = 0; a < sweep_axes_n; a++) {
        int rows = 0;
        for (int i = 0; i < run_option_table.count; i++)
            rows += run_option_table.defs[i].ctx == sweep_axes[a].option;
        CHECK(rows == 1);
        for (int b = 0; b < a; b++)
            CHECK(sweep_axes[b].option->list != sweep_axes[a].option->list &&
                  sweep_axes[b].field != sweep_axes[a].field &&
                  sweep_axes[b].column != sweep_axes[a].column);
    }
}

/* Each axis's value is a KEY column of the result row: compare matches
 * rows on it, the report groups a series by it, and the CSV's
 * `# config_key:` line names it. */
static void test_key_column(void)
{
    for (int a = 0; a < sweep_axes_n; a++) {
        int found = 0;
        for (int i = 0; i < result_column_count; i++)
            if (result_columns[i].offset == sweep_axes[a].column) {
                found++;
                CHECK(result_columns[i].role == RESULT_KEY &&
                      result_columns[i].type == RESULT_IS_TEXT);
            }
        CHECK(found == 1);
    }
}

/* Each lever (levers.h) is one axis of the sweep, its row pointing at the
 * lever's: the same table and column, so that the value a config takes
 * where the axis does not vary is the default its labels leave unsaid. */
static void test_levers(void)
{
    for (int i = 0; i < LEVER_COUNT; i++) {
        int found = 0;
        for (int a = 0; a < sweep_axes_n; a++) {
            const sweep_axis *ax = &sweep_axes[a];
            if (ax->lever != &levers[i])
                continue;
            found++;
            CHECK(ax->option->ax == levers[i].ax);
            CHECK(ax->column == result_column_find(levers[i].column)->offset);
            CHECK(sweep_axis_off(ax) == levers[i].off &&
                  sweep_axis_ranks_only(ax) == levers[i].ranks_only);
        }
        CHECK(found == 1);
    }
    /* and no other axis is one of their tables */
    for (int a = 0; a < sweep_axes_n; a++)
        for (int i = 0; i < LEVER_COUNT && !sweep_axes[a].lever; i++)
            CHECK(sweep_axes[a].option->ax != levers[i].ax);
}

int main(void)
{
    test_options();
    test_key_column();
    test_levers();
    test_nesting();
    test_off();
    return check_finish("test_sweep_axes");
}
