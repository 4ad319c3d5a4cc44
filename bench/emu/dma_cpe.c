/* CPE kernels for bench/emu/dma.c: the published DMA experiments (dma_bench.h). Each CPE moves
 * its share in rounds of one transfer per array, all 64 CPEs alike. */
#include "athread.h"

#include "dma_bench.h"

static void get(void *ldm, const void *mem, int bytes, int block, int gap) {
  volatile int reply = 0;
  athread_get(PE_MODE, (void *)mem, ldm, bytes, (void *)&reply, 0, gap, block);
  while (reply != 1) {
  }
}

static void put(void *mem, const void *ldm, int bytes, int block, int gap) {
  volatile int reply = 0;
  athread_put(PE_MODE, (void *)ldm, mem, bytes, (void *)&reply, gap, block);
  while (reply != 1) {
  }
}

/* Copy and triad: CPE k's share is bytes [k per_cpe, (k + 1) per_cpe) of each array; the
 * result is computed over x (two 24 KB buffers fit the LDM, three would not). Triad issues its
 * two gets and waits for both at once, as STREAM's triad on the CPEs does. */
static void contiguous(const DmaBench *p) {
  int n = p->bytes / 4;
  float *x = ldm_malloc(p->bytes), *y = ldm_malloc(p->bytes);
  int64_t base = (int64_t)_MYID * p->per_cpe / 4;
  for (int64_t at = base; at < base + p->per_cpe / 4; at += n) {
    if (p->pattern == DMA_TRIAD) {
      volatile int reply = 0;
      athread_get(PE_MODE, p->b + at, x, p->bytes, (void *)&reply, 0, 0, 0);
      athread_get(PE_MODE, p->c + at, y, p->bytes, (void *)&reply, 0, 0, 0);
      dma_wait(&reply, 2);
      for (int i = 0; i < n; i++) x[i] += 3.0f * y[i];
    } else {
      get(x, p->b + at, p->bytes, 0, 0);
    }
    put(p->a + at, x, p->bytes, 0, 0);
  }
  ldm_free(y, p->bytes), ldm_free(x, p->bytes);
}

/* Strided transfers of p->bytes in blocks. Private: gets then puts, CPE k's region its own, a
 * block then a gap of one block. Tiled: gets only (as published), declared tiled; in each
 * stripe of 8 blocks CPE (r, c) takes block r, so a column's 8 CPEs cover the stripe and the
 * columns lie side by side. */
static void strided(const DmaBench *p) {
  char *buf = ldm_malloc(p->bytes);
  int blocks = p->bytes / p->block;
  int64_t span = 2 * (int64_t)p->bytes; /* main memory a transfer covers (private) */
  for (int64_t done = 0; done < p->per_cpe; done += p->bytes) {
    int64_t at;
    int gap;
    if (p->pattern == DMA_PRIVATE) {
      at = (int64_t)_MYID * 2 * p->per_cpe + done / p->bytes * span, gap = p->block;
    } else {
      int64_t stripe = 8 * (int64_t)p->block, column = (int64_t)blocks * stripe;
      at = (done / p->bytes * 8 + _COL) * column + _ROW * (int64_t)p->block, gap = 7 * p->block;
    }
    if (p->pattern == DMA_PRIVATE) {
      get(buf, (char *)p->b + at, p->bytes, p->block, gap);
      put((char *)p->a + at, buf, p->bytes, p->block, gap);
    } else {
      athread_dma_tiled(COL_SCOPE);
      get(buf, (char *)p->b + at, p->bytes, p->block, gap);
    }
  }
  ldm_free(buf, p->bytes);
}

void dma_bench(void *arg) {
  DmaBench p;
  get(&p, arg, sizeof p, 0, 0);
  if (p.pattern == DMA_COPY || p.pattern == DMA_TRIAD)
    contiguous(&p);
  else
    strided(&p);
}
