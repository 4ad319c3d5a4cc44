/* swnc tune on the host: the target's kernels are loaded from its shared library in the runtime
 * directory (as `swnc run` loads them; the compiler links no kernel) and timed on buffers of
 * the network's shapes at its batch size, on as many threads as a program of one rank on this
 * machine runs by default (its online CPUs, runtime/train.c): one untimed warm-up, then
 * --repeat runs from cold caches, median; or, where the kernel set estimates its hardware's
 * time, one run. (Timed on one thread, the kernels' default, a tune chose for 2-thread runs
 * from 1-thread times: ResNet-50's res5 1x1 layers explicit, 10-25% slower there than direct.)
 * Every measurement is appended to the file and flushed at once, so an interrupted tune keeps
 * what it measured; a new run reads the file and measures only what is missing. */
#include "tune.h"

#include <dlfcn.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../ir/target.h"
#include "../ir/tuning.h"
#include "../runtime/kernels.h"

/* The kernels tune times, typed from the contract's rows (runtime/kernels.h): each plan's
 * (runtime/conv_plans.h) and the layout transforms. TIMED_KERNEL is defined where they are
 * expanded. */
#define PLAN_TIMED_KERNELS(id, name, kernels, ...)                                                 \
  TIMED_KERNEL(swk_##kernels##_workspace)                                                          \
  TIMED_KERNEL(swk_##kernels##_forward) TIMED_KERNEL(swk_##kernels##_backward)
#define TIMED_KERNELS                                                                              \
  SWN_CONV_PLANS(PLAN_TIMED_KERNELS)                                                               \
  TIMED_KERNEL(swk_to_rcnb)                                                                        \
  TIMED_KERNEL(swk_to_bnrc) TIMED_KERNEL(swk_to_bnrc16) TIMED_KERNEL(swk_bnrc16_to_bnrc)

#define KERNEL_TYPE(ret, name, params) typedef SWN_C_RETURN_##ret(*name##_fn) params;
SWK_KERNELS(KERNEL_TYPE, SWN_C_PARAM)
#undef KERNEL_TYPE

typedef struct Kernels {
#define TIMED_KERNEL(name) name##_fn name;
  TIMED_KERNELS
#undef TIMED_KERNEL
  bool (*swk_estimate)(SwkEstimate *); /* the kernel set's estimate of its hardware's time */
  void (*swk_set_threads)(int);
} Kernels;

static bool load_kernels(const BuildOptions *build, Kernels *k) {
  const char *dir = find_runtime(build, build->target);
  if (!dir) return false;
  char path[4200];
  snprintf(path, sizeof path, "%s/lib/libswnc_%.32s.so", dir, build->target);
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    diag_error((SrcLoc){0}, "cannot load the kernels to time: %s", dlerror());
    return false;
  }
  /* dlsym's object pointer becomes a function pointer through memcpy, as POSIX allows */
#define KERNEL_LOAD(name)                                                                          \
  {                                                                                                \
    void *symbol = dlsym(lib, #name);                                                              \
    if (!symbol) {                                                                                 \
      diag_error((SrcLoc){0}, "'%s' lacks kernel '%s'", path, #name);                              \
      return false;                                                                                \
    }                                                                                              \
    memcpy(&k->name, &symbol, sizeof symbol);                                                      \
  }
#define TIMED_KERNEL KERNEL_LOAD
  TIMED_KERNELS
#undef TIMED_KERNEL
  KERNEL_LOAD(swk_estimate)
  KERNEL_LOAD(swk_set_threads)
#undef KERNEL_LOAD
  return true; /* the library stays loaded until exit */
}

/* Whether the kernel set estimates its hardware's time (sw26010 on its emulator: the chip's,
 * from the emulator's counters): a function of the work a call does, the same on every run. */
static bool estimates(const Kernels *k) {
  SwkEstimate e;
  return k->swk_estimate(&e);
}

/* Seconds on the target: that estimate where the kernel set makes one, else wall time. */
static double now(const Kernels *k) {
  SwkEstimate e;
  if (k->swk_estimate(&e)) return e.seconds;
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* ------------------------------------------------------------------ what to measure */

typedef struct Job {
  const char *kind, *key, *what, *plan; /* plan: with its tiling ("direct:filters.k16") */
  ConvPlan conv_plan;                   /* conv */
  int tiling;                           /* conv: the word its kernel is given; 0: its rule */
  ConvShape conv;
  Shape tensor; /* transform */
  Layout from, to;
} Job;

typedef VEC(Job) JobList;

static bool listed(const JobList *jobs, const char *key) {
  for (int i = 0; i < jobs->len; i++)
    if (!strcmp(jobs->data[i].key, key)) return true;
  return false;
}

static void list_jobs(const Module *m, Arena *a, JobList *jobs) {
  const Graph *g = &m->graph;
  const Target *t = m->options.target;
  for (int i = 0; i < g->ops.len; i++) {
    const Op *op = &g->ops.data[i];
    if (op->kind != OP_CONV) continue;
    ConvShape s = conv_shape(g, op, m->train.batch);
    char key[KEY_MAX];
    conv_shape_key(&s, key);
    if (listed(jobs, key)) continue;
    for (int p = 0; p < PLAN_COUNT; p++) {
      if (target_conv_illegal(t, &s, (ConvPlan)p)) continue;
      for (int c = 0; c <= CONV_BACKWARD; c++) {
        /* a computation the plan cannot do (Winograd's on 7x7 filters) is priced infinite */
        if (isinf(target_conv_cost(t, &s, (ConvPlan)p, (ConvComputation)c, 0))) continue;
        int words[TILINGS_MAX + 1] = {0}; /* the rule, then the plan's other tilings */
        int n = 1 + target_conv_tilings(t, &s, (ConvPlan)p, (ConvComputation)c, words + 1);
        for (int k = 0; k < n; k++) {
          char name[PLAN_NAME_MAX];
          Job j = {.kind = "conv",
                   .key = arena_strdup(a, key),
                   .what = conv_computation_name((ConvComputation)c),
                   .plan = arena_strdup(a, conv_plan_tiling_name(t, (ConvPlan)p, words[k], name)),
                   .conv_plan = (ConvPlan)p,
                   .tiling = words[k],
                   .conv = s};
          vec_push(a, *jobs, j);
        }
      }
    }
  }
  for (int v = 0; v < g->values.len; v++) {
    Shape s = g->values.data[v].shape;
    char key[KEY_MAX];
    if (s.rank != 4) continue;
    transform_key(m->train.batch, s, key);
    if (listed(jobs, key)) continue;
    for (int from = 0; from < LAYOUT_COUNT; from++)
      for (int to = 0; to < LAYOUT_COUNT; to++) {
        const char *word = transform_word((Layout)from, (Layout)to);
        if (!word || isinf(module_transform_cost(m, s, (Layout)from, (Layout)to))) continue;
        Job j = {.kind = "transform",
                 .key = arena_strdup(a, key),
                 .what = word,
                 .plan = "-",
                 .tensor = s,
                 .from = (Layout)from,
                 .to = (Layout)to};
        vec_push(a, *jobs, j);
      }
  }
}

/* ------------------------------------------------------------------ timing */

typedef struct Buffers {
  float *x, *w, *b, *y, *dx, *dw, *db, *ws;
} Buffers;

static float *filled(size_t n) {
  float *p = malloc(sizeof(float) * (n ? n : 1)); /* may fail: a shape too large to time here */
  for (size_t i = 0; p && i < n; i++) p[i] = (float)((i * 2654435761u) % 1000) * 1e-3f - 0.5f;
  return p;
}

/* A plan's forward and backward kernels. */
typedef struct PlanKernels {
  swk_conv_forward_fn forward;
  swk_conv_backward_fn backward;
} PlanKernels;

static PlanKernels plan_kernels(const Kernels *k, ConvPlan plan) {
#define PLAN_KERNELS(id, name, kernels, ...)                                                       \
  [PLAN_##id] = {k->swk_##kernels##_forward, k->swk_##kernels##_backward},
  const PlanKernels all[PLAN_COUNT] = {SWN_CONV_PLANS(PLAN_KERNELS)};
#undef PLAN_KERNELS
  return all[plan];
}

static void run_conv(const Kernels *k, const Job *j, const SwkConv *p, int batch,
                     const Buffers *b) {
  PlanKernels plan = plan_kernels(k, j->conv_plan);
  if (!strcmp(j->what, "forward")) {
    plan.forward(p, batch, b->x, b->w, b->b, b->y, b->ws);
    return;
  }
  bool wgrad = !strcmp(j->what, "wgrad"), dgrad = !strcmp(j->what, "dgrad");
  float *dx = wgrad ? NULL : b->dx, *dw = dgrad ? NULL : b->dw; /* "backward": both */
  plan.backward(p, batch, b->x, b->w, b->y, dx, false, dw, b->db, 1, 1, 0, b->ws);
}

static void run_job(const Kernels *k, const Job *j, const Buffers *b, const SwkConv *p, int batch) {
  if (!strcmp(j->kind, "conv")) {
    run_conv(k, j, p, batch, b);
    return;
  }
  const Shape *s = &j->tensor;
  swk_to_rcnb_fn convert = j->to == LAYOUT_RCNB     ? k->swk_to_rcnb
                           : j->to == LAYOUT_BNRC16 ? k->swk_to_bnrc16
                           : j->from == LAYOUT_RCNB ? k->swk_to_bnrc
                                                    : k->swk_bnrc16_to_bnrc;
  convert((int)s->dim[1], (int)s->dim[2], (int)s->dim[3], batch, b->x, b->y, false);
}

/* In the training step a kernel finds its operands out of cache (the layers between evict
 * them); repeated runs on small tensors would find them in cache and flatter the plan or
 * transform that touches most memory. So before every timed run, write over a buffer larger
 * than the last-level cache. */
enum { EVICT_BYTES = 64 << 20 };

static void evict_caches(void) {
  static volatile char *junk;
  if (!junk) junk = xcalloc(EVICT_BYTES, 1, "the cache-eviction buffer");
  for (size_t i = 0; junk && i < EVICT_BYTES; i += 64) junk[i]++;
}

/* The median seconds of `repeat` runs after a warm-up, each from cold caches; < 0 if memory
 * ran out. An estimated time needs neither warm-up nor repeats: one run. */
static double measure(const Kernels *k, const Job *j, int batch, int repeat) {
  const ConvShape *c = &j->conv;
  SwkConv p = {.ci = (int)c->ci,
               .h = (int)c->h,
               .w = (int)c->w,
               .co = (int)c->co,
               .ho = (int)c->ho,
               .wo = (int)c->wo,
               .kh = (int)c->kh,
               .kw = (int)c->kw,
               .sh = (int)c->sh,
               .sw = (int)c->sw,
               .ph = (int)c->ph,
               .pw = (int)c->pw,
               .dh = (int)c->dh,
               .dw = (int)c->dw,
               .groups = (int)c->groups,
               .bias = true,
               .forward_tiling = j->tiling,
               .dgrad_tiling = j->tiling,
               .wgrad_tiling = j->tiling};
  bool conv = !strcmp(j->kind, "conv");
  /* every layout's floats: the blocked one rounds channels up to 16 */
  size_t elems =
      conv ? 0 : (size_t)batch * (size_t)layout_floats_per_image(j->tensor, LAYOUT_BNRC16);
  size_t ci = (size_t)(c->ci + 15) / 16 * 16, co = (size_t)(c->co + 15) / 16 * 16;
  size_t nx = conv ? (size_t)batch * ci * c->h * c->w : elems,
         ny = conv ? (size_t)batch * co * c->ho * c->wo : elems;
  size_t nw = conv ? (size_t)(c->co * (c->ci / c->groups) * c->kh * c->kw) : 0;
  size_t ws = 0;
  if (conv) {
    size_t sizes[] = {k->swk_conv_workspace(&p), k->swk_conv_implicit_workspace(&p, batch),
                      k->swk_conv_direct_workspace(&p), k->swk_conv_winograd2_workspace(&p),
                      k->swk_conv_winograd4_workspace(&p)};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) ws = sizes[i] > ws ? sizes[i] : ws;
  }
  Buffers b = {filled(nx), filled(nw), filled((size_t)c->co), filled(ny),
               filled(nx), filled(nw), filled((size_t)c->co), filled(ws)};
  double result = -1;
  if (b.x && b.w && b.b && b.y && b.dx && b.dw && b.db && b.ws) {
    bool estimated = estimates(k);
    if (estimated) repeat = 1;
    double *t = xmalloc(sizeof(double) * (size_t)repeat, "timings");
    if (!estimated) run_job(k, j, &b, &p, batch);
    for (int r = 0; r < repeat; r++) {
      if (!estimated) evict_caches();
      double start = now(k);
      run_job(k, j, &b, &p, batch);
      t[r] = now(k) - start;
    }
    qsort(t, (size_t)repeat, sizeof(double), by_value);
    result = t[repeat / 2];
    free(t);
  }
  free(b.x), free(b.w), free(b.b), free(b.y), free(b.dx), free(b.dw), free(b.db), free(b.ws);
  return result;
}

/* ------------------------------------------------------------------ the command */

static const char *utc_now(Arena *a) {
  time_t t = time(NULL);
  struct tm tm;
  gmtime_r(&t, &tm);
  char buf[32];
  strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return arena_strdup(a, buf);
}

static const char *inverse_transform(const char *word) {
  static const char *const pairs[][2] = {{"to_rcnb", "to_bnrc"}, {"to_bnrc16", "bnrc16_to_bnrc"}};
  for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
    for (int side = 0; side < 2; side++)
      if (!strcmp(word, pairs[i][side])) return pairs[i][!side];
  return NULL;
}

/* A transform and its inverse move the same bytes: one timed over 10 times the other (and over
 * 0.1 ms) was disturbed: another process, page faults. (A tune once kept 16 ms beside 0.16 ms
 * and moved a layer to a worse plan for it.) */
static bool disturbed(double a, double b) {
  double hi = fmax(a, b), lo = fmin(a, b);
  return hi > 1e-4 && hi > 10 * lo;
}

typedef struct TuneRun {
  const Kernels *k;
  const TuneOptions *o;
  const char *target, *machine;
  int batch;
  Tuning *done; /* the file's entries and this run's, the latest last */
  FILE *f;
  Arena *a;
} TuneRun;

static void record(TuneRun *r, const Job *j, double seconds) {
  TuningEntry e = {j->kind,       r->target,  j->key,
                   j->what,       j->plan,    seconds > 1e-9 ? seconds : 1e-9,
                   utc_now(r->a), r->machine, {0}};
  tuning_write(r->f, &e);
  fflush(r->f);
  vec_push(r->a, r->done->entries, e);
}

/* After a transform is measured: if it and its inverse disagree as no two such copies can,
 * the slower is measured again (twice the runs) and recorded; a disagreement that stays is
 * said, since the plan choices will follow it. */
static void check_inverse(TuneRun *r, const Job *j) {
  const char *inverse = inverse_transform(j->what);
  const TuningEntry *mine = tuning_find(r->done, "transform", r->target, j->key, j->what, "-",
                                        r->machine),
                    *other = inverse ? tuning_find(r->done, "transform", r->target, j->key, inverse,
                                                   "-", r->machine)
                                     : NULL;
  if (!mine || !other || !disturbed(mine->seconds, other->seconds)) return;
  Job slow = *j;
  if (other->seconds > mine->seconds) slow.what = inverse, slow.from = j->to, slow.to = j->from;
  double before = fmax(mine->seconds, other->seconds),
         again = measure(r->k, &slow, r->batch, 2 * r->o->repeat);
  if (again < 0) return;
  record(r, &slow, again);
  double fast = fmin(mine->seconds, other->seconds);
  fprintf(stderr,
          "swnc tune: %s transform %s %s took %.3f ms, over 10 times its inverse's %.3f ms; "
          "measured again: %.3f ms%s\n",
          disturbed(again, fast) ? "warning:" : "note:", j->key, slow.what, 1e3 * before,
          1e3 * fast, 1e3 * again,
          disturbed(again, fast) ? " (still: was another process running? the plan choices "
                                   "follow these times; tune on an idle machine)"
                                 : "");
}

bool tune_network(const Module *m, const BuildOptions *build, const TuneOptions *o) {
  Arena a = {0};
  bool ok = false;
  Tuning done;
  JobList jobs = {0};
  Kernels k;
  const char *machine = tuning_machine(&a);
  if (!tuning_load(&a, o->output, true, &done) || !load_kernels(build, &k)) goto out;
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  int threads = cores > 1 ? (int)cores : 1;
  k.swk_set_threads(threads);
  fprintf(stderr, "swnc tune: timing on %d thread%s, as a program of one rank here runs\n", threads,
          threads == 1 ? "" : "s");
  list_jobs(m, &a, &jobs);
  int64_t share = target_batch_share(m->options.target, m->train.batch);
  FILE *f = fopen(o->output, "a");
  if (!f) {
    diag_error((SrcLoc){0}, "cannot write tuning file '%s'", o->output);
    goto out;
  }
  TuneRun run = {&k, o, build->target, machine, (int)share, &done, f, &a};
  if (!done.entries.len)
    fprintf(f, "# swnc tuning file (ir/tuning.h): kind target key computation plan seconds date "
               "machine\n");
  int measured = 0, skipped = 0;
  for (int i = 0; i < jobs.len; i++) {
    const Job *j = &jobs.data[i];
    if (tuning_find(&done, j->kind, build->target, j->key, j->what, j->plan, machine)) {
      skipped++;
      continue;
    }
    if (o->limit && measured == o->limit) {
      fprintf(stderr,
              "swnc tune: stopped after %d measurement%s (--limit); run again to continue\n",
              measured, measured == 1 ? "" : "s");
      break;
    }
    double seconds = measure(&k, j, (int)share, o->repeat);
    if (seconds < 0) {
      diag_error((SrcLoc){0}, "out of memory measuring %s %s at batch %lld", j->kind, j->key,
                 (long long)share);
      break;
    }
    record(&run, j, seconds);
    measured++;
    fprintf(stderr, "[%d/%d] %s %s %s %s: %.3f ms\n", i + 1, jobs.len, j->kind, j->key, j->what,
            j->plan, 1e3 * seconds);
    if (!strcmp(j->kind, "transform")) check_inverse(&run, j);
  }
  ok = fclose(f) == 0 && diag_error_count() == 0;
  fprintf(stderr, "swnc tune: %d measured, %d already in '%s'\n", measured, skipped, o->output);
out:
  arena_free(&a);
  return ok;
}
