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
  const MemPlan *p = &m->plan;
  if (!module_has(m, STAGE_PLANNED)) return;
  double image = (double)p->image_words * 4, naive = (double)p->naive_image_words * 4;
  fprintf(f,
          "memory plan          %s bytes per image (%.2f MiB per batch; %.0f%% of %.2f MiB without "
          "reuse)\n",
          grouped(image), image * batch / (1 << 20), 100 * image / (naive ? naive : 1),
          naive * batch / (1 << 20));
  fprintf(f, "                     %s bytes fixed, %s bytes of state\n",
          grouped((double)p->fixed_words * 4), grouped((double)p->state_words * 4));
  fprintf(f, "                     %s bytes each for parameters, gradients and momentum\n",
          grouped((double)p->param_words * 4));
}
