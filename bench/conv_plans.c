/* Convolution throughput of the host plans, explicit GEMM (B,N,R,C), implicit GEMM (R,C,N,B),
 * direct on the channel-blocked layout (a first layer reads (B,N,R,C)) and Winograd (winograd2:
 * F(2x2, 3x3) or F(2x2, 5x5), winograd4: F(4x4, 3x3)) on the same layout (stride 1), on the
 * distinct convolution shapes of LeNet, cifar10_quick, VGG-16 and ResNet-50, as GFLOP/s and as a
 * fraction of the FP32 peak measured here by an FMA loop with the same thread count: forward,
 * weight gradient and input gradient. Rates count the definition's arithmetic (Winograd's is an
 * effective rate: it does less). A round times every plan of every row, each by the median of 3
 * runs; the table is timed in ROUNDS rounds one after another and each figure is the median of
 * its rounds'. The direct plan runs its rule's tiling; the column `tiled` has its best other
 * tiling (direct_tiling.h, the ones swnc tune times) for the forward and input gradient, chosen
 * in the first round, timed again in turn with the rule in every round, and named at the end of
 * the line where it beat the rule in those timings. The last columns name the plan the host target's
 * cost model (targets/host/description.c) prices cheapest for the computation alone and its
 * measured rate as a fraction of the fastest's; the last line, their geometric mean: how much the
 * model's choices would cost against the measurements.
 * A second table times the depthwise convolutions of MobileNetV2 and EfficientNet-B0 (3x3 and
 * 5x5, one filter per channel), which do a few flops per float they move: the depthwise plan
 * and the explicit plan's grouped GEMMs, as GB/s of the least traffic each computation needs
 * (forward: x read, y written; weight gradient: x and dY read; input gradient: dY read, dX
 * written; the blocked layout's lanes) and as a fraction of the streaming bandwidth measured
 * here with the same thread count (a copy of two 256 MiB arrays, bytes read and written).
 *   bench/conv_plans [THREADS] [BATCH] [FILTER] [ROUNDS]   (defaults: all cores, 8, "", 3)
 * FILTER: a network's name (or part of it; "" for every shape), or one layer's ("res2 1x1e"). */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "conv_depthwise.h"
#include "conv_direct.h"
#include "direct_tiling.h"
#include "conv_winograd.h"
#include "isa.h"
#include "kernels.h"
#include "target.h"
#include "workspace.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Peak: 12 independent FMA chains in every thread, in the vectors of the instruction set the
 * kernels use (isa.h): 12 accumulators and the multiplier fit the 16 registers AVX2 has. Twelve
 * 16-float generic vectors did not: without AVX-512 they are 24 halves, which spilled to the
 * stack every step (a tenth of the real peak). Best of 5 trials of 40 M steps (about 70 ms on
 * an AVX-512 Xeon: with 10 M, 18 ms, the start of a run read 395 GFLOP/s and its end 424, and
 * two runs minutes apart 356 and 427), since the machine is shared; measured again at the end,
 * so that a machine that slowed down or sped up meanwhile shows (the rows' percentages are of
 * the first). Without AVX2 the chains are 4-wide generic vectors. */
#if defined(__x86_64__) && defined(__GNUC__)
#define FMA_CHAINS(NAME, ATTR, VEC, SET1, FMA, FIRST)                                              \
  static ATTR float NAME(long reps, float seed) {                                                  \
    VEC a[12], m = SET1(1.0000001f);                                                               \
    for (int i = 0; i < 12; i++) a[i] = SET1(seed + (float)i);                                     \
    for (long r = 0; r < reps; r++)                                                                \
      for (int i = 0; i < 12; i++) a[i] = FMA(a[i], m, m);                                         \
    float sink = 0;                                                                                \
    for (int i = 0; i < 12; i++) sink += FIRST(a[i]);                                              \
    return sink;                                                                                   \
  }
FMA_CHAINS(chains_avx512, __attribute__((target("avx512f"))), __m512, _mm512_set1_ps,
           _mm512_fmadd_ps, _mm512_cvtss_f32)
FMA_CHAINS(chains_avx2, __attribute__((target("avx2,fma"))), __m256, _mm256_set1_ps,
           _mm256_fmadd_ps, _mm256_cvtss_f32)
#endif

static float plain_chains(long reps, float seed) {
  typedef float v4 __attribute__((vector_size(16)));
  v4 a[12], m = {1.0000001f, 1.0000001f, 1.0000001f, 1.0000001f};
  for (int i = 0; i < 12; i++) a[i] = m * (seed + (float)i);
  for (long r = 0; r < reps; r++)
    for (int i = 0; i < 12; i++) a[i] = a[i] * m + m;
  float sink = 0;
  for (int i = 0; i < 12; i++) sink += a[i][0];
  return sink;
}

/* The lanes of the chains for the kernels' instruction set, and one thread's chains. */
static int chain_lanes(void) {
  if (!strcmp(host_isa_choice(), "avx512")) return 16;
  return host_isa_runs("avx2") ? 8 : 4;
}

static float run_chains(long reps, float seed) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (chain_lanes() == 16) return chains_avx512(reps, seed);
  if (chain_lanes() == 8) return chains_avx2(reps, seed);
#endif
  return plain_chains(reps, seed);
}

/* The first trial starts the threads and wakes the cores: it is not counted. */
static double fma_peak(int threads) {
  const long reps = 40000000;
  double best = 0;
  for (int trial = 0; trial < 6; trial++) {
    double start = now();
    float sink = 0;
#pragma omp parallel num_threads(threads) reduction(+ : sink)
    sink += run_chains(reps, (float)omp_get_thread_num());
    double rate = 2.0 * chain_lanes() * 12 * (double)reps * threads / (now() - start) / 1e9;
    if (sink == 42) puts("");
    if (trial > 0 && rate > best) best = rate;
  }
  return best;
}

typedef struct Layer {
  const char *net, *name;
  int ci, h, w, co, k, s, p;
} Layer;

static const Layer shapes[] = {
    {"lenet", "conv1", 1, 28, 28, 20, 5, 1, 0},
    {"lenet", "conv2", 20, 12, 12, 50, 5, 1, 0},
    {"cifar10_quick", "conv1", 3, 32, 32, 32, 5, 1, 2},
    {"cifar10_quick", "conv2", 32, 16, 16, 32, 5, 1, 2},
    {"cifar10_quick", "conv3", 32, 8, 8, 64, 5, 1, 2},
    {"vgg16", "conv1_2", 64, 224, 224, 64, 3, 1, 1},
    {"vgg16", "conv2_2", 128, 112, 112, 128, 3, 1, 1},
    {"vgg16", "conv3_2", 256, 56, 56, 256, 3, 1, 1},
    {"vgg16", "conv4_2", 512, 28, 28, 512, 3, 1, 1},
    {"vgg16", "conv5_2", 512, 14, 14, 512, 3, 1, 1},
    {"resnet50", "conv1", 3, 224, 224, 64, 7, 2, 3},
    {"resnet50", "res2 1x1", 256, 56, 56, 64, 1, 1, 0},
    {"resnet50", "res2 1x1e", 64, 56, 56, 256, 1, 1, 0}, /* e: expanding */
    {"resnet50", "res3 1x1", 512, 28, 28, 128, 1, 1, 0},
    {"resnet50", "res3 1x1e", 128, 28, 28, 512, 1, 1, 0},
    {"resnet50", "res4 1x1", 1024, 14, 14, 256, 1, 1, 0},
    {"resnet50", "res4 1x1e", 256, 14, 14, 1024, 1, 1, 0},
    {"resnet50", "res2 3x3", 64, 56, 56, 64, 3, 1, 1},
    {"resnet50", "res3 3x3", 128, 28, 28, 128, 3, 1, 1},
    {"resnet50", "res4 3x3", 256, 14, 14, 256, 3, 1, 1},
    {"resnet50", "res5 3x3", 512, 7, 7, 512, 3, 1, 1},
    {"resnet50", "res5 1x1", 512, 7, 7, 2048, 1, 1, 0},
    {"resnet50", "res3 3x3s2", 128, 56, 56, 128, 3, 2, 1}, /* the first block of a stage */
    {"resnet50", "res4 3x3s2", 256, 28, 28, 256, 3, 2, 1},
    {"resnet50", "res5 3x3s2", 512, 14, 14, 512, 3, 2, 1},
    {"resnet50", "res3 proj", 256, 56, 56, 512, 1, 2, 0}, /* its projection */
    {"resnet50", "res4 proj", 512, 28, 28, 1024, 1, 2, 0},
    {"resnet50", "res5 proj", 1024, 14, 14, 2048, 1, 2, 0},
};

/* Depthwise layers (groups = channels): channels, size, window, stride, as MobileNetV2's and
 * EfficientNet-B0's distinct ones (torchvision's, 224x224 input). */
static const Layer depthwise_shapes[] = {
    {"mobilenet_v2", "dw1 112", 32, 112, 112, 32, 3, 1, 1},
    {"mobilenet_v2", "dw2 112s2", 96, 112, 112, 96, 3, 2, 1},
    {"mobilenet_v2", "dw3 56", 144, 56, 56, 144, 3, 1, 1},
    {"mobilenet_v2", "dw4 56s2", 144, 56, 56, 144, 3, 2, 1},
    {"mobilenet_v2", "dw5 28", 192, 28, 28, 192, 3, 1, 1},
    {"mobilenet_v2", "dw7 28s2", 192, 28, 28, 192, 3, 2, 1},
    {"mobilenet_v2", "dw8 14", 384, 14, 14, 384, 3, 1, 1},
    {"mobilenet_v2", "dw12 14", 576, 14, 14, 576, 3, 1, 1},
    {"mobilenet_v2", "dw14 14s2", 576, 14, 14, 576, 3, 2, 1},
    {"mobilenet_v2", "dw15 7", 960, 7, 7, 960, 3, 1, 1},
    {"efficientnet_b0", "s3 56s2 5x5", 144, 56, 56, 144, 5, 2, 2},
    {"efficientnet_b0", "s3 28 5x5", 240, 28, 28, 240, 5, 1, 2},
    {"efficientnet_b0", "s4 28s2", 240, 28, 28, 240, 3, 2, 1},
    {"efficientnet_b0", "s4 14", 480, 14, 14, 480, 3, 1, 1},
    {"efficientnet_b0", "s5 14 5x5", 480, 14, 14, 480, 5, 1, 2},
    {"efficientnet_b0", "s6 14s2 5x5", 672, 14, 14, 672, 5, 2, 2},
    {"efficientnet_b0", "s6 7 5x5", 1152, 7, 7, 1152, 5, 1, 2},
    {"efficientnet_b0", "s7 7", 1152, 7, 7, 1152, 3, 1, 1},
};

static double median3(double a, double b, double c) {
  return a > b ? (b > c ? b : (a > c ? c : a)) : (a > c ? a : (b > c ? c : b));
}

/* n floats, zero, on a 64-byte boundary as a program's pools and workspace are (a kernel's
 * vector loads of packed filters straddle cache lines otherwise: 7-10% slower); exits if out
 * of memory. */
static float *zeroed(size_t n) {
  size_t bytes = (sizeof(float) * n + 63) / 64 * 64;
  float *p = aligned_alloc(64, bytes ? bytes : 64);
  if (!p) {
    fprintf(stderr, "conv_plans: out of memory (%zu floats)\n", n);
    exit(1);
  }
  return memset(p, 0, bytes ? bytes : 64);
}

typedef struct Buffers {
  float *x, *y, *w, *b, *dx, *dw, *db, *ws, *implicit_ws, *direct_ws, *winograd_ws, *depthwise_ws;
} Buffers;

/* The plans' rows (runtime/conv_plans.h); run() calls the host's kernels of each directly, to
 * time one computation at a time. */
enum {
#define PLAN_ID(id, ...) id,
  SWN_CONV_PLANS(PLAN_ID)
#undef PLAN_ID
      PLANS
};
#define PLAN_NAME(id, name, ...) name,
static const char *const plan_names[] = {SWN_CONV_PLANS(PLAN_NAME)};
#undef PLAN_NAME

/* Whether the plan has this shape's computations (the first table's: dense shapes). */
static bool plan_has(const SwkConv *p, int plan) {
  if (plan == DEPTHWISE) return host_depthwise_legal(p);
  return plan < WINOGRAD2 || host_winograd_legal(p, plan == WINOGRAD2 ? 2 : 4);
}

static void run_winograd(const SwkConv *p, int m, int batch, int computation, const Buffers *b) {
  if (computation == 0)
    host_conv_winograd_forward(p, m, batch, b->x, b->w, b->b, b->y, b->winograd_ws);
  else if (computation == 1)
    host_conv_winograd_weight_gradient(p, m, batch, b->x, b->y, b->dw, b->db, 1, 1, 0,
                                       b->winograd_ws);
  else
    host_conv_winograd_input_gradient(p, m, batch, b->w, b->y, b->dx, false, NULL, b->winograd_ws);
}

/* Seconds of one computation (0 forward, 1 weight gradient, 2 input gradient) in one plan. */
static double run(const SwkConv *p, int batch, int plan, int computation, const Buffers *m) {
  double t0 = now();
  float *dx = computation == 2 ? m->dx : NULL, *dw = computation == 1 ? m->dw : NULL;
  if (plan == DEPTHWISE && computation == 0)
    swk_conv_depthwise_forward(p, batch, m->x, m->w, m->b, m->y, m->depthwise_ws);
  else if (plan == DEPTHWISE)
    swk_conv_depthwise_backward(p, batch, m->x, m->w, m->y, dx, false, dw, m->db, 1, 1, 0,
                                m->depthwise_ws);
  else if (plan == WINOGRAD2 || plan == WINOGRAD4)
    run_winograd(p, plan == WINOGRAD2 ? 2 : 4, batch, computation, m);
  else if (computation == 0 && plan == EXPLICIT)
    swk_conv_forward(p, batch, m->x, m->w, m->b, m->y, m->ws);
  else if (plan == DIRECT && computation == 0) /* buffers hold the blocked layout's floats */
    host_conv_direct_forward(p, batch, m->x, m->w, m->b, m->y, m->direct_ws);
  else if (plan == DIRECT && computation == 1)
    host_conv_direct_weight_gradient(p, batch, m->x, m->y, m->dw, m->db, 1, 1, 0, m->direct_ws);
  else if (plan == DIRECT)
    host_conv_direct_input_gradient(p, batch, m->w, m->y, m->dx, false, NULL, m->direct_ws);
  else if (computation == 0)
    swk_conv_implicit_forward(p, batch, m->x, m->w, m->b, m->y, m->implicit_ws);
  else if (plan == EXPLICIT)
    swk_conv_backward(p, batch, m->x, m->w, m->y, dx, false, dw, m->db, 1, 1, 0, m->ws);
  else
    swk_conv_implicit_backward(p, batch, m->x, m->w, m->y, dx, false, dw, m->db, 1, 1, 0,
                               m->implicit_ws);
  return now() - t0;
}

/* The median seconds of 3 runs of one computation in one plan. */
static double median_seconds(const SwkConv *p, int batch, int plan, int c, const Buffers *m) {
  double t[3];
  for (int rep = 0; rep < 3; rep++) t[rep] = run(p, batch, plan, c, m);
  return median3(t[0], t[1], t[2]);
}

/* The same for the direct plan with a tiling word (0: its rule). */
static double time_tiling(SwkConv *p, int word, int batch, int c, const Buffers *m) {
  p->forward_tiling = p->dgrad_tiling = word;
  double t = median_seconds(p, batch, DIRECT, c, m);
  p->forward_tiling = p->dgrad_tiling = 0;
  return t;
}

/* The direct plan's fastest tiling for computation c (0 forward, 2 input gradient) but the
 * rule's, by one median each; 0 where there are none (the weight gradient has one). */
static int fastest_tiling(SwkConv *p, int batch, int c, const Buffers *m) {
  int words[HOST_TILINGS_MAX], n = 0, best = 0;
  if (c != 1) {
    SwkConv q = c == 2 ? host_direct_transposed(p) : *p;
    n = host_direct_tiling_candidates(&q, batch, words);
  }
  double least = INFINITY;
  for (int i = 0; i < n; i++) {
    double t = time_tiling(p, words[i], batch, c, m);
    if (t < least) least = t, best = words[i];
  }
  return best;
}

/* The fastest of several noisy medians would flatter it, so a round times that tiling and the
 * rule again in turn, 3 times each, and keeps their medians. */
static void time_tiling_against_rule(SwkConv *p, int word, int batch, int c, const Buffers *m,
                                     double *tiled, double *rule) {
  double t[3], r[3];
  for (int rep = 0; rep < 3; rep++)
    t[rep] = time_tiling(p, word, batch, c, m), r[rep] = time_tiling(p, 0, batch, c, m);
  *tiled = median3(t[0], t[1], t[2]), *rule = median3(r[0], r[1], r[2]);
}

/* The plan among those timed (rate > 0) that the host target's model prices cheapest. */
static int model_choice(const SwkConv *p, int batch, int c, const double rate[PLANS]) {
  const Target *host = target_find("host");
  ConvShape s = {batch, p->ci, p->h,  p->w,  p->co, p->ho,     p->wo, p->kh,
                 p->kw, p->sh, p->sw, p->ph, p->pw, p->groups, 1,     1};
  int best = -1;
  double least = INFINITY;
  for (int plan = 0; plan < PLANS; plan++) {
    double t = rate[plan] > 0 ? target_conv_cost(host, &s, (ConvPlan)plan, (ConvComputation)c, 0)
                              : INFINITY;
    if (t < least) least = t, best = plan;
  }
  return best;
}

/* A positive count from argv[i], or the default where absent; 0 for anything else. */
static int count_argument(int argc, char **argv, int i, int absent) {
  if (argc <= i) return absent;
  char *end;
  long v = strtol(argv[i], &end, 10);
  return *argv[i] && !*end && v > 0 && v <= 1 << 20 ? (int)v : 0;
}

/* q's convolution for a layer shape, its first layer reading its input as swnc has it read. */
static SwkConv conv_of(const Layer *s) {
  SwkConv p = {.ci = s->ci,
               .h = s->h,
               .w = s->w,
               .co = s->co,
               .ho = (s->h + 2 * s->p - s->k) / s->s + 1,
               .wo = (s->w + 2 * s->p - s->k) / s->s + 1,
               .kh = s->k,
               .kw = s->k,
               .sh = s->s,
               .sw = s->s,
               .ph = s->p,
               .pw = s->p,
               .dh = 1,
               .dw = 1,
               .groups = 1,
               .bias = true};
  p.x_planar = host_direct_reads_planar(&p);
  return p;
}

static double flops_of(const SwkConv *p, int batch) {
  return 2.0 * batch * p->co * p->ho * p->wo * (p->ci / p->groups) * p->kh * p->kw;
}

static Buffers buffers_for(const SwkConv *p, int batch) {
  size_t nx = host_blocked_floats(batch, p->ci, p->h, p->w),
         ny = host_blocked_floats(batch, p->co, p->ho, p->wo); /* enough for every layout */
  size_t nw = (size_t)p->co * (size_t)(p->ci / p->groups) * p->kh * p->kw;
  Buffers m = {zeroed(nx),
               zeroed(ny),
               zeroed(nw),
               zeroed((size_t)p->co),
               zeroed(nx),
               zeroed(nw),
               zeroed((size_t)p->co),
               zeroed(swk_conv_workspace(p) + 16),
               zeroed(swk_conv_implicit_workspace(p, batch)),
               zeroed(host_conv_direct_workspace(p)),
               NULL,
               host_depthwise_legal(p) ? zeroed(swk_conv_depthwise_workspace(p)) : NULL};
  if (host_winograd_legal(p, 2)) {
    size_t two = host_conv_winograd_workspace(p, 2);
    size_t four = host_winograd_legal(p, 4) ? host_conv_winograd_workspace(p, 4) : 0;
    m.winograd_ws = zeroed(two > four ? two : four);
  }
  for (size_t k = 0; k < nx; k++) m.x[k] = (float)(k % 17) * 0.01f;
  return m;
}

static void free_buffers(Buffers *m) {
  free(m->x), free(m->y), free(m->w), free(m->b), free(m->dx), free(m->dw), free(m->db),
      free(m->ws), free(m->implicit_ws), free(m->direct_ws), free(m->winograd_ws),
      free(m->depthwise_ws);
}

/* The whole table is timed in rounds, one after another, and every figure is the median of
 * its rounds': a state of the shared machine that lasts seconds (here, memory-bound layers
 * 10-20% slower for a while) then moves one round's figure, not the row. */
enum { ROUNDS_MAX = 9, COMPUTATIONS = 3 };

/* A computation's figures in a round, in seconds: each plan's (0 where it has none), then the
 * direct plan's tiling and rule timed in turn. */
enum { TILED = PLANS, RULE, FIGURES };
typedef struct Round {
  double seconds[FIGURES];
} Round;

typedef struct Row {
  const Layer *layer;
  int computation;
  int tiling; /* the fastest tiling but the rule, chosen in the first round; 0: none */
  Round round[ROUNDS_MAX];
} Row;

/* One round of a layer's three rows. */
static void time_layer(Row rows[COMPUTATIONS], int batch, int round) {
  SwkConv p = conv_of(rows[0].layer);
  Buffers m = buffers_for(&p, batch);
  for (int c = 0; c < COMPUTATIONS; c++) {
    Row *row = &rows[c];
    Round *t = &row->round[round];
    for (int plan = 0; plan < PLANS; plan++)
      t->seconds[plan] = plan_has(&p, plan) ? median_seconds(&p, batch, plan, c, &m) : 0;
    if (!round) row->tiling = fastest_tiling(&p, batch, c, &m);
    if (row->tiling)
      time_tiling_against_rule(&p, row->tiling, batch, c, &m, &t->seconds[TILED],
                               &t->seconds[RULE]);
  }
  free_buffers(&m);
}

/* The median of n figures (of two middle ones, their mean). */
static double median_of(const double *v, int n) {
  double s[ROUNDS_MAX] = {0};
  for (int i = 0; i < n; i++) {
    int j = i;
    for (; j > 0 && s[j - 1] > v[i]; j--) s[j] = s[j - 1];
    s[j] = v[i];
  }
  return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/* GFLOP/s of one of a row's figures, its rounds' median. */
static double rate_of(const Row *row, int rounds, double flops, int figure) {
  double seconds[ROUNDS_MAX] = {0};
  for (int r = 0; r < rounds; r++) seconds[r] = row->round[r].seconds[figure];
  return flops / median_of(seconds, rounds) / 1e9;
}

/* A row of the table; returns the model's choice's share of the fastest. */
static double print_row(const Row *row, int rounds, int batch, double peak) {
  static const char *const computations[] = {"forward", "wgrad", "dgrad"};
  const Layer *s = row->layer;
  SwkConv p = conv_of(s);
  double flops = flops_of(&p, batch);
  printf("%-14s %-10s %-8s", s->net, s->name, computations[row->computation]);
  int best = EXPLICIT;
  double rate[PLANS] = {0};
  for (int plan = 0; plan < PLANS; plan++) {
    if (!plan_has(&p, plan)) {
      printf(" %10s %7s", "-", "");
      continue;
    }
    rate[plan] = rate_of(row, rounds, flops, plan);
    if (rate[plan] > rate[best]) best = plan;
    printf(" %10.1f %6.0f%%", rate[plan], 100 * rate[plan] / peak);
  }
  double rule[PLANS];
  memcpy(rule, rate, sizeof rule);
  int tiling = 0;
  if (!row->tiling) {
    printf(" %10s %7s", "-", "");
  } else {
    double tiled = rate_of(row, rounds, flops, TILED), again = rate_of(row, rounds, flops, RULE);
    printf(" %10.1f %6.0f%%", tiled, 100 * tiled / peak);
    if (tiled > again) {
      tiling = row->tiling, rate[DIRECT] = tiled;
      if (rate[DIRECT] > rate[best]) best = DIRECT;
    }
  }
  char name[HOST_TILING_NAME_MAX], fastest[64];
  snprintf(fastest, sizeof fastest, "%s%s%s", plan_names[best], tiling && best == DIRECT ? ":" : "",
           tiling && best == DIRECT ? host_direct_tiling_name(tiling, name) : "");
  int model = model_choice(&p, batch, row->computation, rule);
  double share = rule[model] / rate[best];
  printf("  %-22s %-10s %6.0f%%\n", fastest, plan_names[model], 100 * share);
  return share;
}

/* ------------------------------------------------------------------ depthwise */

/* Bytes read and written per second by a copy of two 256 MiB arrays on `threads` threads,
 * plain stores as the kernels' (best of 5: the machine is shared). */
static double stream_bandwidth(int threads) {
  size_t n = (size_t)64 << 20;
  float *a = zeroed(n), *b = zeroed(n);
  double best = 0;
  for (int trial = 0; trial < 5; trial++) {
    double t0 = now();
#pragma omp parallel for schedule(static) num_threads(threads)
    for (size_t i = 0; i < n; i++) a[i] = b[i] + 1.0f;
    best = fmax(best, 2.0 * sizeof(float) * (double)n / (now() - t0));
  }
  free(a), free(b);
  return best;
}

/* The least bytes any of the three computations moves: two of its tensors once (x and y
 * read, or one read and the other written), in the blocked layout. */
static double depthwise_bytes(const SwkConv *p, int batch) {
  return 4.0 * (double)(host_blocked_floats(batch, p->ci, p->h, p->w) +
                        host_blocked_floats(batch, p->co, p->ho, p->wo));
}

/* One layer's rows: the median over rounds of each plan's median of 3. */
static void depthwise_layer(const Layer *s, int batch, int rounds, double bandwidth, double peak) {
  static const char *const computations[] = {"forward", "wgrad", "dgrad"};
  SwkConv p = conv_of(s);
  p.groups = p.ci, p.x_planar = false;
  Buffers m = buffers_for(&p, batch);
  for (int c = 0; c < COMPUTATIONS; c++) {
    double t[2][ROUNDS_MAX];
    for (int r = 0; r < rounds; r++)
      for (int k = 0; k < 2; k++)
        t[k][r] = median_seconds(&p, batch, k ? DEPTHWISE : EXPLICIT, c, &m);
    double bytes = depthwise_bytes(&p, batch), flops = flops_of(&p, batch);
    double explicit_s = median_of(t[0], rounds), depthwise_s = median_of(t[1], rounds);
    printf("%-16s %-12s %-8s %10.1f %10.1f %8.0f%% %10.1f %8.0f%% %10.1f %8.1fx\n", s->net, s->name,
           computations[c], 1e3 * depthwise_s, flops / depthwise_s / 1e9,
           100 * flops / depthwise_s / 1e9 / peak, bytes / depthwise_s / 1e9,
           100 * bytes / depthwise_s / bandwidth, bytes / explicit_s / 1e9,
           explicit_s / depthwise_s);
  }
  free_buffers(&m);
}

static void depthwise_table(int threads, int batch, int rounds, const char *filter, double peak) {
  int count = 0;
  for (size_t i = 0; i < sizeof depthwise_shapes / sizeof depthwise_shapes[0]; i++)
    count += strstr(depthwise_shapes[i].net, filter) || !strcmp(depthwise_shapes[i].name, filter);
  if (!count) return;
  double bandwidth = stream_bandwidth(threads);
  printf("# depthwise convolution, batch %d, %d threads; streaming bandwidth (copy) %.1f GB/s; "
         "FMA-loop peak %.1f GFLOP/s; GB/s: the least traffic (explicit: the explicit plan's)\n",
         batch, threads, bandwidth / 1e9, peak);
  printf("%-16s %-12s %-8s %10s %10s %9s %10s %9s %10s %9s\n", "network", "layer", "compute",
         "depthw. ms", "GFLOP/s", "of peak", "GB/s", "of bw", "explicit", "speed-up");
  for (size_t i = 0; i < sizeof depthwise_shapes / sizeof depthwise_shapes[0]; i++)
    if (strstr(depthwise_shapes[i].net, filter) || !strcmp(depthwise_shapes[i].name, filter))
      depthwise_layer(&depthwise_shapes[i], batch, rounds, bandwidth, peak);
  printf("# streaming bandwidth at the end %.1f GB/s\n", stream_bandwidth(threads) / 1e9);
}

int main(int argc, char **argv) {
  int threads = count_argument(argc, argv, 1, omp_get_num_procs()),
      batch = count_argument(argc, argv, 2, 8), rounds = count_argument(argc, argv, 4, 3);
  const char *filter = argc > 3 ? argv[3] : "";
  if (!threads || !batch || !rounds || rounds > ROUNDS_MAX || argc > 5) {
    fprintf(stderr,
            "usage: %s [THREADS] [BATCH] [FILTER] [ROUNDS]   (defaults: all cores, 8, \"\", 3)\n"
            "FILTER: a network's name (or part of it; \"\": every shape), or one layer's "
            "(\"res2 1x1e\")\n"
            "ROUNDS: times the table is timed, 1-%d; each figure is the median of its rounds'\n",
            argv[0], ROUNDS_MAX);
    return 2;
  }
  swk_set_threads(threads);
  double peak = fma_peak(threads);
  static Row rows[sizeof shapes / sizeof shapes[0] * COMPUTATIONS];
  int count = 0;
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
    if (strstr(shapes[i].net, filter) || !strcmp(shapes[i].name, filter))
      for (int c = 0; c < COMPUTATIONS; c++)
        rows[count++] = (Row){.layer = &shapes[i], .computation = c};
  for (int r = 0; r < rounds; r++) {
    double start = now();
    for (int i = 0; i < count; i += COMPUTATIONS) time_layer(&rows[i], batch, r);
    fprintf(stderr, "conv_plans: round %d of %d timed in %.0f s\n", r + 1, rounds, now() - start);
  }
  if (count) {
    printf("# convolution, batch %d, %d threads; FMA-loop peak %.1f GFLOP/s; OPENBLAS_CORETYPE=%s; "
           "the median of %d rounds\n",
           batch, threads, peak,
           getenv("OPENBLAS_CORETYPE") ? getenv("OPENBLAS_CORETYPE") : "(unset)", rounds);
    printf("%-14s %-10s %-8s", "network", "layer", "compute");
    for (int plan = 0; plan < PLANS; plan++) printf(" %10s %7s", plan_names[plan], "of peak");
    printf(" %10s %7s", "tiled", "of peak");
    printf("  %-22s %-10s %s\n", "fastest", "model", "of fastest");
    double log_model_share = 0;
    for (int i = 0; i < count; i++)
      log_model_share += log(print_row(&rows[i], rounds, batch, peak));
    printf("# the model's choices (kernels: %s) at %.1f%% of the fastest, geometric mean of %d\n",
           host_isa_choice(), 100 * exp(log_model_share / count), count);
    printf("# FMA-loop peak at the end %.1f GFLOP/s (the rows: %.1f)\n", fma_peak(threads), peak);
  }
  depthwise_table(threads, batch, rounds, filter, peak);
  return 0;
}
