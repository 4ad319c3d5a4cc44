/* The CPE-cluster emulator (athread.h): a core group's 64 CPEs as coroutines.
 *
 * Each MPE thread that calls athread_init owns a core group (so 4 MPE threads are the 4 CGs of a
 * chip). athread_spawn prepares 64 coroutines; athread_join runs them on the MPE's own thread,
 * round-robin in CPE order, each until it blocks (RLC buffer empty or full, athread_syn) or
 * ends. Why coroutines, not a thread per CPE: bench/emulator measured 3.9 ms per launch and
 * 10 us per RLC value with 64 threads on 2 cores (every blocked put or get was a kernel
 * context switch); a coroutine switch costs well under a microsecond and the order of
 * execution is fixed, so runs are deterministic. DMA completes when issued.
 *
 * LDM: ldm_malloc takes from a per-CPE arena. `__thread_local` variables live in one section
 * (swemu_ldm) of the program; the CPE running has its own copy there and the others' copies are
 * saved, swapped at every switch. A program with such variables therefore emulates one core
 * group at a time (a process-wide lock); without them, core groups run in parallel.
 *
 * A deadlock is exact: a round in which no CPE that has not ended can proceed. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "athread.h"
#include "memcheck.h"
#include "tiling.h"

/* Switching between the scheduler and a CPE. On x86-64 a few instructions (the callee-saved
 * registers and the stack pointer), announced to AddressSanitizer as a fiber switch when it is
 * on; elsewhere ucontext, whose switch also makes a signal-mask system call. */
#if defined(__x86_64__)
typedef struct Context {
  void *sp;
} Context;
void swemu_switch(Context *from, Context *to);
__asm__(".text\n"
        ".globl swemu_switch\n"
        ".hidden swemu_switch\n"
        ".type swemu_switch,@function\n"
        "swemu_switch:\n"
        "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n  pushq %r13\n  pushq %r14\n  pushq %r15\n"
        "  movq %rsp, (%rdi)\n"
        "  movq (%rsi), %rsp\n"
        "  popq %r15\n  popq %r14\n  popq %r13\n  popq %r12\n  popq %rbx\n  popq %rbp\n"
        "  ret\n"
        ".size swemu_switch, .-swemu_switch\n");
/* A new context's stack: six zero registers, then `entry` as the return address, placed so the
 * stack is 16-byte aligned less 8 when entry begins, as after a call. */
static void context_start(Context *c, char *stack, size_t size, void (*entry)(void)) {
  uintptr_t top = ((uintptr_t)(stack + size) & ~(uintptr_t)15) - 8; /* entry sees top */
  void **sp = (void **)top;
  *--sp = (void *)entry;
  for (int i = 0; i < 6; i++) *--sp = NULL;
  c->sp = sp;
}
#else
typedef ucontext_t Context;
static void swemu_switch(Context *from, Context *to) { swapcontext(from, to); }
static void context_start(Context *c, char *stack, size_t size, void (*entry)(void)) {
  getcontext(c);
  c->uc_stack.ss_sp = stack;
  c->uc_stack.ss_size = size;
  c->uc_link = NULL;
  makecontext(c, entry, 0);
}
#endif

#if defined(__SANITIZE_ADDRESS__) && defined(__x86_64__)
#include <sanitizer/common_interface_defs.h>
#define FIBER_START(save, bottom, size) __sanitizer_start_switch_fiber((save), (bottom), (size))
#define FIBER_FINISH(save, bottom, size) __sanitizer_finish_switch_fiber((save), (bottom), (size))
#else
#define FIBER_START(save, bottom, size) ((void)(save), (void)(bottom), (void)(size))
#define FIBER_FINISH(save, bottom, size) ((void)(save), (void)(bottom), (void)(size))
#endif

enum { RLC_DEPTH = 4, ARENA_ALIGN = 32, CPE_STACK = 512 * 1024 };
typedef enum { RUNNING, WAIT_GETR, WAIT_GETC, WAIT_PUTR, WAIT_PUTC, WAIT_SYN, DONE } CpeState;
static const char *const state_names[] = {"running",
                                          "REG_GETR (row buffer empty)",
                                          "REG_GETC (column buffer empty)",
                                          "REG_PUTR (row buffer full)",
                                          "REG_PUTC (column buffer full)",
                                          "athread_syn",
                                          "done"};

typedef struct Fifo {
  doublev4 value[RLC_DEPTH];
  int head, count;
} Fifo;

enum { PENDING_REPLIES = 8 };

typedef struct Cpe {
  int id;
  CpeState state;
  bool (*ready)(const void *); /* what a waiting CPE waits for */
  const void *ready_arg;
  Fifo row_in, col_in;
  char *arena; /* ldm_malloc's part of the LDM */
  size_t arena_top, arena_cap, high_water;
  char *ldm_saved; /* its __thread_local variables while another CPE runs */
  Context context;
  char *stack;
  AthreadCounters counts;
  StridedLog tiled[2]; /* this launch's transfers declared tiled with its row, its column */
  int tiled_next;      /* ROW_SCOPE or COL_SCOPE: athread_dma_tiled's for the next transfer */
  bool overlap_next;   /* athread_dma_overlapped's, for the next transfer */
  /* reply counters with transfers not yet waited for by dma_wait, and how many; whether they
   * were declared overlapped, and the CPE's flops when the first of them was issued */
  struct {
    volatile int *reply;
    int transfers;
    bool overlapped;
    int64_t flops_at_issue;
  } pending[PENDING_REPLIES];
} Cpe;

typedef struct Group {
  Cpe cpe[ATHREAD_CPES];
  Context scheduler;
  const void *scheduler_stack; /* its bottom and size, for AddressSanitizer's fiber switches */
  size_t scheduler_stack_size;
  void (*kernel)(void *);
  void *arg;
  const char *name;
  bool spawned;
  int syn_count[3][ATHREAD_ROWS], syn_generation[3][ATHREAD_ROWS];
  AthreadCounters last;
} Group;

static __thread Group *group; /* this MPE thread's core group */
static __thread Cpe *self;    /* the CPE running on this thread, if any */

/* The program's __thread_local variables (athread.h puts them in this section). */
extern char __start_swemu_ldm[] __attribute__((weak)), __stop_swemu_ldm[] __attribute__((weak));
static pthread_mutex_t ldm_section_lock = PTHREAD_MUTEX_INITIALIZER;
static char *ldm_pristine; /* the section as the program image has it */

static size_t static_ldm(void) {
  return __start_swemu_ldm ? (size_t)(__stop_swemu_ldm - __start_swemu_ldm) : 0;
}

/* ------------------------------------------------------------------ errors */

static _Noreturn void cpe_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "sw26010 emulator: error: kernel '%s', CPE %d (row %d, column %d): ",
          group ? group->name : "?", self ? self->id : -1, self ? self->id / 8 : -1,
          self ? self->id % 8 : -1);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(1);
}

/* memcheck.c's report of a fault in a checked block (SwemuCpeFault). */
static void cpe_fault(void *address, void *block, size_t bytes) {
  if (!self) return;
  swemu_check_release();
  cpe_error("direct access to main memory at %p (%zu bytes into a block of %zu): CPE code reaches "
            "main memory "
            "only by DMA (athread_get / athread_put)",
            address, (size_t)((char *)address - (char *)block), bytes);
}

static void need_cpe(const char *what) {
  if (!self) {
    fprintf(stderr, "sw26010 emulator: error: %s called outside a CPE kernel\n", what);
    exit(1);
  }
}

/* ------------------------------------------------------------------ scheduling */

/* Blocks this CPE until `ready(arg)`: back to the scheduler, which resumes it once true. */
static void wait_until(CpeState why, bool (*ready)(const void *), const void *arg) {
  if (ready(arg)) return;
  self->state = why, self->ready = ready, self->ready_arg = arg;
  void *fake_stack = NULL;
  FIBER_START(&fake_stack, group->scheduler_stack, group->scheduler_stack_size);
  swemu_switch(&self->context, &group->scheduler);
  FIBER_FINISH(fake_stack, NULL, NULL);
}

static void report_deadlock(void) {
  fprintf(stderr, "sw26010 emulator: error: kernel '%s' deadlocked: every running CPE waits:\n",
          group->name);
  for (int i = 0; i < ATHREAD_CPES; i++)
    if (group->cpe[i].state != DONE)
      fprintf(stderr, "  CPE %d (row %d, column %d) in %s\n", i, i / 8, i % 8,
              state_names[group->cpe[i].state]);
  exit(1);
}

/* A CPE's life: the kernel, then back to the scheduler for good. */
static void cpe_main(void) {
  FIBER_FINISH(NULL, &group->scheduler_stack, &group->scheduler_stack_size);
  group->kernel(group->arg);
  self->state = DONE;
  FIBER_START(NULL, group->scheduler_stack, group->scheduler_stack_size); /* this stack is done */
  swemu_switch(&self->context, &group->scheduler);
  abort(); /* a finished CPE is never resumed */
}

/* Runs CPE c until it blocks or ends, with its __thread_local copy in place. */
static void resume(Cpe *c, size_t ldm_bytes) {
  if (ldm_bytes) memcpy(__start_swemu_ldm, c->ldm_saved, ldm_bytes);
  c->state = RUNNING;
  self = c;
  void *fake_stack = NULL;
  FIBER_START(&fake_stack, c->stack, CPE_STACK);
  swemu_switch(&group->scheduler, &c->context);
  FIBER_FINISH(fake_stack, NULL, NULL);
  self = NULL;
  if (ldm_bytes) memcpy(c->ldm_saved, __start_swemu_ldm, ldm_bytes);
}

static void run_cpes(void) {
  size_t ldm_bytes = static_ldm();
  if (ldm_bytes) pthread_mutex_lock(&ldm_section_lock);
  swemu_check_begin(cpe_fault);
  for (int done = 0; done < ATHREAD_CPES;) {
    bool progressed = false;
    for (int i = 0; i < ATHREAD_CPES; i++) {
      Cpe *c = &group->cpe[i];
      if (c->state == DONE || (c->state != RUNNING && !c->ready(c->ready_arg))) continue;
      resume(c, ldm_bytes);
      progressed = true;
      done += c->state == DONE;
    }
    if (!progressed) report_deadlock();
  }
  swemu_check_end();
  if (ldm_bytes) pthread_mutex_unlock(&ldm_section_lock);
}

/* ------------------------------------------------------------------ MPE side */

/* The emulator's own memory (LDM arenas, core groups): not the program's main memory, which
 * checking mode takes over through aligned_alloc (memcheck.c). */
static void *emulator_memory(size_t alignment, size_t bytes) {
  void *p;
  return posix_memalign(&p, alignment, bytes) == 0 ? p : NULL;
}

static bool init_cpe(Cpe *c, int id, size_t ldm_bytes) {
  c->id = id;
  c->arena = emulator_memory(ARENA_ALIGN, ATHREAD_LDM_BYTES);
  c->ldm_saved = malloc(ldm_bytes ? ldm_bytes : 1);
  c->stack = mmap(NULL, CPE_STACK, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (c->stack == MAP_FAILED) c->stack = NULL;
  return c->arena && c->ldm_saved && c->stack;
}

/* A core group ends with its MPE thread (as the communication thread's does) if not halted. */
static pthread_key_t group_key;
static pthread_once_t group_key_once = PTHREAD_ONCE_INIT;
static void free_group(void *g);
static void make_group_key(void) { pthread_key_create(&group_key, free_group); }

int athread_init(void) {
  if (group) return 0;
  pthread_once(&group_key_once, make_group_key);
  size_t ldm_bytes = static_ldm();
  pthread_mutex_lock(&ldm_section_lock);
  if (!ldm_pristine && ldm_bytes && (ldm_pristine = malloc(ldm_bytes)))
    memcpy(ldm_pristine, __start_swemu_ldm, ldm_bytes);
  pthread_mutex_unlock(&ldm_section_lock);
  if (ldm_bytes && !ldm_pristine) return -1;
  group = emulator_memory(_Alignof(Group), sizeof *group);
  if (!group) return -1; /* aligned: the RLC buffers hold 256-bit vectors */
  memset(group, 0, sizeof *group);
  pthread_setspecific(group_key, group);
  for (int i = 0; i < ATHREAD_CPES; i++)
    if (!init_cpe(&group->cpe[i], i, ldm_bytes)) return -1;
  return 0;
}

static void free_group(void *p) {
  Group *g = p;
  for (int i = 0; i < ATHREAD_CPES; i++) {
    free(g->cpe[i].arena);
    free(g->cpe[i].ldm_saved);
    free(g->cpe[i].tiled[0].at), free(g->cpe[i].tiled[1].at);
    if (g->cpe[i].stack) munmap(g->cpe[i].stack, CPE_STACK);
  }
  free(g);
}

int athread_halt(void) {
  if (!group) return 0;
  pthread_setspecific(group_key, NULL);
  free_group(group);
  group = NULL;
  return 0;
}

int __real_athread_spawn(void (*f)(void *), void *arg, const char *name) {
  if (!group && athread_init()) return -1;
  if (group->spawned) {
    fprintf(stderr, "sw26010 emulator: error: athread_spawn of '%s' while '%s' is not joined\n",
            name, group->name);
    exit(1);
  }
  size_t ldm_bytes = static_ldm();
  if (ldm_bytes > ATHREAD_LDM_BYTES) {
    fprintf(stderr,
            "sw26010 emulator: error: kernel '%s': %zu bytes of __thread_local LDM, more than the "
            "%d of a CPE\n",
            name, ldm_bytes, ATHREAD_LDM_BYTES);
    exit(1);
  }
  group->kernel = f, group->arg = arg, group->name = name, group->spawned = true;
  memset(group->syn_count, 0, sizeof group->syn_count);
  for (int i = 0; i < ATHREAD_CPES; i++) {
    Cpe *c = &group->cpe[i];
    c->state = RUNNING;
    c->row_in = c->col_in = (Fifo){0};
    c->arena_top = 0, c->arena_cap = ATHREAD_LDM_BYTES - ldm_bytes, c->high_water = ldm_bytes;
    c->counts = (AthreadCounters){0};
    c->tiled[0].count = c->tiled[1].count = 0, c->tiled_next = ARRAY_SCOPE;
    c->overlap_next = false;
    memset(c->pending, 0, sizeof c->pending);
    if (ldm_bytes) memcpy(c->ldm_saved, ldm_pristine, ldm_bytes);
    context_start(&c->context, c->stack, CPE_STACK, cpe_main);
  }
  return 0;
}

/* Declared tiled transfers count the pieces they form with their column's or row's (tiling.h);
 * a declaration that does not hold is the kernel's error. */
static void settle_tiling(AthreadCounters *t) {
  StridedLog rows[ATHREAD_CPES], cols[ATHREAD_CPES];
  for (int i = 0; i < ATHREAD_CPES; i++)
    rows[i] = group->cpe[i].tiled[0], cols[i] = group->cpe[i].tiled[1];
  Tiling tiling = strided_tiling(rows, cols);
  if (tiling.cpe >= 0) {
    const char *with = tiling.in_rows ? "row" : "column";
    fprintf(stderr,
            "sw26010 emulator: error: kernel '%s', CPE %d: its transfer #%zu declared tiled with "
            "its mesh %s does not tile memory with the same-numbered ones of that %s (alike, "
            "whole blocks, gaps of at least 7 blocks, the 8 starts one block apart)\n",
            group->name, tiling.cpe, tiling.index + 1, with, with);
    exit(1);
  }
  t->dma_tiled = tiling.transfers, t->dma_blocks -= tiling.blocks_gone;
  t->overlapped_blocks -= tiling.overlapped_blocks_gone;
}

/* Transfers declared overlapped must be waited for by dma_wait (which checks the claim). */
static void check_overlaps_waited(void) {
  for (int i = 0; i < ATHREAD_CPES; i++)
    for (int k = 0; k < PENDING_REPLIES; k++)
      if (group->cpe[i].pending[k].reply && group->cpe[i].pending[k].overlapped) {
        fprintf(stderr,
                "sw26010 emulator: error: kernel '%s', CPE %d: a transfer declared overlapped "
                "(athread_dma_overlapped) was never waited for with dma_wait\n",
                group->name, i);
        exit(1);
      }
}

/* The CPEs run here, on the MPE's thread (see the top of the file). */
int athread_join(void) {
  if (!group || !group->spawned) return -1;
  run_cpes();
  group->spawned = false;
  AthreadCounters *t = &group->last;
  *t = (AthreadCounters){.kernel = group->name};
  for (int i = 0; i < ATHREAD_CPES; i++) {
    const AthreadCounters *c = &group->cpe[i].counts;
    t->dma_get_bytes += c->dma_get_bytes, t->dma_put_bytes += c->dma_put_bytes;
    t->dma_transfers += c->dma_transfers, t->dma_blocks += c->dma_blocks;
    t->dma_batched += c->dma_batched;
    for (int k = 0; k < 4; k++) t->dma_by_size[k] += c->dma_by_size[k];
    for (int k = 0; k < 5; k++) t->dma_by_mode[k] += c->dma_by_mode[k];
    t->rlc_words += c->rlc_words, t->flops += c->flops, t->vector_flops += c->vector_flops;
    t->ldm_ops += c->ldm_ops;
    t->overlapped_get_bytes += c->overlapped_get_bytes;
    t->overlapped_put_bytes += c->overlapped_put_bytes;
    t->overlapped_transfers += c->overlapped_transfers;
    t->overlapped_batched += c->overlapped_batched, t->overlapped_blocks += c->overlapped_blocks;
    if ((int64_t)group->cpe[i].high_water > t->ldm_high_water)
      t->ldm_high_water = (int64_t)group->cpe[i].high_water;
  }
  check_overlaps_waited();
  settle_tiling(t);
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

void athread_count_ldm_ops(int64_t ops) {
  need_cpe("athread_count_ldm_ops");
  self->counts.ldm_ops += ops;
}

void athread_count_vector_flops(int64_t flops) {
  need_cpe("athread_count_vector_flops");
  self->counts.flops += flops, self->counts.vector_flops += flops;
}

void *ldm_malloc(size_t bytes) {
  need_cpe("ldm_malloc");
  size_t rounded = (bytes + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN;
  if (self->arena_top + rounded > self->arena_cap)
    cpe_error(
        "LDM exhausted: ldm_malloc(%zu) with %zu bytes of __thread_local and %zu allocated, of %d",
        bytes, static_ldm(), self->arena_top, ATHREAD_LDM_BYTES);
  void *p = self->arena + self->arena_top;
  self->arena_top += rounded;
  size_t used = static_ldm() + self->arena_top;
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

/* A transfer on `reply`: one more for the next dma_wait on it; a counter that reads 0 starts
 * a new batch (the code reset it after its last wait). Slots of batches declared overlapped are
 * kept until their wait checks them. */
static void note_pending(volatile int *reply, bool overlapped) {
  int free_slot = -1;
  for (int i = 0; i < PENDING_REPLIES; i++) {
    if (self->pending[i].reply == reply) {
      if (!*reply && self->pending[i].overlapped)
        cpe_error("a transfer declared overlapped (athread_dma_overlapped) was not waited for "
                  "with dma_wait before its reply counter was reset");
      if (!*reply) self->pending[i].transfers = 0, self->pending[i].overlapped = false;
      if (!self->pending[i].transfers) self->pending[i].flops_at_issue = self->counts.flops;
      self->pending[i].transfers++;
      self->pending[i].overlapped |= overlapped;
      return;
    }
    if (!self->pending[i].reply && free_slot < 0) free_slot = i;
  }
  for (int i = 0; i < PENDING_REPLIES && free_slot < 0; i++)
    if (!self->pending[i].overlapped) free_slot = i; /* all taken: reuse one, a wait each */
  if (free_slot < 0)
    cpe_error("more than %d reply counters with overlapped transfers pending", PENDING_REPLIES);
  self->pending[free_slot].reply = reply, self->pending[free_slot].transfers = 1;
  self->pending[free_slot].overlapped = overlapped;
  self->pending[free_slot].flops_at_issue = self->counts.flops;
}

void athread_dma_overlapped(void) {
  need_cpe("athread_dma_overlapped");
  self->overlap_next = true;
}

void athread_dma_tiled(scope with) {
  need_cpe("athread_dma_tiled");
  if (with != ROW_SCOPE && with != COL_SCOPE)
    cpe_error("athread_dma_tiled(%d): a transfer tiles with its row (ROW_SCOPE) or column "
              "(COL_SCOPE)",
              (int)with);
  self->tiled_next = with;
}

/* A transfer declared tiled, logged for tiling.c at join. */
static void log_tiled(const char *mem, int len, int stride, int bsize, bool get, bool overlapped) {
  StridedTransfer t = {(uintptr_t)mem, len, stride, bsize, get, overlapped, false};
  if (!strided_log_add(&self->tiled[self->tiled_next == COL_SCOPE], t))
    cpe_error("out of memory logging strided transfers");
}

static void count_dma(dma_mode mode, void *mem, int len, int stride, int bsize, int blocks,
                      bool get, void *reply) {
  AthreadCounters *c = &self->counts;
  if (self->tiled_next != ARRAY_SCOPE) {
    if (mode != PE_MODE)
      cpe_error("a transfer declared tiled in DMA mode %d (PE_MODE only)", (int)mode);
    log_tiled(mem, len, stride, bsize, get, self->overlap_next);
    self->tiled_next = ARRAY_SCOPE;
  }
  bool overlapped = self->overlap_next;
  self->overlap_next = false;
  note_pending((volatile int *)reply, overlapped);
  *(get ? &c->dma_get_bytes : &c->dma_put_bytes) += len;
  c->dma_transfers++;
  c->dma_by_size[size_class(len)]++;
  c->dma_by_mode[mode]++;
  c->dma_blocks += blocks;
  if (overlapped) {
    *(get ? &c->overlapped_get_bytes : &c->overlapped_put_bytes) += len;
    c->overlapped_transfers++;
    c->overlapped_blocks += blocks;
  }
}

/* Copies between main memory (blocks of bsize bytes, stride bytes apart) and contiguous LDM. */
static int copy_strided(char *mem, char *ldm, int len, int stride, int bsize, bool get) {
  mem = swemu_check_dma_address(mem); /* the DMA engine's view in checking mode */
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
  if (len < 0 || stride < 0 || bsize < 0)
    cpe_error("%s with a negative length, stride or block size", what);
  if ((size_t)len > ATHREAD_LDM_BYTES)
    cpe_error("%s of %d bytes: more than a CPE's LDM", what, len);
}

/* The same LDM location in another CPE: the same offset in its arena or __thread_local copy. */
static char *ldm_of(const Cpe *other, char *mine) {
  if (mine >= self->arena && mine < self->arena + ATHREAD_LDM_BYTES)
    return other->arena + (mine - self->arena);
  if (mine >= __start_swemu_ldm && mine < __stop_swemu_ldm)
    return other->ldm_saved + (mine - __start_swemu_ldm);
  cpe_error("a broadcast DMA into %p, which is not in LDM", (void *)mine);
}

int athread_get(dma_mode mode, void *src_mem, void *dst_ldm, int len, void *reply, char mask,
                int stride, int bsize) {
  need_cpe("athread_get");
  check_transfer("athread_get", len, stride, bsize);
  int blocks = 0;
  if (mode == PE_MODE) {
    blocks = copy_strided(src_mem, dst_ldm, len, stride, bsize, true);
  } else if (mode == BCAST_MODE) {
    for (int i = 0; i < ATHREAD_CPES; i++)
      if ((unsigned char)mask & (1u << (i / 8))) {
        const Cpe *c = &group->cpe[i];
        blocks += copy_strided(src_mem, c == self ? dst_ldm : ldm_of(c, dst_ldm), len, stride,
                               bsize, true);
      }
  } else {
    cpe_error("athread_get: DMA mode %d is not emulated (PE_MODE and BCAST_MODE are)", (int)mode);
  }
  count_dma(mode, src_mem, len, stride, bsize, blocks, true, reply);
  __atomic_add_fetch((int *)reply, 1, __ATOMIC_SEQ_CST);
  return 0;
}

int athread_put(dma_mode mode, void *src_ldm, void *dst_mem, int len, void *reply, int stride,
                int bsize) {
  need_cpe("athread_put");
  check_transfer("athread_put", len, stride, bsize);
  if (mode != PE_MODE)
    cpe_error("athread_put: DMA mode %d is not emulated for puts (PE_MODE is)", (int)mode);
  int blocks = copy_strided(dst_mem, src_ldm, len, stride, bsize, false);
  count_dma(mode, dst_mem, len, stride, bsize, blocks, false, reply);
  __atomic_add_fetch((int *)reply, 1, __ATOMIC_SEQ_CST);
  return 0;
}

void dma(dma_desc d, void *mem, void *ldm) {
  if (d.op == DMA_GET)
    athread_get(d.mode, mem, ldm, d.size, (void *)d.reply, d.mask, d.stepsize, d.bsize);
  else
    athread_put(d.mode, ldm, mem, d.size, (void *)d.reply, d.stepsize, d.bsize);
}

void dma_wait(volatile int *reply, int count) {
  need_cpe("dma_wait");
  if (*reply < count)
    cpe_error(
        "dma_wait for %d replies, but only %d transfers completed on this counter (every transfer "
        "completes when issued here: the code waits for one it never issued)",
        count, *reply);
  for (int i = 0; i < PENDING_REPLIES; i++)
    if (self->pending[i].reply == reply) {
      /* the transfers waited for together overlap: one latency (docs/targets.md) */
      int batched = self->pending[i].transfers - 1;
      if (batched > 0) self->counts.dma_batched += batched;
      if (self->pending[i].overlapped) {
        if (self->counts.flops == self->pending[i].flops_at_issue)
          cpe_error("dma_wait for transfers declared overlapped (athread_dma_overlapped), but no "
                    "arithmetic was counted since they were issued: nothing ran under them");
        if (batched > 0) self->counts.overlapped_batched += batched;
      }
      self->pending[i].reply = NULL, self->pending[i].overlapped = false;
    }
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
  if ((mask & full) != full)
    cpe_error("athread_syn with mask 0x%x: only whole scopes are emulated", mask);
  int index = s == ROW_SCOPE ? self->id / 8 : s == COL_SCOPE ? self->id % 8 : 0;
  SynWait w = {s, index, group->syn_generation[s][index]};
  if (++group->syn_count[s][index] == members) {
    group->syn_count[s][index] = 0;
    group->syn_generation[s][index]++;
  } else {
    wait_until(WAIT_SYN, syn_passed, &w);
  }
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
  if (dst < 0 || dst > 8)
    cpe_error("%s to %d: the destination is 0..7, or 8 for all", row ? "REG_PUTR" : "REG_PUTC",
              dst);
  if (dst == mine)
    cpe_error("%s to itself (%s %d)", row ? "REG_PUTR" : "REG_PUTC", row ? "column" : "row", dst);
  for (int k = 0; k < 8; k++) {
    if (k == mine || (dst != 8 && k != dst)) continue;
    int target = row ? (self->id / 8) * 8 + k : k * 8 + self->id % 8;
    Fifo *f = row ? &group->cpe[target].row_in : &group->cpe[target].col_in;
    wait_until(row ? WAIT_PUTR : WAIT_PUTC, has_room, f);
    push(f, v);
  }
}

static doublev4 get(bool row) {
  need_cpe(row ? "REG_GETR" : "REG_GETC");
  Fifo *f = row ? &self->row_in : &self->col_in;
  wait_until(row ? WAIT_GETR : WAIT_GETC, has_value, f);
  doublev4 v = f->value[f->head];
  f->head = (f->head + 1) % RLC_DEPTH;
  f->count--;
  self->counts.rlc_words++;
  return v;
}

void athread_putr(doublev4 v, int dst) { put(v, dst, true); }
void athread_putc(doublev4 v, int dst) { put(v, dst, false); }
doublev4 athread_getr(void) { return get(true); }
doublev4 athread_getc(void) { return get(false); }
