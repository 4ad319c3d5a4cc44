/* Coarse-grained sparse gradient exchange (docs/runtime.md, "Sparse gradients"): each bucket is
 * cut into chunks; only the chunks with the largest L1 norms summed over all ranks are
 * allreduced, as one dense array, and the rest stays behind as a local residual. */
#ifndef SWNC_COMM_SPARSE_H
#define SWNC_COMM_SPARSE_H

#include "comm.h"

typedef struct SwnSparse {
  int64_t words;   /* of the gradient pool */
  int64_t chunk;   /* gradients per chunk */
  float momentum;  /* momentum correction: velocity u = momentum u + g is accumulated (0: g) */
  float density;   /* the fraction of chunks sent after warm-up */
  int64_t warmup;  /* epochs of warm-up (swn_sparse_density) */
  float *velocity; /* u, per pool word (only with momentum) */
  float *residual; /* accumulated, not yet sent, per pool word */
  float *norms;    /* per chunk of a bucket: its L1 norm summed over the ranks */
  float *scratch;  /* a copy of the norms, reordered by the selection */
  int64_t *chosen; /* the chunks sent, in increasing order */
  float *packed;   /* their values, contiguous: what is allreduced */
  int64_t chunks_sent, chunks_seen; /* since open */
} SwnSparse;

/* For a pool of `words` gradients in chunks of `chunk`, with momentum correction's coefficient
 * (0: the residual accumulates raw gradients), sending `density` of the chunks after `warmup`
 * epochs. */
void swn_sparse_open(SwnSparse *s, int64_t words, int64_t chunk, float momentum, float density,
                     int64_t warmup);
void swn_sparse_close(SwnSparse *s);

/* grad[0..n) is the span [offset, offset + n) of the pool, this rank's gradients. Adds them to
 * the residual (through the velocity), sends the top `density` of its chunks by L1 norm over all
 * ranks (at least one; the same chunks on every rank) and leaves in grad their sum over the
 * ranks there and 0 elsewhere; the residual of the sent chunks restarts at 0.
 * Collective over c. */
void swn_sparse_allreduce(SwnSparse *s, SwnComm *c, float *grad, int64_t offset, int64_t n,
                          float density);

/* The density of epoch `epoch` (from 0) under a warm-up of `warmup` epochs: density^((e + 1) /
 * (warmup + 1)) during them (with warm-up 4 and density 0.001: 25%, 6.3%, 1.6%, 0.4%), then
 * density. */
float swn_sparse_density(float density, int64_t warmup, int64_t epoch);

#endif
