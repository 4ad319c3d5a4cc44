/* Pass `bucket-gradients`: gradient buckets (GradientFlow's lazy allreduce over a memory pool).
 *
 * The memory plan already lays the gradients out as one pool in the order backward produces
 * them, the last layer's first. This pass cuts the pool into buckets, each a contiguous span of
 * at least --fusion-threshold bytes (0: one bucket per tensor; INT64_MAX: one bucket; the last
 * may be smaller), and marks the backward step after which each bucket is complete: there a distributed program starts
 * the bucket's allreduce while the rest of backward runs. In one process the marks cost a call
 * that returns at once. */
#include <limits.h>

#include "passes.h"

bool pass_bucket_gradients(Module *m) {
  Fusion *f = &m->fusion;
  *f = (Fusion){.threshold = m->options.fusion_threshold};
  const Graph *g = &m->graph;
  const int *backward_index = schedule_backward_index(m);
  int index = 0;
  Bucket open = {.first_param = 0, .ready_step = -1};
  int64_t expected = 0; /* the pool is contiguous in update order: check as we go */
  for (int k = 0; k < m->schedule.update_ops.len; k++) {
    int op = m->schedule.update_ops.data[k];
    const Op *o = &g->ops.data[op];
    for (int p = 0; p < o->params.len; p++, index++) {
      const Param *q = &o->params.data[p];
      if (q->offset != expected) {
        diag_error((SrcLoc){0},
                   "internal: parameter '%s' is not where the gradient pool's order puts it",
                   q->name);
        return false;
      }
      int64_t words = shape_elems(q->shape);
      expected += words;
      if (open.nparams == 0) open.offset = q->offset, open.first_param = index;
      open.words += words;
      open.nparams++;
      open.ready_step = backward_index[op];
      if (f->threshold == 0 || open.words * 4 >= f->threshold) {
        vec_push(&m->arena, f->buckets, open);
        open = (Bucket){.first_param = index + 1};
      }
    }
  }
  if (open.nparams) vec_push(&m->arena, f->buckets, open);
  return true;
}
