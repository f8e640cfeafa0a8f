/* The process's resident high-water mark (resident_peak.h): the parser on
 * fake texts, and on this process a window that sees memory touched in it
 * and, after a reset, no longer the memory let go before it. */
#include <string.h>
#include <sys/mman.h>

#include "check.h"
#include "resident_peak.h"

static void test_parse(void)
{
    size_t bytes = 0;
    CHECK(resident_peak_parse("Name:\ttest\nVmPeak:\t  9000 kB\nVmHWM:\t    2068 kB\n"
                              "VmRSS:\t 2000 kB\n", &bytes) == 0);
    CHECK(bytes == 2068u * 1024u);
    CHECK(resident_peak_parse("Name:\ttest\nVmRSS:\t 2000 kB\n", &bytes) == -1);
    CHECK(resident_peak_parse("VmHWM:\t kB\n", &bytes) == -1);
}

/* 64 MiB touched then let go: the mark holds it until the reset. */
static void test_live(void)
{
    size_t before = 0, during = 0, after = 0, big = 64u << 20;
    CHECK(resident_peak_bytes(&before) == -1); /* no window opened yet */
    if (resident_peak_reset()) {
        printf("  (no /proc/self/clear_refs here: the window is not measured)\n");
        return;
    }
    CHECK(resident_peak_bytes(&before) == 0);
    /* mapped and unmapped directly: an allocator (a sanitizer's) may keep
     * freed memory */
    char *p = mmap(NULL, big, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(p != MAP_FAILED);
    if (p == MAP_FAILED)
        return;
    for (size_t i = 0; i < big; i += 4096)
        ((volatile char *)p)[i] = 1; /* every page touched, and not optimised away */
    munmap(p, big);
    CHECK(resident_peak_bytes(&during) == 0);
    /* the rest of the process may shrink a little meanwhile */
    CHECK(during >= big && during > before + big / 16 * 15);
    CHECK(resident_peak_reset() == 0);
    CHECK(resident_peak_bytes(&after) == 0);
    CHECK(after + big / 2 < during);
}

int main(void)
{
    test_parse();
    test_live();
    return check_finish("test_resident_peak");
}
