/* --stats: per layer output shape, parameters, forward FLOPs, activation bytes; totals. */
#include "ir.h"
#include "target.h"

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

static int64_t value_bytes(const Value *v) {
  return v->shape.rank ? v->shape.dim[0] * layout_floats_per_image(v->shape, v->layout) * 4 : 4;
}

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

/* Bytes of an uncompressed file: a gzip file's trailer holds its size modulo 2^32 (RFC 1952),
 * which is the size for the data sets this reads; -1 if it cannot be read. */
static int64_t content_bytes(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  unsigned char magic[2] = {0}, tail[4];
  int64_t size = -1;
  bool gzip = fread(magic, 1, 2, f) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  if (fseek(f, gzip ? -4 : 0, SEEK_END) == 0) {
    size = ftell(f);
    if (gzip)
      size = fread(tail, 1, 4, f) == 4 ? (int64_t)tail[0] | (int64_t)tail[1] << 8 |
                                             (int64_t)tail[2] << 16 | (int64_t)tail[3] << 24
                                       : -1;
  }
  fclose(f);
  return size;
}

/* Images a data set holds as the program loads it (all of a file source unless a size limits
 * it; a synthetic source is made batch by batch and holds none), or -1 if its files cannot be
 * read. */
static int64_t data_set_images(const DataConfig *d, const StrList *files, int64_t limit,
                               int64_t image_bytes) {
  /* a packed set is read record by record: it holds only labels and its index (small) */
  if (d->source == DATA_SYNTHETIC || d->source == DATA_PACKED || files->n == 0) return 0;
  int64_t images = 0;
  if (d->source == DATA_IDX) { /* images file: a 16-byte header, then the pixels */
    int64_t bytes = content_bytes(files->v[0]);
    if (bytes < 16) return -1;
    images = (bytes - 16) / image_bytes;
  } else { /* CIFAR: records of a label byte and the pixels */
    for (int i = 0; i < files->n; i++) {
      int64_t bytes = content_bytes(files->v[i]);
      if (bytes < 0) return -1;
      images += bytes / (image_bytes + 1);
    }
  }
  return limit > 0 && limit < images ? limit : images;
}

static int64_t input_image_bytes(const Module *m) {
  int64_t image_bytes = 0;
  for (int i = 0; i < m->graph.ops.len; i++)
    if (m->graph.ops.data[i].kind == OP_INPUT)
      image_bytes = shape_per_image(m->graph.values.data[m->graph.ops.data[i].output].shape);
  return image_bytes;
}

/* Images in the test set, 0 if not known here. */
static int64_t test_images(const Module *m) {
  if (m->data.source == DATA_SYNTHETIC || m->data.source == DATA_PACKED) return m->data.test_size;
  int64_t image_bytes = input_image_bytes(m);
  return image_bytes > 0 ? data_set_images(&m->data, &m->data.test, m->data.test_size, image_bytes)
                         : 0;
}

/* The data sets in memory: a byte a pixel and a 4-byte label an image; -1 if unknown. */
static double data_set_bytes(const Module *m) {
  int64_t image_bytes = input_image_bytes(m);
  if (image_bytes <= 0) return 0;
  int64_t train = data_set_images(&m->data, &m->data.train, m->data.train_size, image_bytes),
          test = data_set_images(&m->data, &m->data.test, m->data.test_size, image_bytes);
  if (train < 0 || test < 0) return -1;
  return (double)(train + test) * (double)(image_bytes + 4);
}

/* Both steps' plans and what a run holds: one activation arena for the larger of the two (they
 * are never live at once), the fixed region, parameters, gradients, momentum and state, the
 * data sets and the process itself (the target's measure of a program before it allocates any
 * of this), and the scratch memory of kernels, convolution dispatcher and data loader. */
static void print_memory(FILE *f, const Module *m) {
  const MemPlan *p = &m->plan;
  const StepPlan *train = &p->step[STEP_TRAIN], *eval = &p->step[STEP_EVAL];
  int64_t batch = m->train.batch, chosen = plan_test_batch(p, batch, m->train.test_batch);
  int64_t tests = test_images(m), test_batch = tests > 0 && tests < chosen ? tests : chosen;
  print_step_plan(f, "training plan", train, batch);
  print_step_plan(f, "evaluation plan", eval, test_batch);
  if (!m->train.test_batch)
    fprintf(f,
            "                     (test batch %lld: as many images as fit in the training "
            "plan's memory)\n",
            (long long)chosen);
  if (test_batch < chosen) /* as the runtime does */
    fprintf(f, "                     (test batch %lld: the test set's images)\n",
            (long long)test_batch);
  double arena = (double)(train->image_words * batch > eval->image_words * test_batch
                              ? train->image_words * batch
                              : eval->image_words * test_batch);
  double fixed =
      (double)(train->fixed_words > eval->fixed_words ? train->fixed_words : eval->fixed_words);
  bool folded = m->schedule.gradients_in_momentum;
  int moments = optimizer_moment_pools(m->train.optimizer);
  bool summed = m->train.iter_size > 1; /* the micro-batches' gradients (runtime/distributed.c) */
  double params = (folded ? 2 : 2 + moments + summed) * (double)p->param_words,
         state = (double)p->state_words;
  char pools[128];
  const char *moment_pools = moments == 2 ? "Adam's two moments" : "momentum";
  if (folded)
    snprintf(pools, sizeof pools, "parameters and momentum");
  else if (summed)
    snprintf(pools, sizeof pools, "parameters, gradients, %s and the micro-batches' gradient sum",
             moment_pools);
  else
    snprintf(pools, sizeof pools, "parameters, gradients and %s", moment_pools);
  fprintf(f, "                     %s bytes fixed, %s bytes of state\n", grouped(fixed * 4),
          grouped(state * 4));
  fprintf(f, "                     %s bytes each for %s%s\n", grouped((double)p->param_words * 4),
          pools, folded ? " (backward adds the gradients into momentum)" : "");
  ScratchWords scratch = run_scratch(m, test_batch);
  double scratch_words = scratch.kernels + scratch.dispatcher + scratch.loader;
  if (scratch.known)
    fprintf(f,
            "scratch              %.2f MiB: kernels' workspace %.2f (this machine's default "
            "threads), convolution dispatcher %.2f, data loader %.2f\n",
            mib(scratch_words), mib(scratch.kernels), mib(scratch.dispatcher), mib(scratch.loader));
  double data = data_set_bytes(m), process = m->options.target->process_mib;
  if (data >= 0)
    fprintf(f, "data sets            %.2f MiB (a byte a pixel, 4 bytes a label)\n",
            data / (1 << 20));
  else
    fprintf(f, "data sets            not counted: their files cannot be read from here\n");
  if (process > 0)
    fprintf(f, "process              %.0f MiB before any of this (MPI, threads, libraries)\n",
            process);
  double rest = (data > 0 ? data / (1 << 20) : 0) + process;
  fprintf(f,
          "memory of a run      %.2f MiB: activations %.2f, %s %.2f, scratch %.2f, data sets and "
          "process %.2f%s\n",
          mib(arena + fixed + params + state + scratch_words) + rest, mib(arena), pools,
          mib(params), mib(scratch_words), rest,
          scratch.known ? "" : " (the target does not say what its kernels' workspaces take)");
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
