/* The recompute axis in the sweep: its option row (default none, a list,
 * an unknown value refused with the known ones), and config_iter walking
 * it inside sync, each config's model spec carrying its value. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "config.h"

static void test_option(void)
{
    run_options o;
    char why[400];
    options_defaults(&o);
    CHECK(o.n_recomputes == 1 && o.recomputes[0] == RECOMPUTE_NONE);
    CHECK(options_set(&o, "recompute", "block,gelu", why, sizeof why) == 0);
    CHECK(o.n_recomputes == 2 && o.recomputes[0] == RECOMPUTE_BLOCK &&
          o.recomputes[1] == RECOMPUTE_GELU);
    CHECK(options_set(&o, "recompute", "gelu,everything", why, sizeof why) == -1);
    char known[200], want[300];
    snprintf(want, sizeof want, "unknown recompute 'everything' (known: %s)",
             axis_names(&recompute_axis, known, sizeof known, ", "));
    CHECK(strstr(why, want) != NULL);
    CHECK(o.n_recomputes == 2); /* the list before stays */
}

/* model x E x micro x mode x recompute: each value once per row of the
 * other axes, innermost, the model made once. */
static void test_iteration(void)
{
    run_options o;
    char why[400];
    options_defaults(&o);
    CHECK(options_set(&o, "model", "tiny,gpt-tiny", why, sizeof why) == 0);
    CHECK(options_set(&o, "effective", "4", why, sizeof why) == 0);
    CHECK(options_set(&o, "micro", "1,4", why, sizeof why) == 0);
    CHECK(options_set(&o, "mode", "async,sync", why, sizeof why) == 0);
    CHECK(options_set(&o, "recompute", "none,gelu,block", why, sizeof why) == 0);
    config_iter it;
    config c;
    config_iter_start(&it, &o, 0);
    int n = 0, models = 0, seen[RECOMPUTE_ROWS] = {0};
    while (config_next(&it, &c)) {
        CHECK(c.recompute == n % 3); /* the innermost axis */
        seen[c.recompute]++;
        models += c.opens == CONFIG_MODEL;
        model_spec s = config_model_spec(&c);
        CHECK(s.recompute == c.recompute && s.kind == c.model->kind);
        CHECK(strcmp(s.name, c.model->name) == 0);
        n++;
    }
    CHECK(n == 2 * 2 * 2 * 3 && models == 2);
    CHECK(seen[RECOMPUTE_NONE] == 8 && seen[RECOMPUTE_GELU] == 8 && seen[RECOMPUTE_BLOCK] == 8);
    CHECK(config_count(&o, 0) == n);
    /* Options made by hand with no value: none, one config a row. */
    o.n_recomputes = 0;
    CHECK(config_count(&o, 0) == 8);
}

int main(void)
{
    test_option();
    test_iteration();
    return check_finish("test_recompute_sweep");
}
