/* Checkpoints: a self-describing little-endian file (docs/runtime.md), written to a temporary
 * file, flushed to disk and renamed over the target, so a crash never leaves a half-written
 * checkpoint behind the name. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "train.h"
#include "util.h"

static const char MAGIC[8] = {'S', 'W', 'N', 'C', 'C', 'K', 'P', 'T'};
/* Version 2 holds the optimizer's moment pools (1 or 2) where version 1 had a reserved word
 * (always 0, meaning its one momentum pool). */
enum { VERSION = 2, NAME_BYTES = 64 };

typedef struct Writer {
  FILE *f;
  uint64_t sum; /* FNV-1a of every byte written */
  const char *path;
} Writer;

uint64_t swn_checksum(uint64_t sum, const void *data, size_t n) {
  const unsigned char *p = data;
  for (size_t i = 0; i < n; i++) sum = (sum ^ p[i]) * 1099511628211ull;
  return sum;
}

static void put(Writer *w, const void *data, size_t n) {
  w->sum = swn_checksum(w->sum, data, n);
  if (fwrite(data, 1, n, w->f) != n) swn_fatal_at(w->path, "cannot write: %s", strerror(errno));
}
static void put_u64(Writer *w, uint64_t v) { put(w, &v, 8); }
static void put_u32(Writer *w, uint32_t v) { put(w, &v, 4); }
static void put_floats(Writer *w, const float *v, int64_t n) {
  if (v)
    put(w, v, sizeof(float) * (size_t)n);
  else {
    float zero[256] = {0};
    for (int64_t i = 0; i < n; i += 256)
      put(w, zero, sizeof(float) * (size_t)(n - i < 256 ? n - i : 256));
  }
}

/* PATH.tmpPID files of processes that no longer exist: a save killed outright (SIGKILL, a
 * crash of the machine) left them, and on a full disk they hold the space the next save needs. */
static void remove_stale_temporaries(const char *path) {
  const char *slash = strrchr(path, '/');
  const char *base = slash ? slash + 1 : path;
  size_t base_len = strlen(base);
  char dir[4096] = "./";
  if (slash) snprintf(dir, sizeof dir, "%.*s", (int)(slash - path + 1), path);
  DIR *d = opendir(dir);
  if (!d) return;
  for (struct dirent *e; (e = readdir(d));) {
    const char *pid = e->d_name + base_len + 4;
    if (strncmp(e->d_name, base, base_len) || strncmp(e->d_name + base_len, ".tmp", 4) || !*pid ||
        strspn(pid, "0123456789") != strlen(pid) || strlen(pid) > 9)
      continue;
    if (kill((pid_t)atol(pid), 0) == 0 || errno != ESRCH) continue; /* alive, or not ours */
    char stale[8192];
    snprintf(stale, sizeof stale, "%s%s", dir, e->d_name);
    unlink(stale);
  }
  closedir(d);
}

void swn_save_checkpoint(const SwnNetwork *net, const char *path, const float *params,
                         const float *momentum, const float *state, int64_t iteration,
                         uint64_t seed) {
  remove_stale_temporaries(path);
  char *tmp = swn_temporary_for(path); /* removed by a fatal error or a second signal */
  Writer w = {fopen(tmp, "wb"), SWN_CHECKSUM_START, path};
  if (!w.f) swn_fatal_at(path, "cannot write a checkpoint: %s", strerror(errno));
  char name[NAME_BYTES] = {0};
  strncpy(name, net->name, NAME_BYTES - 1);
  put(&w, MAGIC, 8);
  put_u32(&w, VERSION);
  put_u32(&w, (uint32_t)net->moment_pools);
  put_u64(&w, net->hash);
  put(&w, name, NAME_BYTES);
  put_u64(&w, (uint64_t)iteration);
  put_u64(&w, seed);
  put_u64(&w, (uint64_t)net->param_words);
  put_u64(&w, (uint64_t)net->state_words);
  put_u32(&w, (uint32_t)net->nparams);
  put_u32(&w, (uint32_t)net->nstate);
  for (int k = 0; k < net->nparams; k++) {
    const SwnParamInfo *p = &net->params[k];
    put_u32(&w, (uint32_t)strlen(p->name));
    put(&w, p->name, strlen(p->name));
    put_u32(&w, (uint32_t)p->ndims);
    for (int d = 0; d < p->ndims; d++) put_u64(&w, (uint64_t)p->dims[d]);
    put_u64(&w, (uint64_t)p->offset);
  }
  for (int k = 0; k < net->nstate; k++) {
    const SwnStateInfo *s = &net->state[k];
    put_u32(&w, (uint32_t)strlen(s->name));
    put(&w, s->name, strlen(s->name));
    put_u64(&w, (uint64_t)s->offset);
    put_u64(&w, (uint64_t)s->count);
  }
  put_floats(&w, params, net->param_words);
  put_floats(&w, momentum, net->param_words * net->moment_pools);
  put_floats(&w, state, net->state_words);
  uint64_t sum = w.sum;
  put_u64(&w, sum);
  if (fflush(w.f) || fsync(fileno(w.f)) || fclose(w.f))
    swn_fatal_at(path, "cannot write: %s", strerror(errno));
  swn_temporary_replace(tmp, path);
}

typedef struct Reader {
  const unsigned char *data;
  size_t size, at;
  const char *path;
} Reader;

/* A fatal error about the file being read: its buffer is freed first. */
static _Noreturn __attribute__((format(printf, 2, 3))) void reject(Reader *r, const char *fmt,
                                                                   ...) {
  free((void *)r->data);
  va_list ap;
  va_start(ap, fmt);
  swn_vfatal_at(r->path, fmt, ap);
}

static const void *take(Reader *r, size_t n) {
  if (r->size - r->at < n) reject(r, "is truncated (%zu bytes)", r->size);
  const void *p = r->data + r->at;
  r->at += n;
  return p;
}
static uint64_t get_u64(Reader *r) {
  uint64_t v;
  memcpy(&v, take(r, 8), 8);
  return v;
}
static uint32_t get_u32(Reader *r) {
  uint32_t v;
  memcpy(&v, take(r, 4), 4);
  return v;
}

static unsigned char *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) swn_fatal_at(path, "cannot open: %s", strerror(errno));
  size_t cap = 1 << 16, n = 0, got;
  unsigned char *buf = swn_alloc(cap);
  while ((got = fread(buf + n, 1, cap - n, f)) > 0)
    if ((n += got) == cap) {
      unsigned char *bigger = swn_alloc(cap * 2);
      memcpy(bigger, buf, cap);
      free(buf), buf = bigger, cap *= 2;
    }
  bool failed = ferror(f);
  fclose(f);
  if (failed) {
    free(buf);
    swn_fatal_at(path, "cannot read");
  }
  *size = n;
  return buf;
}

/* The file's header, tables and pools, checked against each other and the checksum; the pools
 * point into `data` (unaligned: copied out with memcpy). */
static void parse(Reader *r, SwnCheckpoint *c) {
  if (r->size < 8 || memcmp(r->data, MAGIC, 8)) reject(r, "is not a swnc checkpoint");
  take(r, 8);
  uint32_t version = get_u32(r);
  if (version != 1 && version != VERSION)
    reject(r, "is a version %u checkpoint; this program reads versions 1 and %d", version, VERSION);
  c->pools = get_u32(r);
  if (version == 1) c->pools = 1;
  if (c->pools != 1 && c->pools != 2)
    reject(r, "says it holds %u optimizer moment pools", c->pools);
  c->hash = get_u64(r);
  memcpy(c->name, take(r, NAME_BYTES), NAME_BYTES);
  uint64_t done = get_u64(r);
  if (done > (uint64_t)SWN_COUNT_MAX) /* no run reaches it: a forged or damaged header */
    reject(r, "says %llu iterations were trained, more than a run can count (%lld)",
           (unsigned long long)done, (long long)SWN_COUNT_MAX);
  c->iteration = (int64_t)done, c->seed = get_u64(r);
  c->param_words = (int64_t)get_u64(r), c->state_words = (int64_t)get_u64(r);
  if (c->param_words < 0 || c->state_words < 0 || (uint64_t)c->param_words > r->size ||
      (uint64_t)c->state_words > r->size)
    reject(r, "says it holds pools larger than the file");
  c->nparams = (int)get_u32(r), c->nstate = (int)get_u32(r);
  if ((uint64_t)c->nparams + (uint64_t)c->nstate > r->size) reject(r, "has a malformed table");
  c->params = swn_alloc(sizeof *c->params * (size_t)(c->nparams + 1));
  c->state = swn_alloc(sizeof *c->state * (size_t)(c->nstate + 1));
  for (int k = 0; k < c->nparams; k++) {
    SwnCheckpointTensor *t = &c->params[k];
    t->name_len = (int)get_u32(r), t->name = take(r, (size_t)t->name_len);
    t->ndims = (int)get_u32(r);
    if (t->ndims > SWN_CHECKPOINT_MAX_DIMS) reject(r, "has a malformed parameter table");
    t->count = 1;
    for (int d = 0; d < t->ndims; d++) {
      t->dims[d] = (int64_t)get_u64(r);
      if (t->dims[d] < 0 || t->dims[d] > c->param_words)
        reject(r, "has a malformed parameter table");
      t->count *= t->dims[d];
    }
    t->offset = (int64_t)get_u64(r);
    if (t->offset < 0 || t->count > c->param_words || t->offset > c->param_words - t->count)
      reject(r, "has a parameter outside its pool");
  }
  for (int k = 0; k < c->nstate; k++) {
    SwnCheckpointTensor *t = &c->state[k];
    t->name_len = (int)get_u32(r), t->name = take(r, (size_t)t->name_len);
    t->offset = (int64_t)get_u64(r), t->count = (int64_t)get_u64(r);
    t->ndims = 1, t->dims[0] = t->count;
    if (t->offset < 0 || t->count < 0 || t->count > c->state_words ||
        t->offset > c->state_words - t->count)
      reject(r, "has a state tensor outside its pool");
  }
  size_t pbytes = sizeof(float) * (size_t)c->param_words;
  c->param_pool = take(r, pbytes), c->moment_pool = take(r, pbytes * c->pools);
  c->state_pool = take(r, sizeof(float) * (size_t)c->state_words);
  size_t body = r->at;
  uint64_t stored = get_u64(r);
  if (r->at != r->size) reject(r, "has %zu bytes after its end", r->size - r->at);
  if (stored != swn_checksum(SWN_CHECKSUM_START, r->data, body))
    reject(r, "is damaged: its checksum does not match its contents");
}

SwnCheckpoint swn_read_checkpoint(const char *path) {
  Reader r = {.path = path};
  SwnCheckpoint c = {.path = path};
  r.data = c.data = read_file(path, &r.size);
  parse(&r, &c);
  return c;
}

void swn_checkpoint_free(SwnCheckpoint *c) {
  free(c->data), free(c->params), free(c->state);
  *c = (SwnCheckpoint){0};
}

void swn_load_checkpoint(const SwnNetwork *net, const char *path, float *params, float *momentum,
                         float *state, int64_t *iteration, uint64_t *seed) {
  SwnCheckpoint c = swn_read_checkpoint(path);
  Reader r = {.data = c.data, .path = path};
  if (c.hash != net->hash)
    reject(&r, "is a checkpoint of network '%s' (parameter table %016llx), not of '%s' (%016llx)",
           c.name, (unsigned long long)c.hash, net->name, (unsigned long long)net->hash);
  if (c.param_words != net->param_words || c.state_words != net->state_words)
    reject(&r, "holds pools of other sizes than network '%s' needs", net->name);
  if (momentum && (int)c.pools != net->moment_pools)
    reject(&r,
           "holds the state of an optimizer with %s; this program's optimizer %s: resume with "
           "the optimizer it was trained with, or start from its weights with --init-weights",
           c.pools == 2 ? "two moments (adam, adamw)" : "momentum (sgd, lars, easgd)",
           net->moment_pools == 2 ? "has two moments" : "has momentum");
  size_t pbytes = sizeof(float) * (size_t)net->param_words;
  *iteration = c.iteration, *seed = c.seed;
  memcpy(params, c.param_pool, pbytes);
  if (momentum) memcpy(momentum, c.moment_pool, pbytes * c.pools);
  memcpy(state, c.state_pool, sizeof(float) * (size_t)net->state_words);
  free(c.params), free(c.state), free(c.data);
}
