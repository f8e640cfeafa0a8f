/* The most memory this process has held resident, from Linux's /proc: the
 * high-water mark VmHWM of /proc/self/status, which writing "5" to
 * /proc/self/clear_refs resets to the resident set of now (Linux 4.0 on).
 * It holds everything the process touched (the program and its libraries,
 * the BLAS threads' buffers, the data set), not only what the harness
 * allocated: the figure the exact need is checked against on the CPU. */
#ifndef ACCUBENCH_RESIDENT_PEAK_H
#define ACCUBENCH_RESIDENT_PEAK_H

#include <stddef.h>

/* Parses /proc/self/status's text: VmHWM in bytes into *bytes. Returns 0,
 * or -1 when the text has no such line. */
int resident_peak_parse(const char *proc_status, size_t *bytes);

/* Starts a new window: the mark falls to what is resident now. Returns 0,
 * or -1 where the kernel does not offer the reset (the mark then keeps the
 * whole run's peak, which reading reports as unmeasured). */
int resident_peak_reset(void);

/* The mark since the last reset, in bytes. Returns 0, or -1 where /proc is
 * missing or no reset succeeded (the figure would be the run's, not the
 * window's). */
int resident_peak_bytes(size_t *bytes);

#endif
