/* The CPE-cluster emulator's own speed: what a launch (spawn + join) costs, how many RLC values
 * per second a row broadcast moves, and DMA get throughput against memcpy of the same bytes.
 * These figures justify how the emulator runs CPEs (docs/targets.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "athread.h"
#include "emulator_bench.h"

extern void slave_empty(void *), slave_row_broadcast(void *), slave_stream(void *);

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(void) {
  athread_init();
  EmuBench b = {.words = 20000, .floats = 1 << 24};
  float *data = calloc((size_t)b.floats, sizeof(float)),
        *copy = malloc((size_t)b.floats * sizeof(float));
  for (int64_t i = 0; i < b.floats; i++) data[i] = (float)i; /* pages present before timing */
  b.data = data;
  int launches = 200;
  double t = now();
  for (int i = 0; i < launches; i++) athread_spawn(empty, &b), athread_join();
  double launch = (now() - t) / launches;
  t = now();
  athread_spawn(row_broadcast, &b), athread_join();
  double rlc = now() - t;
  double received = (double)athread_last_counters()->rlc_words;
  t = now();
  athread_spawn(stream, &b), athread_join();
  double dma = now() - t;
  memcpy(copy, data, (size_t)b.floats * sizeof(float)); /* pages touched */
  data[1] = 1;
  t = now();
  memcpy(copy, data, (size_t)b.floats * sizeof(float));
  double mem = now() - t;
  if (copy[1] != 1) return 1; /* the copy is used */
  double bytes = (double)b.floats * sizeof(float);
  printf("launch (spawn + join of an empty kernel): %.1f us\n", launch * 1e6);
  printf("RLC row broadcast: %.0f values received in %.3f s: %.2f M values/s (%.0f ns each)\n",
         received, rlc, received / rlc / 1e6, rlc / received * 1e9);
  printf("DMA get, 8 KB transfers: %.2f GB/s; memcpy of the same bytes: %.2f GB/s (ratio %.2f)\n",
         bytes / dma / 1e9, bytes / mem / 1e9, mem / dma);
  athread_halt();
  free(data), free(copy);
  return 0;
}
