/* --init-weights (train.h): fine-tuning from a checkpoint of another network, as Caffe's
 * -weights and PyTorch's load_state_dict(strict=False) do: each tensor of the network takes the
 * checkpoint's tensor of the same name if it has the same shape; the rest keep their fresh
 * initialisation. The report names every tensor skipped or left fresh. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train.h"
#include "util.h"

/* The checkpoint's tensor named `name`, or NULL. */
static const SwnCheckpointTensor *find(const SwnCheckpointTensor *t, int n, const char *name) {
  size_t len = strlen(name);
  for (int k = 0; k < n; k++)
    if ((size_t)t[k].name_len == len && !memcmp(t[k].name, name, len)) return &t[k];
  return NULL;
}

static void shape_text(int ndims, const int64_t *dims, char *text, size_t size) {
  text[0] = 0;
  for (int d = 0; d < ndims; d++)
    snprintf(text + strlen(text), size - strlen(text), "%s%lld", d ? "x" : "", (long long)dims[d]);
  if (!ndims) snprintf(text, size, "scalar");
}

static bool same_shape(const SwnCheckpointTensor *t, int ndims, const int64_t *dims) {
  if (t->ndims != ndims) return false;
  for (int d = 0; d < ndims; d++)
    if (t->dims[d] != dims[d]) return false;
  return true;
}

/* What became of the network's tensors, for the report. */
typedef struct Tally {
  int loaded, skipped, fresh;
  char skipped_text[1024], fresh_text[1024];
} Tally;

static void note(char *text, size_t size, const char *what) {
  size_t len = strlen(text);
  if (len + strlen(what) + 8 < size)
    snprintf(text + len, size - len, "%s%s", len ? ", " : "", what);
  else if (len + 5 < size && strcmp(text + len - 3, "..."))
    snprintf(text + len, size - len, ", ...");
}

/* One tensor of the network: copied from the checkpoint, or why not. `strict` makes any
 * difference fatal. */
static void take_tensor(const SwnCheckpoint *c, const SwnCheckpointTensor *from, const void *pool,
                        const char *name, int ndims, const int64_t *dims, float *to, bool strict,
                        Tally *t) {
  char ours[96], theirs[96], what[256];
  shape_text(ndims, dims, ours, sizeof ours);
  if (!from) {
    if (strict)
      swn_fatal_at(c->path, "has no tensor '%s' (%s) of network '%s' (--strict: load all or none)",
                   name, ours, c->name);
    snprintf(what, sizeof what, "%s", name);
    note(t->fresh_text, sizeof t->fresh_text, what), t->fresh++;
    return;
  }
  if (!same_shape(from, ndims, dims)) {
    shape_text(from->ndims, from->dims, theirs, sizeof theirs);
    if (strict)
      swn_fatal_at(c->path, "holds '%s' as %s; the network's is %s (--strict: load all or none)",
                   name, theirs, ours);
    snprintf(what, sizeof what, "%s (%s here, %s in the checkpoint)", name, ours, theirs);
    note(t->skipped_text, sizeof t->skipped_text, what), t->skipped++;
    return;
  }
  memcpy(to, (const char *)pool + sizeof(float) * (size_t)from->offset,
         sizeof(float) * (size_t)from->count);
  t->loaded++;
}

/* Under --strict, a tensor of the checkpoint the network lacks is a difference too. */
static void check_no_extra(const SwnNetwork *net, const SwnCheckpoint *c) {
  for (int k = 0; k < c->nparams; k++) {
    bool known = false;
    for (int i = 0; i < net->nparams && !known; i++)
      known = (size_t)c->params[k].name_len == strlen(net->params[i].name) &&
              !memcmp(c->params[k].name, net->params[i].name, (size_t)c->params[k].name_len);
    if (!known)
      swn_fatal_at(c->path, "holds '%.*s', which network '%s' has not (--strict: load all or none)",
                   c->params[k].name_len, c->params[k].name, net->name);
  }
}

void swn_load_weights(const SwnNetwork *net, const char *path, float *params, float *state,
                      bool strict, bool quiet) {
  SwnCheckpoint c = swn_read_checkpoint(path);
  Tally t = {0};
  for (int i = 0; i < net->nparams; i++) {
    const SwnParamInfo *p = &net->params[i];
    take_tensor(&c, find(c.params, c.nparams, p->name), c.param_pool, p->name, p->ndims, p->dims,
                params + p->offset, strict, &t);
  }
  for (int i = 0; i < net->nstate; i++) {
    const SwnStateInfo *s = &net->state[i];
    take_tensor(&c, find(c.state, c.nstate, s->name), c.state_pool, s->name, 1, &s->count,
                state + s->offset, strict, &t);
  }
  if (strict) check_no_extra(net, &c);
  if (!quiet) {
    printf("init-weights: %d of %d tensors from %s (network '%s')", t.loaded,
           net->nparams + net->nstate, path, c.name);
    if (t.skipped) printf("; skipped, another shape: %s", t.skipped_text);
    if (t.fresh) printf("; initialised fresh: %s", t.fresh_text);
    printf("\n");
  }
  swn_checkpoint_free(&c);
}
