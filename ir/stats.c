/* --stats: per layer output shape, parameters, forward FLOPs, activation bytes; totals. */
#include "ir.h"

/* 431080 -> "431,080" in one of 4 rotating static buffers. */
static const char *grouped(double x) {
  static char bufs[4][40];
  static int next;
  char digits[32], *out = bufs[next++ % 4];
  snprintf(digits, sizeof digits, "%.0f", x);
  int len = (int)strlen(digits), o = 0;
  for (int i = 0; i < len; i++) {
    if (i && (len - i) % 3 == 0) out[o++] = ',';
    out[o++] = digits[i];
  }
  out[o] = 0;
  return out;
}

static int64_t value_bytes(const Value *v) { return shape_elems(v->shape) * 4; }

int64_t plan_test_batch(const MemPlan *p, int64_t batch, int64_t test_batch) {
  if (test_batch > 0) return test_batch;
  int64_t fit = p->step[STEP_TRAIN].image_words * batch / p->step[STEP_EVAL].image_words;
  return fit < 1 ? 1 : fit > TEST_BATCH_MAX ? TEST_BATCH_MAX : fit;
}

static double mib(double words) { return words * 4 / (1 << 20); }

static void print_step_plan(FILE *f, const char *what, const StepPlan *p, int64_t batch) {
  double image = (double)p->image_words;
  fprintf(f,
          "%-20s %s bytes per image, %.2f MiB for %lld images (%.0f%% of %.2f MiB without reuse)\n",
          what, grouped(image * 4), mib(image * (double)batch), (long long)batch,
          100 * image / (double)(p->naive_image_words ? p->naive_image_words : 1),
          mib((double)p->naive_image_words * (double)batch));
}

/* Both steps' plans and what a run holds: one activation arena for the larger of the two (they
 * are never live at once), the fixed region, parameters, gradients, momentum and state. The
 * convolution workspaces, which grow with the thread count, and the data sets come on top. */
static void print_memory(FILE *f, const Module *m) {
  const MemPlan *p = &m->plan;
  const StepPlan *train = &p->step[STEP_TRAIN], *eval = &p->step[STEP_EVAL];
  int64_t batch = m->train.batch, test_batch = plan_test_batch(p, batch, m->train.test_batch);
  print_step_plan(f, "training plan", train, batch);
  print_step_plan(f, "evaluation plan", eval, test_batch);
  if (!m->train.test_batch)
    fprintf(f,
            "                     (test batch %lld: as many images as fit in the training "
            "plan's memory)\n",
            (long long)test_batch);
  double arena = (double)(train->image_words * batch > eval->image_words * test_batch
                              ? train->image_words * batch
                              : eval->image_words * test_batch);
  double fixed =
      (double)(train->fixed_words > eval->fixed_words ? train->fixed_words : eval->fixed_words);
  double params = 3 * (double)p->param_words, state = (double)p->state_words;
  fprintf(f, "                     %s bytes fixed, %s bytes of state\n", grouped(fixed * 4),
          grouped(state * 4));
  fprintf(f, "                     %s bytes each for parameters, gradients and momentum\n",
          grouped((double)p->param_words * 4));
  fprintf(f,
          "memory of a run      %.2f MiB: activations %.2f, parameters, gradients and momentum "
          "%.2f (workspaces and data sets not counted)\n",
          mib(arena + fixed + params + state), mib(arena), mib(params));
}

void ir_print_stats(FILE *f, const Module *m) {
  const Graph *g = &m->graph;
  double params = 0, flops = 0, act = 0;
  int tensors = 0;
  fprintf(f, "%-28s %-13s %-18s %14s %18s %14s\n", "layer", "kind", "output", "params",
          "forward FLOPs", "act. bytes");
  for (int i = 0; i < g->ops.len; i++) {
    const Op *op = &g->ops.data[i];
    const Value *out = &g->values.data[op->output];
    double p = (double)op_param_count(op), fl = op_flops(g, op), a = (double)value_bytes(out);
    fprintf(f, "%-28s %-13s %-18s %14s %18s %14s\n", op->name, op_info[op->kind].name,
            shape_str(out->shape), grouped(p), grouped(fl), grouped(a));
    params += p, flops += fl, act += a;
    tensors += op->params.len;
  }
  double batch = (double)m->train.batch;
  fprintf(f, "\nnetwork %s, batch %lld\n", m->name, (long long)m->train.batch);
  fprintf(f, "layers               %s\n", grouped(g->ops.len));
  fprintf(f, "parameter tensors    %d\n", tensors);
  fprintf(f, "parameters           %s (%.2f MiB)\n", grouped(params), params * 4 / (1 << 20));
  fprintf(f, "forward FLOPs        %s per batch, %s per image\n", grouped(flops),
          grouped(flops / batch));
  fprintf(f, "activations          %s bytes (%.2f MiB) per batch\n", grouped(act), act / (1 << 20));
  if (module_has(m, STAGE_PLANNED)) print_memory(f, m);
}
