/* The /proc parsers behind the disturbance columns (cpu_sample.h), on fake
 * texts: other processes' share is the machine's busy time less ours. */
#include <string.h>

#include "check.h"
#include "cpu_sample.h"

static const char STAT_A[] =
    "cpu  1000 100 200 5000 50 10 20 30 7 0\n"
    "cpu0 500 50 100 2500 25 5 10 15 7 0\n"
    "intr 12345 0 0\n";
/* 400 ticks later over 2 CPUs: busy +300 (user +250, system +50), steal +20,
 * idle +80 */
static const char STAT_B[] =
    "cpu  1250 100 250 5080 50 10 20 50 9 0\n"
    "cpu0 625 50 125 2540 25 5 10 25 9 0\n";

static void test_stat(void)
{
    cpu_sample a, b;
    CHECK(cpu_stat_parse(STAT_A, &a) == 0);
    CHECK(a.busy == 1000 + 100 + 200 + 10 + 20); /* guest (7) is inside user */
    CHECK(a.steal == 30 && a.total == a.busy + 5000 + 50 + 30);
    CHECK(cpu_stat_parse(STAT_B, &b) == 0);
    a.self = 100;
    b.self = 200; /* we used 100 of the 300 busy ticks */
    double other, steal;
    CHECK(cpu_sample_between(&a, &b, &other, &steal) == 0);
    CHECK_NEAR(other, 100.0 * 200 / 400, 1e-12);
    CHECK_NEAR(steal, 100.0 * 20 / 400, 1e-12);
    /* ours a tick ahead of the machine's: other is 0, never negative */
    b.self = 450;
    CHECK(cpu_sample_between(&a, &b, &other, &steal) == 0 && other == 0);
    CHECK(cpu_sample_between(&a, &a, &other, &steal) == -1); /* no tick passed */
}

static void test_stat_bad(void)
{
    cpu_sample s;
    CHECK(cpu_stat_parse("cpu0 1 2 3 4 5 6 7 8\n", &s) == -1);   /* no aggregate line */
    CHECK(cpu_stat_parse("cpu  1 2 3 4 5 6 7\ncpu0 1\n", &s) == -1); /* no steal field */
    CHECK(cpu_stat_parse("cpu  1 2 3 x 5 6 7 8\n", &s) == -1);
    CHECK(cpu_stat_parse("cpu  1 2 3 -4 5 6 7 8\n", &s) == -1);
    CHECK(cpu_stat_parse("", &s) == -1);
    /* the aggregate line need not come first */
    CHECK(cpu_stat_parse("btime 1\ncpu\t1 2 3 4 5 6 7 8\n", &s) == 0 && s.steal == 8);
}

static void test_self(void)
{
    double t = 0;
    /* a command name with blanks and a ')' in it */
    const char *self = "4242 (a (b) c) R 1 2 3 4 5 6 7 8 9 10 111 222 0 0 20 0 3 0 99\n";
    CHECK(self_stat_parse(self, &t) == 0 && t == 333);
    CHECK(self_stat_parse("4242 (x) R 1 2 3\n", &t) == -1); /* cut short */
    CHECK(self_stat_parse("no parenthesis here", &t) == -1);
}

static void test_live(void)
{
    /* /proc on this machine: both readings parse and time only grows */
    cpu_sample a, b;
    if (cpu_sample_now(&a) != 0)
        return; /* not Linux: not measured, nothing to check */
    volatile double x = 0;
    for (int i = 0; i < 20000000; i++)
        x += i;
    CHECK(cpu_sample_now(&b) == 0);
    CHECK(b.total >= a.total && b.self >= a.self && b.busy >= a.busy);
}

int main(void)
{
    test_stat();
    test_stat_bad();
    test_self();
    test_live();
    return check_finish("test_cpu_sample");
}
