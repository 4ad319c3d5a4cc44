/* The athread interface of the Sunway SW26010 toolchain (the Sunway toolchain's, as public SW26010 code uses it), as the emulator
 * provides it: MPE side (init / spawn / join / halt) and CPE side (id, DMA, reply counters,
 * descriptors, synchronisation, LDM, register communication). Kernels written against these
 * names build for the real machine unchanged; here each of the 64 CPEs of a core group is a
 * coroutine run by the MPE thread at athread_join, LDM is a per-CPE budget of 64 KB, and DMA and RLC follow the hardware's rules, which
 * the emulator enforces with errors naming the kernel and the CPE (docs/targets.md). */
#ifndef SWNC_ATHREAD_H
#define SWNC_ATHREAD_H

/* Code that needs the emulator's extras (counters, checking mode) tests this. */
#define ATHREAD_EMULATOR 1

#include <stddef.h>
#include <stdint.h>

/* ----------------------------------------------------------------- MPE side */
int athread_init(void);
int athread_halt(void);
/* Runs `f(arg)` on all 64 CPEs of this core group; `name` names it in errors and counters. */
int __real_athread_spawn(void (*f)(void *), void *arg, const char *name);
#define athread_spawn(f, arg) __real_athread_spawn((void (*)(void *))slave_##f, (void *)(arg), #f)
#define SLAVE_FUN(f) slave_##f
int athread_join(void);

/* ----------------------------------------------------------------- CPE side */
enum { ATHREAD_CPES = 64, ATHREAD_ROWS = 8, ATHREAD_COLS = 8, ATHREAD_LDM_BYTES = 64 * 1024 };

int athread_get_id(int core); /* core -1: this CPE, 0..63 */
#define _MYID athread_get_id(-1)
#define _ROW (athread_get_id(-1) / 8)
#define _COL (athread_get_id(-1) % 8)

typedef enum { PE_MODE, BCAST_MODE, ROW_MODE, BROW_MODE, RANK_MODE } dma_mode;
typedef enum { ARRAY_SCOPE, ROW_SCOPE, COL_SCOPE } scope;

/* len: total bytes; bsize: contiguous bytes per block in main memory; stride: bytes skipped in
 * main memory between blocks (0 and 0: one contiguous block); the LDM side is contiguous. The
 * transfer completes at once and then increments *reply by one. BCAST_MODE (get only): every
 * CPE selected by `mask` (a bit per row) receives the data at dst_ldm of its own LDM. */
int athread_get(dma_mode mode, void *src_mem, void *dst_ldm, int len, void *reply, char mask,
                int stride, int bsize);
int athread_put(dma_mode mode, void *src_ldm, void *dst_mem, int len, void *reply, int stride,
                int bsize);

typedef enum { DMA_GET, DMA_PUT } DMA_OP;
typedef struct dma_desc {
  DMA_OP op;
  dma_mode mode;
  int size, bsize, stepsize;
  char mask;
  volatile int *reply;
} dma_desc;
#define dma_set_op(d, v) ((d)->op = (v))
#define dma_set_mode(d, v) ((d)->mode = (v))
#define dma_set_size(d, v) ((d)->size = (v))
#define dma_set_bsize(d, v) ((d)->bsize = (v))
#define dma_set_stepsize(d, v) ((d)->stepsize = (v))
#define dma_set_mask(d, v) ((d)->mask = (char)(v))
#define dma_set_reply(d, v) ((d)->reply = (volatile int *)(v))
/* Main memory first, LDM second, for gets and puts alike. */
void dma(dma_desc d, void *mem, void *ldm);
void dma_wait(volatile int *reply, int count);
/* Emulator only: declares the CPE's next transfer (a strided one, in PE_MODE) tiled with its
 * mesh row (ROW_SCOPE) or column (COL_SCOPE): with the same-numbered transfers so declared of
 * the other 7 CPEs there it covers adjacent blocks (emu/tiling.h). The join checks the claim;
 * the counters then count the contiguous pieces the 8 form together as their blocks. */
void athread_dma_tiled(scope with);
/* Emulator only: declares the CPE's next transfer double-buffered: issued before arithmetic it
 * does not feed and waited for (dma_wait) only after it, so on the chip it streams under that
 * arithmetic. Counted apart (AthreadCounters overlapped_*) for the cost model; dma_wait checks
 * that arithmetic was counted since the batch was issued, the join that it was waited for. */
void athread_dma_overlapped(void);

/* Waits for the CPEs of the scope (a mask of 16 bits for the array, 8 for a row or column). */
void athread_syn(scope s, int mask);

/* LDM: `__thread_local` variables (each CPE its own copy, at the same address in every CPE, as
 * on the chip) and ldm_malloc'd blocks share each CPE's ATHREAD_LDM_BYTES. The variables of the
 * whole program are static LDM, as the slave linker lays them out. */
#define __thread_local __attribute__((section("swemu_ldm")))
void *ldm_malloc(size_t bytes);
void ldm_free(void *p, size_t bytes);

/* ------------------------------------------------------- register communication (RLC) */
typedef double doublev4 __attribute__((vector_size(32)));
typedef float floatv4 __attribute__((vector_size(16)));
typedef int intv8 __attribute__((vector_size(32)));

/* dst 0..7: that column of my row (REG_PUTR) or that row of my column (REG_PUTC); 8: all of
 * them but me. A put blocks while the receiver's buffer is full, a get while its own is empty;
 * a pattern in which every CPE waits is reported as a deadlock. */
void athread_putr(doublev4 v, int dst);
void athread_putc(doublev4 v, int dst);
doublev4 athread_getr(void);
doublev4 athread_getc(void);
#define REG_PUTR(v, dst) athread_putr((v), (dst))
#define REG_PUTC(v, dst) athread_putc((v), (dst))
#define REG_GETR(v) ((v) = athread_getr())
#define REG_GETC(v) ((v) = athread_getc())
#define simd_putr(v, dst) athread_putr((v), (dst))
#define simd_putc(v, dst) athread_putc((v), (dst))
#define simd_getr(v) athread_getr()
#define simd_getc(v) athread_getc()

/* ------------------------------------------------------------------ SIMD */
static inline doublev4 simd_set_doublev4(double a, double b, double c, double d) {
  return (doublev4){a, b, c, d};
}
static inline floatv4 simd_set_floatv4(float a, float b, float c, float d) {
  return (floatv4){a, b, c, d};
}
#define simd_load(v, p) ((v) = *(__typeof__(v) *)(p))
#define simd_loadu(v, p) __builtin_memcpy(&(v), (p), sizeof(v))
#define simd_store(v, p) (*(__typeof__(v) *)(p) = (v))
#define simd_storeu(v, p) __builtin_memcpy((p), &(v), sizeof(v))
#define simd_loade(v, p) ((v) = (__typeof__(v)){0} + *(p)) /* one element, in every lane */
#define simd_vmad(a, b, c) ((a) * (b) + (c))
/* simd_vshff(x, y, n): lanes 0 and 1 from y, lanes 2 and 3 from x, lane k taking the lane that
 * bits 2k+1..2k of n name (the toolchain's vshff: shff(x, y, 0x88) of x = [x0 x1 x2 x3] and
 * y = [y0 y1 y2 y3] is [y0 y2 x0 x2]). */
static inline floatv4 swemu_vshff_floatv4(floatv4 x, floatv4 y, int n) {
  return (floatv4){y[n & 3], y[(n >> 2) & 3], x[(n >> 4) & 3], x[(n >> 6) & 3]};
}
static inline doublev4 swemu_vshff_doublev4(doublev4 x, doublev4 y, int n) {
  return (doublev4){y[n & 3], y[(n >> 2) & 3], x[(n >> 4) & 3], x[(n >> 6) & 3]};
}
#define simd_vshff(x, y, n)                                                                        \
  _Generic((x), floatv4 : swemu_vshff_floatv4, doublev4 : swemu_vshff_doublev4)((x), (y), (n))
/* simd_vsellt(a, b, c): lane k is b's where a's is below 0, else c's; simd_vselle: at or
 * below 0 (the toolchain's vsellt / vselle, as Sunway codes use them: fc = vsellt(r - R, 1, fc)
 * keeps 1 where r < R). */
#define SWEMU_SELECT(name, test)                                                                   \
  static inline floatv4 name##_floatv4(floatv4 a, floatv4 b, floatv4 c) {                          \
    return (floatv4){a[0] test 0 ? b[0] : c[0], a[1] test 0 ? b[1] : c[1],                         \
                     a[2] test 0 ? b[2] : c[2], a[3] test 0 ? b[3] : c[3]};                        \
  }                                                                                                \
  static inline doublev4 name##_doublev4(doublev4 a, doublev4 b, doublev4 c) {                     \
    return (doublev4){a[0] test 0 ? b[0] : c[0], a[1] test 0 ? b[1] : c[1],                        \
                      a[2] test 0 ? b[2] : c[2], a[3] test 0 ? b[3] : c[3]};                       \
  }
SWEMU_SELECT(swemu_vsellt, <)
SWEMU_SELECT(swemu_vselle, <=)
#undef SWEMU_SELECT
#define simd_vsellt(a, b, c)                                                                       \
  _Generic((a), floatv4 : swemu_vsellt_floatv4, doublev4 : swemu_vsellt_doublev4)((a), (b), (c))
#define simd_vselle(a, b, c)                                                                       \
  _Generic((a), floatv4 : swemu_vselle_floatv4, doublev4 : swemu_vselle_doublev4)((a), (b), (c))
#define simd_vmas(a, b, c) ((a) * (b) - (c))
#define simd_vmuld(a, b) ((a) * (b))
#define simd_vaddd(a, b) ((a) + (b))
#define simd_vmuls(a, b) ((a) * (b))
#define simd_vadds(a, b) ((a) + (b))

/* ------------------------------------------------------------------ counters */
/* Per launch (spawn .. join) of this core group, summed over its CPEs. */
typedef struct AthreadCounters {
  const char *kernel;
  int64_t dma_get_bytes, dma_put_bytes, dma_transfers;
  int64_t dma_by_size[4]; /* transfers of < 256 B, < 2 KB, < 8 KB, larger */
  int64_t dma_by_mode[5]; /* dma_mode */
  int64_t dma_blocks;   /* contiguous blocks moved (strided transfers have many; one when tiled) */
  int64_t dma_tiled;    /* transfers declared tiled (athread_dma_tiled), blocks counted as the
                          contiguous pieces each 8 form together */
  int64_t dma_batched;  /* transfers a dma_wait waited for together with an earlier one */
  int64_t rlc_words;    /* 256-bit values received */
  int64_t flops;        /* declared by kernels with athread_count_flops */
  int64_t vector_flops; /* the part of them done by 4-wide vector instructions */
  int64_t ldm_ops;      /* LDM loads and stores and register-communication puts and gets issued
                      beside the counted arithmetic (copies, transposes, zeroing, packing),
                      declared with athread_count_ldm_ops: the memory pipeline's work */
  int64_t ldm_high_water; /* bytes, the largest of any CPE */
  /* the part of the DMA counts above declared overlapped (athread_dma_overlapped) */
  int64_t overlapped_get_bytes, overlapped_put_bytes, overlapped_transfers, overlapped_batched,
      overlapped_blocks;
} AthreadCounters;
void athread_count_flops(int64_t flops);            /* CPE side: scalar arithmetic */
void athread_count_vector_flops(int64_t flops);     /* CPE side: vector arithmetic */
void athread_count_ldm_ops(int64_t ops);            /* CPE side: memory-pipeline work */
const AthreadCounters *athread_last_counters(void); /* MPE side, after join */

#endif
