/* CPE kernels for bench/emulator.c: an empty kernel (launch cost), a row broadcast over RLC
 * (register communication throughput) and a streaming DMA get (copy throughput). */
#include "athread.h"

#include "emulator_bench.h"

void empty(void *arg) { (void)arg; }

/* Column 0 of every row broadcasts `words` values along its row; the other 7 receive them. */
void row_broadcast(void *arg) {
  const EmuBench *b = arg;
  doublev4 v = {1, 2, 3, 4}, sum = {0};
  if (_COL == 0)
    for (int64_t i = 0; i < b->words; i++) REG_PUTR(v, 8);
  else
    for (int64_t i = 0; i < b->words; i++) {
      REG_GETR(v);
      sum += v;
    }
  (void)sum;
}

/* Every CPE reads its 1/64 of `floats` in 8 KB transfers. */
void stream(void *arg) {
  const EmuBench *b = arg;
  enum { CHUNK = 2048 };
  float *buf = ldm_malloc(CHUNK * sizeof(float));
  volatile int reply = 0;
  int64_t per = b->floats / 64, first = per * _MYID, n = 0;
  for (int64_t i = 0; i < per; i += CHUNK, n++) {
    int len = (int)((per - i < CHUNK ? per - i : CHUNK) * (int64_t)sizeof(float));
    athread_get(PE_MODE, (void *)(b->data + first + i), buf, len, (void *)&reply, 0, 0, 0);
    while (reply != n + 1) {
    }
  }
  ldm_free(buf, CHUNK * sizeof(float));
}
