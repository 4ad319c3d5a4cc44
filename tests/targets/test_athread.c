/* The CPE-cluster emulator (targets/sw26010/emu): ids, strided DMA both ways and descriptors,
 * reply counting, broadcast DMA, synchronisation of rows, columns and the array, register
 * communication along rows and columns and its broadcast, SIMD, counters; and the rules it
 * enforces: the LDM limit (static + ldm_malloc), deadlocked RLC, a CPE sending to itself. The
 * kernels are in athread_cpe.c, built as CPE code (symbols renamed slave_*). */
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "athread.h"
#include "athread_test.h"
#include "check.h"

extern void SLAVE_FUN(ids)(void *), SLAVE_FUN(checked_dma)(void *),
    SLAVE_FUN(direct_access)(void *), SLAVE_FUN(strided)(void *), SLAVE_FUN(broadcast)(void *),
    SLAVE_FUN(scopes)(void *), SLAVE_FUN(rlc)(void *), SLAVE_FUN(ldm_overflow)(void *),
    SLAVE_FUN(deadlock)(void *), SLAVE_FUN(self_send)(void *), SLAVE_FUN(simd)(void *),
    SLAVE_FUN(tiled)(void *), SLAVE_FUN(tiled_wrongly)(void *), SLAVE_FUN(overlapped)(void *),
    SLAVE_FUN(overlapped_nothing_under)(void *), SLAVE_FUN(overlapped_unwaited)(void *);

static AthreadTest t;

static void run_ids_and_dma(void) {
  athread_spawn(ids, &t);
  athread_join();
  for (int i = 0; i < 64; i++) CHECK_EQ_INT(t.ids[i], i);
  for (int i = 0; i < 64 * ROW_FLOATS; i++) t.matrix[i] = (float)(i % 977), t.out[i] = -1;
  athread_spawn(strided, &t);
  athread_join();
  int wrong = 0;
  for (int r = 0; r < 64; r++)
    for (int c = 0; c < ROW_FLOATS; c++) {
      float want = c < 256 ? 2 * t.matrix[r * ROW_FLOATS + c] : -1; /* 64 CPEs x 4 columns */
      wrong += t.out[r * ROW_FLOATS + c] != want;
    }
  CHECK_EQ_INT(wrong, 0);
  CHECK(!memcmp(t.copy, t.matrix, sizeof t.matrix));
  const AthreadCounters *k = athread_last_counters();
  CHECK(!strcmp(k->kernel, "strided"));
  CHECK_EQ_INT(k->dma_get_bytes, 64 * (1024 + ROW_FLOATS * 4));
  CHECK_EQ_INT(k->dma_put_bytes, 64 * (1024 + ROW_FLOATS * 4));
  CHECK_EQ_INT(k->dma_transfers, 64 * 4);
  CHECK_EQ_INT(k->dma_blocks, 64 * (64 + 1 + 64 + 1)); /* strided: 64 blocks of 16 B each way */
  CHECK_EQ_INT(k->dma_by_size[1], 64 * 4);             /* 1 KB and 1.6 KB transfers */
  CHECK_EQ_INT(k->dma_batched, 64); /* the descriptors' get and put, one dma_wait for both */
  CHECK_EQ_INT(k->dma_tiled, 0);
  CHECK_EQ_INT(k->flops, 64 * 256);
  /* static LDM (the program's __thread_local variables: 1.6 KB + 1 KB + a reply) + 1 KB allocated */
  CHECK(k->ldm_high_water >= (ROW_FLOATS + BCAST_FLOATS) * 4 + 1024 && k->ldm_high_water < 8192);
}

static void run_broadcast_and_scopes(void) {
  float sum = 0;
  for (int i = 0; i < BCAST_FLOATS; i++) t.bcast[i] = (float)i, sum += (float)i;
  athread_spawn(broadcast, &t);
  athread_join();
  int wrong = 0;
  for (int i = 0; i < 64; i++) wrong += t.sums[i] != sum;
  CHECK_EQ_INT(wrong, 0);
  CHECK_EQ_INT(athread_last_counters()->dma_by_mode[BCAST_MODE], 1);
  athread_spawn(scopes, &t);
  athread_join();
  for (int k = 0; k < 3; k++) {
    int ok = 0;
    for (int i = 0; i < 64; i++) ok += t.scope_ok[k][i];
    CHECK_EQ_INT(ok, 64);
  }
}

static void run_rlc_and_simd(void) {
  athread_spawn(rlc, &t);
  athread_join();
  int wrong = 0;
  for (int id = 0; id < 64; id++) {
    int row = id / 8, col = id % 8;
    wrong += t.from_row[id] != row * 8 + (col + 7) % 8;
    wrong += t.from_col[id] != ((row + 7) % 8) * 8 + col;
    wrong += col != 0 && t.row_bcast[id] != row * 8;
  }
  CHECK_EQ_INT(wrong, 0);
  CHECK_EQ_INT(athread_last_counters()->rlc_words, 64 + 64 + 56); /* the broadcaster gets none */
  t.scale = 0.5f;
  athread_spawn(simd, &t);
  athread_join();
  CHECK(t.simd_out[0] == 1.5f && t.simd_out[3] == 6.0f);
}

/* Runs a kernel in a child process; expects exit status 1 and `text` on its standard error. */
static void expect_failure(void (*kernel)(void *), const char *name, const char *text) {
  int fds[2];
  if (pipe(fds)) return;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 2);
    close(fds[0]);
    __real_athread_spawn(kernel, &t, name);
    athread_join();
    _exit(0);
  }
  close(fds[1]);
  char out[4096] = "";
  size_t n = 0;
  for (ssize_t r; n < sizeof out - 1 && (r = read(fds[0], out + n, sizeof out - 1 - n)) > 0;)
    n += (size_t)r;
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 1 && strstr(out, text);
  if (!ok) fprintf(stderr, "%s: status %d, stderr: %s\n", name, status, out);
  CHECK(ok);
}

/* Another core group's MPE thread writes its own guarded block while CPEs run: it waits
 * instead of failing. */
static void *other_mpe(void *arg) {
  float *block = arg;
  for (int round = 0; round < 200; round++) {
    for (int i = 0; i < CHECKED_FLOATS; i += 1024) block[i] += 1;
    sched_yield();
  }
  return NULL;
}

static void run_checking_mode(void) {
  t.checked = aligned_alloc(64, sizeof(float) * CHECKED_FLOATS);
  float *other = aligned_alloc(64, sizeof(float) * CHECKED_FLOATS);
  CHECK(t.checked && other);
  for (int i = 0; i < CHECKED_FLOATS; i++) t.checked[i] = (float)i, other[i] = 0;
  pthread_t thread;
  CHECK_EQ_INT(pthread_create(&thread, NULL, other_mpe, other), 0);
  for (int launch = 0; launch < 20; launch++) {
    athread_spawn(checked_dma, &t);
    athread_join();
  }
  pthread_join(thread, NULL);
  int wrong = 0;
  for (int i = 0; i < CHECKED_FLOATS; i++) wrong += t.checked[i] != (float)i + 20;
  for (int i = 0; i < CHECKED_FLOATS; i += 1024) wrong += other[i] != 200;
  CHECK_EQ_INT(wrong, 0);
  expect_failure(
      SLAVE_FUN(direct_access), "direct_access",
      "kernel 'direct_access', CPE 5 (row 0, column 5): direct access to main memory at");
  free(other);
  free(t.checked);
}

int main(void) {
  CHECK_EQ_INT(athread_init(), 0);
  if (getenv("SWEMU_CHECK_MEMORY")) { /* unit_athread_check */
    run_checking_mode();
    athread_halt();
    return check_report();
  }
  run_ids_and_dma();
  run_broadcast_and_scopes();
  run_rlc_and_simd();
  athread_spawn(tiled, &t);
  athread_join();
  const AthreadCounters *k = athread_last_counters();
  CHECK_EQ_INT(k->dma_tiled, 64);
  CHECK_EQ_INT(k->dma_blocks, 8 * 8); /* 512 blocks of 16 B, but a piece per row and mesh row */
  CHECK_EQ_INT(k->dma_batched, 0);
  CHECK_EQ_INT(k->overlapped_transfers, 0);
  /* the same gets double-buffered: counted apart as well, tiling included */
  athread_spawn(overlapped, &t);
  athread_join();
  k = athread_last_counters();
  CHECK_EQ_INT(k->overlapped_transfers, 64);
  CHECK_EQ_INT(k->overlapped_get_bytes, 64 * 8 * 16);
  CHECK_EQ_INT(k->overlapped_put_bytes, 0);
  CHECK_EQ_INT(k->overlapped_blocks, 8 * 8);
  CHECK_EQ_INT(k->dma_blocks, 8 * 8);
  CHECK_EQ_INT(k->overlapped_batched, 0);
  expect_failure(SLAVE_FUN(overlapped_nothing_under), "overlapped_nothing_under",
                 "kernel 'overlapped_nothing_under', CPE 0 (row 0, column 0): dma_wait for "
                 "transfers declared overlapped (athread_dma_overlapped), but no arithmetic was "
                 "counted since they were issued");
  expect_failure(SLAVE_FUN(overlapped_unwaited), "overlapped_unwaited",
                 "kernel 'overlapped_unwaited', CPE 0: a transfer declared overlapped "
                 "(athread_dma_overlapped) was never waited for with dma_wait");
  expect_failure(
      SLAVE_FUN(tiled_wrongly), "tiled_wrongly",
      "kernel 'tiled_wrongly', CPE 0: its transfer #1 declared tiled with its mesh row does not "
      "tile memory");
  expect_failure(
      SLAVE_FUN(ldm_overflow), "ldm_overflow",
      "kernel 'ldm_overflow', CPE 9 (row 1, column 1): LDM exhausted: ldm_malloc(63488)");
  expect_failure(SLAVE_FUN(deadlock), "deadlock",
                 "kernel 'deadlock' deadlocked: every running CPE waits:\n"
                 "  CPE 0 (row 0, column 0) in REG_GETR (row buffer empty)");
  expect_failure(SLAVE_FUN(self_send), "self_send",
                 "CPE 3 (row 0, column 3): REG_PUTR to itself (column 3)");
  athread_halt();
  return check_report();
}
