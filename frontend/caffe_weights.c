/* A .caffemodel's blobs into a compiled module's parameters and state, by the importer's map
 * of Caffe layers to statements (caffe_import.c): weights and biases by role, a BatchNorm's
 * running sums divided by their scale factor (Caffe keeps mean x s, variance x s and s), the
 * Scale after it as the batch norm's scale and shift. Every blob's shape is checked against
 * the parameter it fills. A checkpoint holds every parameter, so a layer of the network the file
 * has no blobs for is an error (the initialisers run in the generated program, not here). */
#include <string.h>

#include "caffe.h"

static const Op *op_named(const Module *m, const char *name) {
  for (int i = 0; i < m->graph.ops.len; i++)
    if (!strcmp(m->graph.ops.data[i].name, name)) return &m->graph.ops.data[i];
  return NULL;
}

static const Param *param_of(const Op *op, ParamRole role) {
  for (int k = 0; k < op->params.len; k++)
    if (op->params.data[k].role == role) return &op->params.data[k];
  return NULL;
}

static const CaffeModelLayer *model_layer(const CaffeModel *model, const char *name) {
  for (int i = 0; i < model->layers.len; i++)
    if (!strcmp(model->layers.data[i].name, name)) return &model->layers.data[i];
  return NULL;
}

static const char *blob_shape(const CaffeBlob *b) {
  static char text[4][64];
  static int next;
  char *s = text[next++ % 4];
  s[0] = 0;
  for (int i = 0; i < b->rank; i++)
    snprintf(s + strlen(s), 64 - strlen(s), "%s%lld", i ? "x" : "", (long long)b->dim[i]);
  if (!b->rank) snprintf(s, 64, "a scalar");
  return s;
}

static bool same_shape(const CaffeBlob *b, Shape s) {
  if (b->rank != s.rank) return false;
  for (int i = 0; i < s.rank; i++)
    if (b->dim[i] != s.dim[i]) return false;
  return true;
}

static bool fill(const char *path, const CaffeLayer *l, const CaffeModelLayer *ml, int k,
                 const Param *p, float *params) {
  const CaffeBlob *b = &ml->blobs.data[k];
  if (!same_shape(b, p->shape)) {
    fprintf(stderr, "%s: error: layer '%s' (%s): blob %d is %s, but the network's %s is %s\n", path,
            l->name, l->type, k, blob_shape(b), p->name, shape_str(p->shape));
    return false;
  }
  memcpy(params + p->offset, b->data, sizeof(float) * (size_t)b->count);
  return true;
}

static bool blob_count(const char *path, const CaffeLayer *l, const CaffeModelLayer *ml, int want) {
  if (ml->blobs.len == want) return true;
  fprintf(stderr, "%s: error: layer '%s' (%s) has %d blob%s; the network's needs %d\n", path,
          l->name, l->type, ml->blobs.len, ml->blobs.len == 1 ? "" : "s", want);
  return false;
}

static bool batchnorm_stats(const char *path, const Module *m, const CaffeLayer *l,
                            const CaffeModelLayer *ml, const Op *op, float *state) {
  if (!blob_count(path, l, ml, 3)) return false;
  StatePart parts[2];
  op_state(&m->graph, op, parts);
  const CaffeBlob *s = &ml->blobs.data[2];
  if (s->count != 1) {
    fprintf(stderr, "%s: error: layer '%s' (BatchNorm): blob 2 is %s, not the scale factor\n", path,
            l->name, blob_shape(s));
    return false;
  }
  float factor = s->data[0] == 0 ? 0 : 1 / s->data[0];
  int64_t offset = op->state_offset;
  for (int k = 0; k < 2; offset += parts[k].words, k++) {
    const CaffeBlob *b = &ml->blobs.data[k];
    if (b->count != parts[k].words) {
      fprintf(stderr,
              "%s: error: layer '%s' (BatchNorm): blob %d is %s, but the network's %s.%s "
              "has %lld channels\n",
              path, l->name, k, blob_shape(b), op->name, parts[k].what, (long long)parts[k].words);
      return false;
    }
    for (int64_t i = 0; i < b->count; i++) state[offset + i] = b->data[i] * factor;
  }
  return true;
}

static bool load_layer(const char *path, const Module *m, const CaffeLayer *l,
                       const CaffeModelLayer *ml, float *params, float *state) {
  const Op *op = op_named(m, l->stmt);
  if (!op) {
    fprintf(stderr, "%s: error: layer '%s' (%s): the network has no layer '%s'\n", path, l->name,
            l->type, l->stmt);
    return false;
  }
  if (l->role == CAFFE_BN_STATS) return batchnorm_stats(path, m, l, ml, op, state);
  ParamRole roles[2] = {PARAM_WEIGHT, PARAM_BIAS};
  if (l->role == CAFFE_BN_AFFINE) roles[0] = PARAM_SCALE, roles[1] = PARAM_SHIFT;
  const Param *want[2] = {param_of(op, roles[0]), param_of(op, roles[1])};
  if (!blob_count(path, l, ml, want[1] ? 2 : 1)) return false;
  for (int k = 0; k < ml->blobs.len; k++)
    if (!fill(path, l, ml, k, want[k], params)) return false;
  return true;
}

bool caffe_weights(const Module *m, const CaffeNet *net, const CaffeModel *model, const char *path,
                   float *params, float *state) {
  bool ok = true;
  for (int i = 0; i < net->layers.len; i++) {
    const CaffeLayer *l = &net->layers.data[i];
    const CaffeModelLayer *ml = model_layer(model, l->name);
    if (!ml) {
      fprintf(stderr, "%s: error: no weights for layer '%s' (%s)\n", path, l->name, l->type);
      ok = false;
      continue;
    }
    ok &= load_layer(path, m, l, ml, params, state);
  }
  return ok;
}
