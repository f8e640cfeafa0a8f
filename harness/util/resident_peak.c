#include "resident_peak.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether a reset has succeeded in this process: without one the mark is
 * the whole run's. */
static int window_started;

int resident_peak_parse(const char *proc_status, size_t *bytes)
{
    const char *line = strstr(proc_status, "VmHWM:");
    if (!line)
        return -1;
    char *end;
    unsigned long long kib = strtoull(line + strlen("VmHWM:"), &end, 10);
    if (end == line + strlen("VmHWM:"))
        return -1;
    *bytes = (size_t)kib * 1024u; /* the kernel counts in kB of 1024 bytes */
    return 0;
}

int resident_peak_reset(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (!f)
        return -1;
    int ok = fputs("5", f) >= 0;
    ok &= fclose(f) == 0;
    window_started |= ok;
    return ok ? 0 : -1;
}

int resident_peak_bytes(size_t *bytes)
{
    if (!window_started)
        return -1;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char text[4096];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    return resident_peak_parse(text, bytes);
}
