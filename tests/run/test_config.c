/* The sweep's configs from the options (config.h): every combination of
 * the axes once, in the sweep's order, each opening the levels it is the
 * first of; a micro-batch wider than a device's share a skipped row when
 * named, passed over when pow2 made it; a model's configs alone on one
 * device. */
#include <string.h>

#include "check.h"
#include "config.h"

static void set(run_options *o, const char *key, const char *value)
{
    char why[300];
    CHECK(options_set(o, key, value, why, sizeof why) == 0);
}

/* Every config once, in order, and the levels each opens. */
static void test_one_process(void)
{
    run_options o;
    options_defaults(&o);
    set(&o, "model", "tiny,S");
    set(&o, "effective", "8,6");
    set(&o, "micro", "2,4");
    set(&o, "mode", "async,sync");
    set(&o, "reduction", "sum,no-scale");
    config_iter it;
    config c;
    config_iter_start(&it, &o, 0);
    int n = 0, models = 0, batches = 0, last_e = 0;
    while (config_next(&it, &c)) {
        n++;
        models += c.opens == CONFIG_MODEL;
        batches += c.opens <= CONFIG_BATCH;
        CHECK(c.opens <= CONFIG_DEVICES || c.sp.global == last_e);
        last_e = c.sp.global;
        CHECK(c.sync == SYNC_WINDOW && !c.data_parallel && c.sp.devices == 1);
        CHECK(c.unsplittable[0] == '\0');
    }
    CHECK(n == 2 * 2 * 2 * 2 * 2 && models == 2 && batches == 4);
    CHECK(config_count(&o, 0) == n);
}

/* Devices and sync modes: a micro-batch wider than a device's share of the
 * batch is a skipped row with the reason; each device count opens a
 * level; alone, a model has one device and no sync. */
static void test_devices(void)
{
    run_options o;
    options_defaults(&o);
    set(&o, "model", "tiny");
    set(&o, "effective", "8");
    set(&o, "micro", "2,8");
    set(&o, "devices", "1,2");
    set(&o, "sync", "micro,window");
    config_iter it;
    config c;
    config_iter_start(&it, &o, 1);
    int n = 0, device_levels = 0;
    int unsplittable = 0;
    while (config_next(&it, &c)) {
        n++;
        device_levels += c.opens <= CONFIG_DEVICES;
        CHECK(c.data_parallel);
        /* micro 8 named on 2 devices: a row skipped with the reason */
        if (c.sp.micro > 8 / c.sp.devices) {
            unsplittable++;
            CHECK(strstr(c.unsplittable, "larger than the 4 examples a device takes") != NULL);
        }
    }
    CHECK(n == (2 + 2) * 2 && device_levels == 2 && unsplittable == 2);
}

/* Skipping the rest of a model or a device count goes on at the next. */
static void test_skip(void)
{
    run_options o;
    options_defaults(&o);
    set(&o, "model", "tiny,S");
    set(&o, "effective", "8,4");
    set(&o, "micro", "2,4");
    config_iter it;
    config c;
    config_iter_start(&it, &o, 0);
    CHECK(config_next(&it, &c) && c.model_index == 0 && c.opens == CONFIG_MODEL);
    config_iter_skip(&it, CONFIG_MODEL);
    CHECK(config_next(&it, &c) && c.model_index == 1 && c.opens == CONFIG_MODEL);
    int n = 1;
    while (config_next(&it, &c))
        n++;
    CHECK(n == 4);

    /* A device count passed over: the next config opens the next count,
     * not the model again (its ranks would make the model twice). */
    set(&o, "model", "tiny");
    set(&o, "devices", "1,2");
    config_iter_start(&it, &o, 1);
    CHECK(config_next(&it, &c) && c.opens == CONFIG_MODEL && c.sp.devices == 1);
    config_iter_skip(&it, CONFIG_DEVICES);
    CHECK(config_next(&it, &c) && c.opens == CONFIG_DEVICES && c.sp.devices == 2);
}

/* pow2's powers past a device's share are passed over unsaid; a size the
 * user named is a row. At -np 7, E 10 (a share of 2): micro 1 and 2, and
 * micro 3 skipped with its reason. */
static void test_share(void)
{
    run_options o;
    options_defaults(&o);
    set(&o, "model", "tiny");
    set(&o, "effective", "10");
    set(&o, "devices", "7");
    set(&o, "sync", "window");
    set(&o, "micro", "1,2,3");
    config_iter it;
    config c;
    config_iter_start(&it, &o, 1);
    int n = 0, skipped_3 = 0;
    while (config_next(&it, &c)) {
        n++;
        if (c.sp.micro == 3)
            skipped_3 = strstr(c.unsplittable, "micro-batch 3 is larger than the 2 examples") != NULL;
        CHECK(c.sp.last >= 1 && c.sp.accum >= 1); /* the skipped row is a whole row */
    }
    CHECK(n == 3 && skipped_3);
    set(&o, "micro", "pow2");
    CHECK(config_count(&o, 1) == 2); /* 1 and 2; 4 and 8 past the share */
}

int main(void)
{
    test_one_process();
    test_devices();
    test_share();
    test_skip();
    return check_finish("test_config");
}
