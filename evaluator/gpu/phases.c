/* Where a run worker's job spends its time, by phase (gpu_int.h: amk__rw_phase,
 * amk__rw_phase_text): a leaf the timed loops, the keeper and the job code all mark, so
 * that none of them reaches up into another for it. The run worker is one thread. */
#include "gpu_int.h"

#include <stdio.h>
#include <string.h>

/* The phases of the jobs since the last amk__rw_phase_text, in order of first use. */
#define PHASES 16
static struct {
    const char *name[PHASES];
    double ms[PHASES];
    int n, cur;
    double since;
} phases = {.cur = -1};

void amk__rw_phase(const char *what)
{
    double now = amk_now_s();
    if (phases.cur >= 0)
        phases.ms[phases.cur] += (now - phases.since) * 1e3;
    phases.cur = -1;
    phases.since = now;
    if (!what)
        return;
    for (int i = 0; i < phases.n; i++)
        if (strcmp(phases.name[i], what) == 0) {
            phases.cur = i;
            return;
        }
    if (phases.n < PHASES) {
        phases.name[phases.n] = what;
        phases.ms[phases.n] = 0;
        phases.cur = phases.n++;
    }
}

void amk__rw_phase_text(char *buf, size_t cap)
{
    amk__rw_phase(NULL);
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < phases.n && len + 1 < cap; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%s %.1f ms", i ? ", " : "",
                                phases.name[i], phases.ms[i]);
    phases.n = 0;
}

/* Set-up of the current job that later jobs reuse (amk__rw_setup_add). */
static double setup_ms;

void amk__rw_setup_add(double ms)
{
    if (ms > 0)
        setup_ms += ms;
}

double amk__rw_setup_take(void)
{
    double ms = setup_ms;
    setup_ms = 0;
    return ms;
}
