/* swnc's Caffe commands (docs/language.md, "Caffe models"). */
#include "caffe_commands.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../codegen/caffe/emit_prototxt.h"
#include "../codegen/checkpoint.h"

bool is_prototxt(const char *path) {
  size_t n = strlen(path), k = strlen(".prototxt");
  return n > k && !strcmp(path + n - k, ".prototxt");
}

Module *read_network(const char *path, const CaffeImportOptions *caffe, const Override *overrides,
                     int noverrides, CaffeNet *net) {
  if (is_prototxt(path)) return caffe_import(path, caffe, overrides, noverrides, net);
  return frontend_parse_file(path, overrides, noverrides);
}

/* Opens `output` for writing (stdout if NULL), runs `write`, and closes it, reporting errors. */
static bool write_to(const char *output, bool (*write)(FILE *, const void *, const char *),
                     const void *what, const char *source) {
  FILE *f = output ? fopen(output, "w") : stdout;
  if (!f) {
    diag_error((SrcLoc){0}, "cannot write '%s': %s", output, strerror(errno));
    return false;
  }
  bool ok = write(f, what, source);
  ok &= !ferror(f);
  ok &= output ? fclose(f) == 0 : fflush(f) == 0;
  if (!ok && !diag_error_count())
    diag_error((SrcLoc){0}, "cannot write '%s'", output ? output : "standard output");
  return ok;
}

static bool put_swn(FILE *f, const void *m, const char *source) {
  const char *base = strrchr(source, '/');
  char origin[512];
  snprintf(origin, sizeof origin, "Imported from %s by swnc import-caffe.",
           base ? base + 1 : source);
  swn_write(f, m, origin);
  return true;
}

bool write_swn(const Module *m, const char *source, const char *output) {
  return write_to(output, put_swn, m, source);
}

bool write_caffe_weights(Module *m, const CaffeNet *net, const char *model_path,
                         const char *checkpoint) {
  CaffeModel model;
  if (!caffemodel_read(&m->arena, model_path, &model)) return false;
  float *params = xcalloc((size_t)m->plan.param_words + 1, sizeof(float), "the parameters");
  float *state = xcalloc((size_t)m->plan.state_words + 1, sizeof(float), "the state");
  /* what the file does not give keeps the runtime's initial state: running variance 1 */
  for (int i = 0; i < m->graph.ops.len; i++) {
    const Op *op = &m->graph.ops.data[i];
    StatePart parts[2];
    int64_t offset = op->state_offset;
    for (int k = 0, n = op_state(&m->graph, op, parts); k < n; offset += parts[k].words, k++)
      for (int64_t j = 0; j < parts[k].words; j++) state[offset + j] = (float)parts[k].init;
  }
  bool ok = caffe_weights(m, net, &model, model_path, params, state) &&
            checkpoint_write(m, checkpoint, params, state);
  free(params);
  free(state);
  return ok;
}

static bool put_prototxt(FILE *f, const void *m, const char *source) {
  return emit_prototxt(m, source, f);
}

bool export_caffe(Module *m, const char *source, const char *output) {
  if (!pass_elaborate(m) || !pass_infer_shapes(m) || !pass_verify(m)) return false;
  return write_to(output, put_prototxt, m, source);
}
