/* CPE-side helpers shared by the kernels: blocking DMA of a contiguous or strided region (the
 * reply counter lives on the CPE's stack, which is LDM on the chip), and the widening of floats
 * to the 256-bit double words that register communication carries (the SW26010 as swCaffe describes it). */
#ifndef SWNC_SW26010_CPE_H
#define SWNC_SW26010_CPE_H

#include <stdbool.h>

#include <dma.h>
#include <simd.h>
#include <slave.h>

/* The flops a kernel does, for the emulator's counters (and the cost model, which prices
 * scalar and 4-wide vector arithmetic apart); nothing on the chip, whose toolchain has no such
 * call. */
#ifdef ATHREAD_EMULATOR
#define cpe_count_flops(n) athread_count_flops(n)
#define cpe_count_vector_flops(n) athread_count_vector_flops(n)
#define cpe_count_ldm(n) athread_count_ldm_ops(n)
#else
#define cpe_count_flops(n) ((void)0)
#define cpe_count_vector_flops(n) ((void)0)
#define cpe_count_ldm(n) ((void)0)
#endif

/* The next strided transfer takes, with the same-numbered ones so declared of the other 7 CPEs
 * of its mesh row (ROW_SCOPE) or column (COL_SCOPE), adjacent blocks: the group's requests
 * cover contiguous memory (the emulator checks it and counts the pieces for the cost model; on
 * the chip the requests simply are). */
#ifdef ATHREAD_EMULATOR
#define cpe_dma_tiled(with) athread_dma_tiled(with)
#else
#define cpe_dma_tiled(with) ((void)0)
#endif

/* The next transfer is double-buffered: issued before arithmetic it does not feed and waited
 * for (cpe_wait) after it (the emulator checks and counts it apart for the cost model). */
#ifdef ATHREAD_EMULATOR
#define cpe_dma_overlapped() athread_dma_overlapped()
#else
#define cpe_dma_overlapped() ((void)0)
#endif

/* Issues a get (blocks of bsize bytes, stride bytes apart in memory; 0 and 0: contiguous)
 * counted on *reply, without waiting; cpe_wait waits for `count` such and resets the counter. */
static inline void cpe_get_async(void *ldm, const void *mem, int bytes, int bsize, int stride,
                                 volatile int *reply) {
  athread_get(PE_MODE, (void *)mem, ldm, bytes, (void *)reply, 0, stride, bsize);
}

static inline void cpe_wait(volatile int *reply, int count) {
  dma_wait(reply, count);
  *reply = 0;
}

static inline void cpe_get(void *ldm, const void *mem, int bytes) {
  volatile int reply = 0;
  athread_get(PE_MODE, (void *)mem, ldm, bytes, (void *)&reply, 0, 0, 0);
  while (reply != 1) {
  }
}

/* `bytes` in blocks of `bsize`, each `stride` bytes after the previous block's end. */
static inline void cpe_get_strided(void *ldm, const void *mem, int bytes, int bsize, int stride) {
  volatile int reply = 0;
  athread_get(PE_MODE, (void *)mem, ldm, bytes, (void *)&reply, 0, stride, bsize);
  while (reply != 1) {
  }
}

static inline void cpe_put(void *mem, const void *ldm, int bytes) {
  volatile int reply = 0;
  athread_put(PE_MODE, (void *)ldm, mem, bytes, (void *)&reply, 0, 0);
  while (reply != 1) {
  }
}

static inline void cpe_put_strided(void *mem, const void *ldm, int bytes, int bsize, int stride) {
  volatile int reply = 0;
  athread_put(PE_MODE, (void *)ldm, mem, bytes, (void *)&reply, stride, bsize);
  while (reply != 1) {
  }
}

/* Sends `floats` (a multiple of 4) to every other CPE of this row (row) or column, 4 per word:
 * per word 4 loads and a put on the memory pipeline (cpe_receive: a get and 4 stores). */
static inline void cpe_broadcast(const float *v, int floats, int row) {
  cpe_count_ldm(5LL * floats / 4);
  for (int i = 0; i < floats; i += 4) {
    doublev4 w = {v[i], v[i + 1], v[i + 2], v[i + 3]};
    if (row)
      REG_PUTR(w, 8);
    else
      REG_PUTC(w, 8);
  }
}

static inline void cpe_receive(float *v, int floats, int row) {
  cpe_count_ldm(5LL * floats / 4);
  for (int i = 0; i < floats; i += 4) {
    doublev4 w;
    if (row)
      REG_GETR(w);
    else
      REG_GETC(w);
    v[i] = (float)w[0], v[i + 1] = (float)w[1], v[i + 2] = (float)w[2], v[i + 3] = (float)w[3];
  }
}

/* Every CPE's `mine` summed over the mesh in a fixed order, by register communication: along
 * each row from column 7 to column 0, then down column 0 from row 7 to row 0. The total on
 * CPE 0 (0 elsewhere). */
static inline double cpe_mesh_sum(double mine) {
  doublev4 v = {mine, 0, 0, 0};
  if (_COL < 7) {
    doublev4 r;
    REG_GETR(r);
    v[0] += r[0];
  }
  if (_COL > 0) {
    REG_PUTR(v, _COL - 1);
    return 0;
  }
  if (_ROW < 7) {
    doublev4 r;
    REG_GETC(r);
    v[0] += r[0];
  }
  if (_ROW > 0) REG_PUTC(v, _ROW - 1);
  return v[0];
}

#endif
