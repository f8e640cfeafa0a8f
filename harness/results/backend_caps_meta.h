/* The `# backend_caps:` metadata line of a run's CSV: what the backend that
 * ran can do, as words separated by spaces ("none" when nothing). The run
 * writes it from backend.caps (run_metadata.c); the results side, which
 * never sees backend.h, reads it (report_findings.c). Files from before the
 * line have none: their readers fall back to what those files meant. */
#ifndef ACCUBENCH_BACKEND_CAPS_META_H
#define ACCUBENCH_BACKEND_CAPS_META_H

#define BACKEND_CAPS_KEY "backend_caps"
/* BK_CAP_DISPATCH_IS_DEVICE_WORK: the host computes each op as it issues it. */
#define BACKEND_CAPS_DISPATCH_IS_DEVICE_WORK "dispatch-is-device-work"
/* BK_CAP_SHARES_HOST_MEMORY: device memory is the host's. */
#define BACKEND_CAPS_SHARES_HOST_MEMORY "shares-host-memory"

#endif
