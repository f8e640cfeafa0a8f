/* The correctness check of a config: the gradient accumulated over one
 * window against the full-batch gradient of the same examples from the
 * same weights, computed apart: in pieces of at most a micro-batch (not
 * the micro-batches themselves: gradcheck_first_piece), each
 * from zeroed gradients with the whole batch's normalisation, summed on the
 * host in double. It needs no device memory beyond the step's own. */
#ifndef ACCUBENCH_GRADCHECK_H
#define ACCUBENCH_GRADCHECK_H

#include "step.h"

/* The host memory grad_check takes per parameter: the window's gradient,
 * the full batch's and one piece's in float, and their sum in double. On a
 * device that is the host's memory it comes beside the step's own
 * (memory_fit.h). */
#define GRAD_CHECK_HOST_BYTES_PER_PARAM (3 * sizeof(float) + sizeof(double))

/* The reference's first piece, of `count` examples cut in pieces of
 * `chunk` for a window of micro-batches of `micro`: pieces the size of the
 * micro-batch start half of one late (the first half as long), so that
 * every piece holds examples of two micro-batches. On the micro-batch's
 * own boundaries an error that depends on which examples a micro-batch
 * holds (a slice's labels read from the batch's start) was made alike in
 * both and the check read 1e-8 over it; at one micro-batch the reference
 * was the window itself. Micro-batches of one example stay one a piece
 * (two would take twice the step's activations). */
int gradcheck_first_piece(int chunk, int micro, int count);

/* ||a - b|| / ||b|| in double; 0 when both are zero. */
double relative_error(const float *a, const float *b, size_t n);

/* Runs the window on input buffer 0 and the full-batch reference; sets the
 * relative error and the sum of the window's valid items' losses (this
 * process's part of the window; not normalised: the caller divides by the
 * window's valid items). If g_window/g_full are non-NULL (n_params floats
 * each), the two gradients are left there for the caller. BK_* status. */
int grad_check(step_runner *s, double *rel_err, double *loss_sum, float *g_window,
               float *g_full);

#endif
