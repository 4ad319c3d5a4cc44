/* The DMA experiments published for the SW26010 (the micro-benchmark suite of Lin et al.,
 * ParCo 2018: STREAM copy and triad by transfer size, strided private blocks; the swDNN paper's
 * column-tiled strided gets) run as emulator kernels (dma_cpe.c), their counters priced by the
 * sw26010 cost model (targets/sw26010/cost/model.c): model MB/s against published MB/s, the
 * bytes counted as get + put. The published copy, triad and tiled figures include the kernel's
 * spawn and its arithmetic, which these kernels do not count: they are data movement.
 * With --fit, also the DMA constants that fit the rows best (the model's are such a fit):
 * minimising the sum of squared log ratios model / published over all rows but the 8-byte
 * ones, by Nelder-Mead over the constants' logarithms from the model's own. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../targets/sw26010/cost/counted.h"
#include "athread.h"
#include "dma_bench.h"

extern void slave_dma_bench(void *);

typedef struct Row {
  DmaPattern pattern;
  int bytes, block;
  double published; /* MB/s; the middle of a published range */
} Row;

static const Row rows[] = {{DMA_COPY, 8, 0, 466},
                           {DMA_COPY, 64, 0, 1864},
                           {DMA_COPY, 128, 0, 2950},
                           {DMA_COPY, 256, 0, 5985},
                           {DMA_COPY, 512, 0, 8784},
                           {DMA_COPY, 1024, 0, 12536},
                           {DMA_COPY, 2048, 0, 15321},
                           {DMA_COPY, 4096, 0, 18393},
                           {DMA_COPY, 8192, 0, 19066},
                           {DMA_COPY, 16384, 0, 20034},
                           {DMA_COPY, 24576, 0, 20423},
                           {DMA_TRIAD, 8, 0, 563},
                           {DMA_TRIAD, 64, 0, 2370},
                           {DMA_TRIAD, 128, 0, 4009},
                           {DMA_TRIAD, 256, 0, 8281},
                           {DMA_TRIAD, 512, 0, 11707},
                           {DMA_TRIAD, 1024, 0, 14755},
                           {DMA_TRIAD, 2048, 0, 17964},
                           {DMA_TRIAD, 4096, 0, 20340},
                           {DMA_TRIAD, 8192, 0, 21300},
                           {DMA_TRIAD, 16384, 0, 22094},
                           {DMA_TRIAD, 24576, 0, 22257},
                           {DMA_PRIVATE, 24576, 8, 458},
                           {DMA_PRIVATE, 24576, 32, 1652},
                           {DMA_PRIVATE, 24576, 128, 5107},
                           {DMA_PRIVATE, 24576, 256, 8562},
                           {DMA_PRIVATE, 24576, 512, 11854},
                           {DMA_PRIVATE, 24576, 1024, 15103},
                           {DMA_PRIVATE, 24576, 2048, 17249},
                           {DMA_PRIVATE, 24576, 4096, 18605},
                           {DMA_PRIVATE, 24576, 8192, 19543},
                           {DMA_TILED, 4096, 128, 23000},
                           {DMA_TILED, 4096, 256, 26650}};

static const char *const names[] = {"STREAM copy", "STREAM triad", "strided, private",
                                    "strided, column-tiled"};

enum { ROWS = sizeof rows / sizeof *rows, PARAMS = 4 };

static SwDmaConstants constants(const double logs[PARAMS]) {
  return (SwDmaConstants){exp(logs[0]), exp(logs[1]), exp(logs[2]), exp(logs[3])};
}

/* The sum of squared log ratios model / published over the fitted rows. */
static double misfit(const double logs[PARAMS], const SwWork work[ROWS]) {
  SwDmaConstants k = constants(logs);
  double sum = 0;
  for (int i = 0; i < ROWS; i++) {
    if (rows[i].block == 0 && rows[i].bytes == 8) continue;
    double model = work[i].dma_bytes / sw_dma_time(&work[i], &k) / 1e6;
    sum += log(model / rows[i].published) * log(model / rows[i].published);
  }
  return sum;
}

/* Nelder-Mead (reflection, expansion, contraction, shrink) from `start`, into `best`. */
static void fit(const double start[PARAMS], const SwWork work[ROWS], double best[PARAMS]) {
  double p[PARAMS + 1][PARAMS], f[PARAMS + 1];
  for (int i = 0; i <= PARAMS; i++) {
    memcpy(p[i], start, sizeof p[i]);
    if (i) p[i][i - 1] += 0.3;
    f[i] = misfit(p[i], work);
  }
  for (int step = 0; step < 5000; step++) {
    int hi = 0, lo = 0;
    for (int i = 1; i <= PARAMS; i++) hi = f[i] > f[hi] ? i : hi, lo = f[i] < f[lo] ? i : lo;
    double c[PARAMS] = {0}, r[PARAMS], e[PARAMS];
    for (int i = 0; i <= PARAMS; i++)
      for (int j = 0; j < PARAMS && i != hi; j++) c[j] += p[i][j] / PARAMS;
    for (int j = 0; j < PARAMS; j++) r[j] = 2 * c[j] - p[hi][j], e[j] = 3 * c[j] - 2 * p[hi][j];
    double fr = misfit(r, work), fe;
    if (fr < f[lo] && (fe = misfit(e, work)) < fr) {
      memcpy(p[hi], e, sizeof e), f[hi] = fe;
    } else if (fr < f[hi]) {
      memcpy(p[hi], r, sizeof r), f[hi] = fr;
    } else {
      for (int j = 0; j < PARAMS; j++) r[j] = (c[j] + p[hi][j]) / 2;
      if ((fr = misfit(r, work)) < f[hi]) {
        memcpy(p[hi], r, sizeof r), f[hi] = fr;
      } else {
        for (int i = 0; i <= PARAMS; i++)
          for (int j = 0; j < PARAMS && i != lo; j++) p[i][j] = (p[i][j] + p[lo][j]) / 2;
        for (int i = 0; i <= PARAMS; i++) f[i] = misfit(p[i], work);
      }
    }
  }
  int lo = 0;
  for (int i = 1; i <= PARAMS; i++) lo = f[i] < f[lo] ? i : lo;
  memcpy(best, p[lo], sizeof p[lo]);
}

static void print_fit(const SwWork work[ROWS]) {
  double start[PARAMS] = {log(SW_DMA.wait_s), log(SW_DMA.block_s), log(SW_DMA.get_bytes_per_s),
                          log(SW_DMA.put_bytes_per_s)},
         best[PARAMS];
  fit(start, work, best);
  SwDmaConstants k = constants(best);
  printf("fitted (model's): wait %.0f ns (%.0f), block %.0f ns (%.0f), get %.1f GB/s (%.1f), "
         "put %.1f GB/s (%.1f)\n",
         k.wait_s * 1e9, SW_DMA.wait_s * 1e9, k.block_s * 1e9, SW_DMA.block_s * 1e9,
         k.get_bytes_per_s / 1e9, SW_DMA.get_bytes_per_s / 1e9, k.put_bytes_per_s / 1e9,
         SW_DMA.put_bytes_per_s / 1e9);
}

int main(int argc, char **argv) {
  bool refit = argc == 2 && !strcmp(argv[1], "--fit");
  if (argc > 2 || (argc == 2 && !refit)) {
    fprintf(stderr, "usage: %s [--fit]\n", argv[0]);
    return 2;
  }
  athread_init();
  enum { PER_CPE = 96 * 1024 };
  size_t bytes = 2 * 64 * (size_t)PER_CPE; /* strided patterns leave gaps */
  DmaBench b = {.per_cpe = PER_CPE};
  b.a = calloc(bytes, 1), b.b = calloc(bytes, 1), b.c = calloc(bytes, 1);
  if (!b.a || !b.b || !b.c) return 1;
  printf("%-22s %9s %7s %14s %12s %7s\n", "experiment", "transfer", "block", "published MB/s",
         "model MB/s", "model/");
  SwWork work[ROWS];
  for (size_t i = 0; i < ROWS; i++) {
    const Row *r = &rows[i];
    b.pattern = r->pattern, b.bytes = r->bytes, b.block = r->block;
    athread_spawn(dma_bench, &b);
    athread_join();
    SwWork w = work[i] = sw_counted_work(athread_last_counters());
    double model = w.dma_bytes / sw_cpe_time(&w).total / 1e6;
    printf("%-22s %9d %7d %14.0f %12.0f %6.2fx\n", names[r->pattern], r->bytes, r->block,
           r->published, model, model / r->published);
  }
  athread_halt();
  free(b.a), free(b.b), free(b.c);
  if (refit) print_fit(work);
  return 0;
}
