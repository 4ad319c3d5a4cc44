/* A checkpoint of a compiled module written by the compiler (for weights it brings in, such as
 * a Caffe model's): the runtime's format (docs/runtime.md, Checkpoints) at iteration 0 with
 * zero momentum, so a generated program loads it with --init-weights or --resume. */
#include "checkpoint.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lower.h"

typedef struct Writer {
  FILE *f;
  uint64_t sum; /* FNV-1a of every byte written */
} Writer;

static void put(Writer *w, const void *data, size_t n) {
  const unsigned char *p = data;
  for (size_t i = 0; i < n; i++) w->sum = (w->sum ^ p[i]) * 1099511628211ull;
  fwrite(data, 1, n, w->f);
}
static void put_u64(Writer *w, uint64_t v) { put(w, &v, 8); }
static void put_u32(Writer *w, uint32_t v) { put(w, &v, 4); }

static void put_tables(Writer *w, const Module *m) {
  const Graph *g = &m->graph;
  uint32_t nparams = 0, nstate = 0;
  StatePart parts[2];
  for (int i = 0; i < g->ops.len; i++) {
    nparams += (uint32_t)g->ops.data[i].params.len;
    nstate += (uint32_t)op_state(g, &g->ops.data[i], parts);
  }
  put_u32(w, nparams);
  put_u32(w, nstate);
  for (int i = 0; i < g->ops.len; i++)
    for (int k = 0; k < g->ops.data[i].params.len; k++) {
      const Param *p = &g->ops.data[i].params.data[k];
      put_u32(w, (uint32_t)strlen(p->name));
      put(w, p->name, strlen(p->name));
      put_u32(w, (uint32_t)p->shape.rank);
      for (int d = 0; d < p->shape.rank; d++) put_u64(w, (uint64_t)p->shape.dim[d]);
      put_u64(w, (uint64_t)p->offset);
    }
  for (int i = 0; i < g->ops.len; i++) {
    const Op *op = &g->ops.data[i];
    int64_t offset = op->state_offset;
    for (int k = 0, n = op_state(g, op, parts); k < n; offset += parts[k].words, k++) {
      char name[512];
      snprintf(name, sizeof name, "%s.%s", op->name, parts[k].what);
      put_u32(w, (uint32_t)strlen(name));
      put(w, name, strlen(name));
      put_u64(w, (uint64_t)offset);
      put_u64(w, (uint64_t)parts[k].words);
    }
  }
}

bool checkpoint_write(const Module *m, const char *path, const float *params, const float *state) {
  size_t len = strlen(path);
  char *tmp = xmalloc(len + 24, "a file name");
  snprintf(tmp, len + 24, "%s.tmp%ld", path, (long)getpid());
  Writer w = {fopen(tmp, "wb"), 14695981039346656037ull};
  if (!w.f) {
    diag_error((SrcLoc){0}, "cannot write '%s': %s", tmp, strerror(errno));
    free(tmp);
    return false;
  }
  static const char magic[8] = {'S', 'W', 'N', 'C', 'C', 'K', 'P', 'T'};
  char name[64] = {0};
  strncpy(name, m->name, sizeof name - 1);
  int64_t words = m->plan.param_words;
  put(&w, magic, 8);
  put_u32(&w, 1); /* version */
  put_u32(&w, 0);
  put_u64(&w, network_hash(m));
  put(&w, name, sizeof name);
  put_u64(&w, 0); /* iteration */
  put_u64(&w, (uint64_t)m->train.seed);
  put_u64(&w, (uint64_t)words);
  put_u64(&w, (uint64_t)m->plan.state_words);
  put_tables(&w, m);
  put(&w, params, sizeof(float) * (size_t)words);
  float *zero = xcalloc((size_t)(words > 0 ? words : 1), sizeof(float), "the momentum");
  put(&w, zero, sizeof(float) * (size_t)words);
  free(zero);
  put(&w, state, sizeof(float) * (size_t)m->plan.state_words);
  uint64_t sum = w.sum;
  put_u64(&w, sum);
  bool ok = !ferror(w.f) && fflush(w.f) == 0 && fsync(fileno(w.f)) == 0;
  ok &= fclose(w.f) == 0;
  if (ok && rename(tmp, path)) ok = false;
  if (!ok) {
    diag_error((SrcLoc){0}, "cannot write '%s': %s", path, strerror(errno));
    unlink(tmp);
  }
  free(tmp);
  return ok;
}
