/* The CPE-cluster emulator (athread.h): one core group's 64 CPEs as threads.
 *
 * Why threads, not coroutines: athread kernels keep per-CPE state in `__thread_local`
 * variables, which only per-CPE threads give each CPE without rewriting the kernels. Results are
 * deterministic anyway: DMA completes synchronously, RLC is FIFO per receiver, and kernels that
 * race on memory are wrong on the real chip too. All blocking (RLC full/empty, synchronisation)
 * goes through one lock and condition, which also makes deadlock detection exact: when every
 * CPE not done waits for a condition that is false, none can ever proceed. */
#define _GNU_SOURCE /* dl_iterate_phdr */
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "athread.h"

enum { RLC_DEPTH = 4, ARENA_ALIGN = 32 };
typedef enum { RUNNING, WAIT_GETR, WAIT_GETC, WAIT_PUTR, WAIT_PUTC, WAIT_SYN, DONE } CpeState;
static const char *const state_names[] = {"running", "REG_GETR (row buffer empty)", "REG_GETC (column buffer empty)",
                                          "REG_PUTR (row buffer full)", "REG_PUTC (column buffer full)",
                                          "athread_syn", "done"};

typedef struct Fifo {
  doublev4 value[RLC_DEPTH];
  int head, count;
} Fifo;

typedef struct Cpe {
  int id;
  CpeState state;
  bool (*ready)(const void *); /* what a waiting CPE waits for */
  const void *ready_arg;
  Fifo row_in, col_in;
  char *arena;               /* ldm_malloc's part of the LDM */
  size_t arena_top, arena_cap, high_water;
  char *thread_pointer;      /* where its thread-local (LDM) variables are */
  AthreadCounters counts;
} Cpe;

typedef struct Group {
  pthread_mutex_t lock;
  pthread_cond_t changed;
  Cpe cpe[ATHREAD_CPES];
  pthread_t thread[ATHREAD_CPES];
  void (*kernel)(void *);
  void *arg;
  const char *name;
  int started;
  int syn_count[3][ATHREAD_ROWS], syn_generation[3][ATHREAD_ROWS];
  size_t static_ldm;
  AthreadCounters last;
} Group;

static Group *group;            /* the MPE's core group */
static __thread Cpe *self;      /* on a CPE thread */

/* ------------------------------------------------------------------ errors */

static _Noreturn void cpe_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "sw26010 emulator: error: kernel '%s', CPE %d (row %d, column %d): ", group ? group->name : "?",
          self ? self->id : -1, self ? self->id / 8 : -1, self ? self->id % 8 : -1);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(1);
}

static void need_cpe(const char *what) {
  if (!self) {
    fprintf(stderr, "sw26010 emulator: error: %s called outside a CPE kernel\n", what);
    exit(1);
  }
}

/* ------------------------------------------------------------------ blocking */

/* With the lock held: a deadlock is every CPE not done waiting for something still not so
 * (a CPE woken but not yet running again has its condition true). */
static void check_deadlock(void) {
  bool any = false;
  for (int i = 0; i < ATHREAD_CPES; i++) {
    const Cpe *c = &group->cpe[i];
    if (c->state == DONE) continue;
    if (c->state == RUNNING || c->ready(c->ready_arg)) return;
    any = true;
  }
  if (!any) return;
  fprintf(stderr, "sw26010 emulator: error: kernel '%s' deadlocked: every running CPE waits:\n", group->name);
  for (int i = 0; i < ATHREAD_CPES; i++)
    if (group->cpe[i].state != DONE && group->cpe[i].state != RUNNING)
      fprintf(stderr, "  CPE %d (row %d, column %d) in %s\n", i, i / 8, i % 8, state_names[group->cpe[i].state]);
  exit(1);
}

/* Waits (lock held) until `ready(arg)`. */
static void wait_until(CpeState why, bool (*ready)(const void *), const void *arg) {
  if (ready(arg)) return;
  self->state = why, self->ready = ready, self->ready_arg = arg;
  check_deadlock();
  while (!ready(arg)) pthread_cond_wait(&group->changed, &group->lock);
  self->state = RUNNING;
}

/* ------------------------------------------------------------------ MPE side */

typedef struct TlsQuery {
  uintptr_t address;
  size_t bytes;
} TlsQuery;

static int module_tls(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  TlsQuery *q = data;
  bool holds = false;
  size_t tls = 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *h = &info->dlpi_phdr[i];
    uintptr_t start = info->dlpi_addr + h->p_vaddr;
    if (h->p_type == PT_LOAD && q->address >= start && q->address < start + h->p_memsz) holds = true;
    if (h->p_type == PT_TLS) tls = h->p_memsz;
  }
  if (holds) q->bytes = tls;
  return holds;
}

/* The thread-local bytes of the module (executable or library) holding the kernel: its
 * `__thread_local` LDM variables. */
static size_t static_ldm_of(void (*f)(void *)) {
  TlsQuery q = {(uintptr_t)f, 0};
  dl_iterate_phdr(module_tls, &q);
  return q.bytes;
}

int athread_init(void) {
  if (group) return 0;
  group = calloc(1, sizeof *group);
  if (!group) return -1;
  pthread_mutex_init(&group->lock, NULL);
  pthread_cond_init(&group->changed, NULL);
  for (int i = 0; i < ATHREAD_CPES; i++) {
    group->cpe[i].id = i;
    group->cpe[i].arena = aligned_alloc(ARENA_ALIGN, ATHREAD_LDM_BYTES);
    if (!group->cpe[i].arena) return -1;
  }
  return 0;
}

int athread_halt(void) {
  if (!group) return 0;
  for (int i = 0; i < ATHREAD_CPES; i++) free(group->cpe[i].arena);
  pthread_mutex_destroy(&group->lock);
  pthread_cond_destroy(&group->changed);
  free(group);
  group = NULL;
  return 0;
}

static bool all_started(const void *unused) {
  (void)unused;
  return group->started == ATHREAD_CPES;
}

static void *run_cpe(void *arg) {
  self = arg;
  self->thread_pointer = __builtin_thread_pointer();
  pthread_mutex_lock(&group->lock); /* every CPE's LDM exists before any kernel code runs */
  group->started++;
  pthread_cond_broadcast(&group->changed);
  while (!all_started(NULL)) pthread_cond_wait(&group->changed, &group->lock);
  pthread_mutex_unlock(&group->lock);
  group->kernel(group->arg);
  pthread_mutex_lock(&group->lock);
  self->state = DONE;
  check_deadlock();
  pthread_cond_broadcast(&group->changed);
  pthread_mutex_unlock(&group->lock);
  return NULL;
}

int __real_athread_spawn(void (*f)(void *), void *arg, const char *name) {
  if (!group && athread_init()) return -1;
  group->kernel = f, group->arg = arg, group->name = name;
  group->started = 0;
  memset(group->syn_count, 0, sizeof group->syn_count);
  group->static_ldm = static_ldm_of(f);
  if (group->static_ldm > ATHREAD_LDM_BYTES) {
    fprintf(stderr, "sw26010 emulator: error: kernel '%s': %zu bytes of __thread_local LDM, more than the %d of a CPE\n",
            name, group->static_ldm, ATHREAD_LDM_BYTES);
    exit(1);
  }
  for (int i = 0; i < ATHREAD_CPES; i++) {
    Cpe *c = &group->cpe[i];
    c->state = RUNNING;
    c->row_in = c->col_in = (Fifo){0};
    c->arena_top = 0, c->arena_cap = ATHREAD_LDM_BYTES - group->static_ldm, c->high_water = group->static_ldm;
    c->counts = (AthreadCounters){0};
  }
  for (int i = 0; i < ATHREAD_CPES; i++)
    if (pthread_create(&group->thread[i], NULL, run_cpe, &group->cpe[i])) return -1;
  return 0;
}

int athread_join(void) {
  if (!group) return -1;
  for (int i = 0; i < ATHREAD_CPES; i++) pthread_join(group->thread[i], NULL);
  AthreadCounters *t = &group->last;
  *t = (AthreadCounters){.kernel = group->name};
  for (int i = 0; i < ATHREAD_CPES; i++) {
    const AthreadCounters *c = &group->cpe[i].counts;
    t->dma_get_bytes += c->dma_get_bytes, t->dma_put_bytes += c->dma_put_bytes;
    t->dma_transfers += c->dma_transfers, t->dma_blocks += c->dma_blocks;
    for (int k = 0; k < 4; k++) t->dma_by_size[k] += c->dma_by_size[k];
    for (int k = 0; k < 5; k++) t->dma_by_mode[k] += c->dma_by_mode[k];
    t->rlc_words += c->rlc_words, t->flops += c->flops;
    if ((int64_t)group->cpe[i].high_water > t->ldm_high_water) t->ldm_high_water = (int64_t)group->cpe[i].high_water;
  }
  return 0;
}

const AthreadCounters *athread_last_counters(void) { return group ? &group->last : NULL; }

/* ------------------------------------------------------------------ CPE side: id, LDM */

int athread_get_id(int core) {
  if (core >= 0) return core;
  need_cpe("athread_get_id");
  return self->id;
}

void athread_count_flops(int64_t flops) {
  need_cpe("athread_count_flops");
  self->counts.flops += flops;
}

void *ldm_malloc(size_t bytes) {
  need_cpe("ldm_malloc");
  size_t rounded = (bytes + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN;
  if (self->arena_top + rounded > self->arena_cap)
    cpe_error("LDM exhausted: ldm_malloc(%zu) with %zu bytes of __thread_local and %zu allocated, of %d", bytes,
              group->static_ldm, self->arena_top, ATHREAD_LDM_BYTES);
  void *p = self->arena + self->arena_top;
  self->arena_top += rounded;
  size_t used = group->static_ldm + self->arena_top;
  if (used > self->high_water) self->high_water = used;
  return p;
}

/* The allocator is a stack, as LDM allocations in kernels are: the last block is freed first. */
void ldm_free(void *p, size_t bytes) {
  need_cpe("ldm_free");
  size_t rounded = (bytes + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN;
  if (rounded > self->arena_top || (char *)p != self->arena + self->arena_top - rounded)
    cpe_error("ldm_free(%p, %zu) is not the last LDM block allocated", p, bytes);
  self->arena_top -= rounded;
}

/* ------------------------------------------------------------------ CPE side: DMA */

static int size_class(int len) { return len < 256 ? 0 : len < 2048 ? 1 : len < 8192 ? 2 : 3; }

static void count_dma(dma_mode mode, int len, int blocks, bool get) {
  AthreadCounters *c = &self->counts;
  *(get ? &c->dma_get_bytes : &c->dma_put_bytes) += len;
  c->dma_transfers++;
  c->dma_by_size[size_class(len)]++;
  c->dma_by_mode[mode]++;
  c->dma_blocks += blocks;
}

/* Copies between main memory (blocks of bsize bytes, stride bytes apart) and contiguous LDM. */
static int copy_strided(char *mem, char *ldm, int len, int stride, int bsize, bool get) {
  if (bsize <= 0 || (stride == 0 && bsize >= len)) {
    get ? memcpy(ldm, mem, (size_t)len) : memcpy(mem, ldm, (size_t)len);
    return 1;
  }
  int blocks = 0;
  for (int done = 0; done < len; blocks++) {
    int n = len - done < bsize ? len - done : bsize;
    get ? memcpy(ldm + done, mem, (size_t)n) : memcpy(mem, ldm + done, (size_t)n);
    done += n;
    mem += n + stride;
  }
  return blocks;
}

static void check_transfer(const char *what, int len, int stride, int bsize) {
  if (len < 0 || stride < 0 || bsize < 0) cpe_error("%s with a negative length, stride or block size", what);
  if ((size_t)len > ATHREAD_LDM_BYTES) cpe_error("%s of %d bytes: more than a CPE's LDM", what, len);
}

/* The same LDM location in another CPE: the same offset in its arena or from its thread pointer. */
static char *ldm_of(const Cpe *other, char *mine) {
  if (mine >= self->arena && mine < self->arena + ATHREAD_LDM_BYTES) return other->arena + (mine - self->arena);
  return other->thread_pointer + (mine - self->thread_pointer);
}

int athread_get(dma_mode mode, void *src_mem, void *dst_ldm, int len, void *reply, char mask, int stride, int bsize) {
  need_cpe("athread_get");
  check_transfer("athread_get", len, stride, bsize);
  int blocks = 0;
  if (mode == PE_MODE) {
    blocks = copy_strided(src_mem, dst_ldm, len, stride, bsize, true);
  } else if (mode == BCAST_MODE) {
    for (int i = 0; i < ATHREAD_CPES; i++)
      if ((unsigned char)mask & (1u << (i / 8))) {
        const Cpe *c = &group->cpe[i];
        blocks += copy_strided(src_mem, c == self ? dst_ldm : ldm_of(c, dst_ldm), len, stride, bsize, true);
      }
  } else {
    cpe_error("athread_get: DMA mode %d is not emulated (PE_MODE and BCAST_MODE are)", (int)mode);
  }
  count_dma(mode, len, blocks, true);
  __atomic_add_fetch((int *)reply, 1, __ATOMIC_SEQ_CST);
  return 0;
}

int athread_put(dma_mode mode, void *src_ldm, void *dst_mem, int len, void *reply, int stride, int bsize) {
  need_cpe("athread_put");
  check_transfer("athread_put", len, stride, bsize);
  if (mode != PE_MODE) cpe_error("athread_put: DMA mode %d is not emulated for puts (PE_MODE is)", (int)mode);
  int blocks = copy_strided(dst_mem, src_ldm, len, stride, bsize, false);
  count_dma(mode, len, blocks, false);
  __atomic_add_fetch((int *)reply, 1, __ATOMIC_SEQ_CST);
  return 0;
}

void dma(dma_desc d, void *mem, void *ldm) {
  if (d.op == DMA_GET) athread_get(d.mode, mem, ldm, d.size, (void *)d.reply, d.mask, d.stepsize, d.bsize);
  else athread_put(d.mode, ldm, mem, d.size, (void *)d.reply, d.stepsize, d.bsize);
}

void dma_wait(volatile int *reply, int count) {
  need_cpe("dma_wait");
  if (*reply < count)
    cpe_error("dma_wait for %d replies, but only %d transfers completed on this counter (every transfer "
              "completes when issued here: the code waits for one it never issued)", count, *reply);
}

/* ------------------------------------------------------------------ CPE side: synchronisation */

typedef struct SynWait {
  int scope, index, generation;
} SynWait;

static bool syn_passed(const void *arg) {
  const SynWait *w = arg;
  return group->syn_generation[w->scope][w->index] != w->generation;
}

void athread_syn(scope s, int mask) {
  need_cpe("athread_syn");
  int full = s == ARRAY_SCOPE ? 0xffff : 0xff, members = s == ARRAY_SCOPE ? ATHREAD_CPES : 8;
  if ((mask & full) != full) cpe_error("athread_syn with mask 0x%x: only whole scopes are emulated", mask);
  int index = s == ROW_SCOPE ? self->id / 8 : s == COL_SCOPE ? self->id % 8 : 0;
  pthread_mutex_lock(&group->lock);
  SynWait w = {s, index, group->syn_generation[s][index]};
  if (++group->syn_count[s][index] == members) {
    group->syn_count[s][index] = 0;
    group->syn_generation[s][index]++;
    pthread_cond_broadcast(&group->changed);
  } else {
    wait_until(WAIT_SYN, syn_passed, &w);
  }
  pthread_mutex_unlock(&group->lock);
}

/* ------------------------------------------------------------------ CPE side: RLC */

static bool has_room(const void *fifo) { return ((const Fifo *)fifo)->count < RLC_DEPTH; }
static bool has_value(const void *fifo) { return ((const Fifo *)fifo)->count > 0; }

static void push(Fifo *f, doublev4 v) {
  f->value[(f->head + f->count) % RLC_DEPTH] = v;
  f->count++;
}

static void put(doublev4 v, int dst, bool row) {
  need_cpe(row ? "REG_PUTR" : "REG_PUTC");
  int mine = row ? self->id % 8 : self->id / 8;
  if (dst < 0 || dst > 8) cpe_error("%s to %d: the destination is 0..7, or 8 for all", row ? "REG_PUTR" : "REG_PUTC", dst);
  if (dst == mine) cpe_error("%s to itself (%s %d)", row ? "REG_PUTR" : "REG_PUTC", row ? "column" : "row", dst);
  pthread_mutex_lock(&group->lock);
  for (int k = 0; k < 8; k++) {
    if (k == mine || (dst != 8 && k != dst)) continue;
    int target = row ? (self->id / 8) * 8 + k : k * 8 + self->id % 8;
    Fifo *f = row ? &group->cpe[target].row_in : &group->cpe[target].col_in;
    wait_until(row ? WAIT_PUTR : WAIT_PUTC, has_room, f);
    push(f, v);
  }
  pthread_cond_broadcast(&group->changed);
  pthread_mutex_unlock(&group->lock);
}

static doublev4 get(bool row) {
  need_cpe(row ? "REG_GETR" : "REG_GETC");
  pthread_mutex_lock(&group->lock);
  Fifo *f = row ? &self->row_in : &self->col_in;
  wait_until(row ? WAIT_GETR : WAIT_GETC, has_value, f);
  doublev4 v = f->value[f->head];
  f->head = (f->head + 1) % RLC_DEPTH;
  f->count--;
  self->counts.rlc_words++;
  pthread_cond_broadcast(&group->changed);
  pthread_mutex_unlock(&group->lock);
  return v;
}

void athread_putr(doublev4 v, int dst) { put(v, dst, true); }
void athread_putc(doublev4 v, int dst) { put(v, dst, false); }
doublev4 athread_getr(void) { return get(true); }
doublev4 athread_getc(void) { return get(false); }
