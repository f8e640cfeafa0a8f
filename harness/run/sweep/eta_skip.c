/* The chance a config runs or is skipped over --max-step-s, from how far
 * this sweep's step predictions have been off (eta.h). */
#include <math.h>

#include "eta.h"

double eta_spread(const eta *e)
{
    double sum = 0;
    int n = 0;
    for (int j = 0; j < e->n; j++) {
        const eta_item *it = &e->items[j];
        double known = eta_known_step_ms(it);
        if (known > 0 && it->predicted_ms > 0) {
            double r = log(known / it->predicted_ms);
            sum += r * r;
            n++;
        }
    }
    return fmax(ETA_SPREAD_FLOOR, n ? sqrt(sum / n) : 0);
}

/* The standard normal's distribution function. */
static double normal_cdf(double z)
{
    return 0.5 * erfc(-z / sqrt(2.0));
}

double eta_run_chance(const eta_costs *c, double step_ms, double spread)
{
    if (!(c->max_step_s > 0) || !(step_ms > 0))
        return 1;
    /* ln(threshold / true step) is normal about ln(threshold / prediction) */
    double z = log(c->max_step_s * 1e3 / step_ms) / fmax(spread, ETA_SPREAD_FLOOR);
    if (z >= ETA_SPREAD_TAIL)
        return 1;
    if (z <= -ETA_SPREAD_TAIL)
        return 0;
    double tail = normal_cdf(-ETA_SPREAD_TAIL); /* the normal, truncated there */
    return (normal_cdf(z) - tail) / (1 - 2 * tail);
}
