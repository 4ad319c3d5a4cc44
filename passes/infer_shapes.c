/* Pass `infer-shapes`: every value's shape and dtype, every op's parameters, in
 * topological order. A failing layer is reported and its dependents are skipped, so one
 * run reports independent errors without cascades. */
#include "passes.h"

/* Bounds that keep every later size computation inside int64 (and sane). */
static const int64_t MAX_TENSOR_ELEMS = (int64_t)1 << 40;

static bool check_size(const Op *op, const char *what, Shape s) {
  for (int d = 0; d < s.rank; d++)
    if (s.dim[d] < 1) {
      op_error(op, "%s has an empty dimension (%s)", what, shape_str(s));
      return false;
    }
  if (shape_elems(s) > MAX_TENSOR_ELEMS) {
    op_error(op, "%s is too large (%s)", what, shape_str(s));
    return false;
  }
  return true;
}

static bool infer_op(Module *m, Op *op) {
  op->params.len = 0; /* re-running the pass recreates them */
  if (!op_info[op->kind].infer(m, op)) return false;
  if (!check_size(op, "the output", m->graph.values.data[op->output].shape)) return false;
  for (int i = 0; i < op->params.len; i++)
    if (!check_size(op, op->params.data[i].name, op->params.data[i].shape)) return false;
  return true;
}

/* data.mean: one value, or one per channel of the image input (the runtime holds up to 4);
 * data.crop: the input's height and width, which the crop cuts out of larger images. */
static bool check_data(const Module *m) {
  const FloatList *mean = &m->data.mean;
  for (int i = 0; i < m->graph.ops.len; i++) {
    const Op *op = &m->graph.ops.data[i];
    if (op_info[op->kind].role != ROLE_IMAGES) continue;
    Shape s = m->graph.values.data[op->output].shape;
    int64_t channels = s.dim[1];
    if (mean->n > DATA_MEAN_MAX || (mean->n > 1 && mean->n != channels)) {
      diag_error(m->loc,
                 "data.mean has %d values, but the input has %lld channels (give one value or one "
                 "per channel)",
                 mean->n, (long long)channels);
      return false;
    }
    if (m->data.crop && (s.rank != 4 || s.dim[2] != m->data.crop || s.dim[3] != m->data.crop)) {
      diag_error(op->loc,
                 "data.crop is %lld, but input '%s' is %lldx%lldx%lld (channels x height x "
                 "width): the crop is the input's height and width",
                 (long long)m->data.crop, op->name, (long long)s.dim[1],
                 (long long)(s.rank == 4 ? s.dim[2] : 1), (long long)(s.rank == 4 ? s.dim[3] : 1));
      return false;
    }
  }
  return true;
}

bool pass_infer_shapes(Module *m) {
  Graph *g = &m->graph;
  char *failed = arena_alloc(&m->arena, (size_t)g->values.len + 1);
  bool ok = true;
  for (int i = 0; i < g->ops.len; i++) {
    Op *op = &g->ops.data[i];
    bool skip = false;
    for (int j = 0; j < op->inputs.len; j++) skip |= failed[op->inputs.data[j]];
    if (skip || !infer_op(m, op)) {
      failed[op->output] = 1;
      ok = false;
    }
  }
  return ok && check_data(m);
}
