/* CPE kernels for test_athread.c, written against the athread interface as for the real
 * machine (their global symbols are renamed slave_* at build time, as sw5cc -slave does). */
#include "athread.h"

#include "athread_test.h"

__thread_local volatile int reply;
__thread_local float row_buf[ROW_FLOATS];
__thread_local float shared_buf[BCAST_FLOATS];

/* CPEs touch main memory only by DMA. */
static void put_int(int *dst, int value) {
  volatile int done = 0;
  athread_put(PE_MODE, &value, dst, sizeof value, (void *)&done, 0, 0);
  while (done != 1) {
  }
}

void ids(void *arg) {
  AthreadTest *t = arg;
  int id = _MYID;
  reply = 0;
  athread_put(PE_MODE, &id, &t->ids[id], sizeof id, (void *)&reply, 0, 0);
  while (reply != 1) {
  }
}

/* CPE i takes column block i of a (64 x ROW_FLOATS) matrix by strided DMA (4 floats from every
 * row), doubles it, and puts it back strided into `out`; plus descriptor transfers. */
void strided(void *arg) {
  AthreadTest *t = arg;
  int id = _MYID, block = 4 * (int)sizeof(float), pitch = ROW_FLOATS * (int)sizeof(float);
  float *col = ldm_malloc(64 * 4 * sizeof(float));
  reply = 0;
  athread_get(PE_MODE, t->matrix + 4 * id, col, 64 * block, (void *)&reply, 0, pitch - block,
              block);
  while (reply != 1) {
  }
  athread_count_flops(256);
  for (int i = 0; i < 256; i++) col[i] *= 2;
  athread_put(PE_MODE, col, t->out + 4 * id, 64 * block, (void *)&reply, pitch - block, block);
  while (reply != 2) {
  }
  dma_desc d = {0};
  volatile int r2 = 0;
  dma_set_op(&d, DMA_GET), dma_set_mode(&d, PE_MODE), dma_set_size(&d, pitch),
      dma_set_reply(&d, &r2);
  dma(d, t->matrix + (long)id * ROW_FLOATS, row_buf);
  dma_set_op(&d, DMA_PUT);
  dma(d, t->copy + (long)id * ROW_FLOATS, row_buf);
  dma_wait(&r2, 2);
  ldm_free(col, 64 * 4 * sizeof(float));
}

/* Declared tiled gets: CPE (r, c) takes floats [4c, 4c + 4) of rows [8r, 8r + 8), so the 8 CPEs
 * of a mesh row take adjacent blocks of each row (a piece of 32 floats per row). WRONGLY: CPE 5
 * starts a block too far, the claim does not hold. OVERLAPPED: the get is also declared
 * double-buffered, and arithmetic is counted before its wait; NOTHING_UNDER: declared so, but
 * waited for at once; UNWAITED: declared so, and never waited for by dma_wait. */
enum { PLAIN, WRONGLY, OVERLAPPED, NOTHING_UNDER, UNWAITED };
static void tiled_get(const AthreadTest *t, int how) {
  int block = 4 * (int)sizeof(float), pitch = ROW_FLOATS * (int)sizeof(float);
  int c = _COL + (how == WRONGLY && _MYID == 5);
  float *mine = ldm_malloc(8 * 4 * sizeof(float));
  volatile int got = 0;
  athread_dma_tiled(ROW_SCOPE);
  if (how >= OVERLAPPED) athread_dma_overlapped();
  athread_get(PE_MODE, (void *)(t->matrix + 8 * _ROW * ROW_FLOATS + 4 * c), mine, 8 * block,
              (void *)&got, 0, pitch - block, block);
  if (how == OVERLAPPED) athread_count_vector_flops(64);
  if (how == UNWAITED)
    while (got != 1) {
    }
  else
    dma_wait(&got, 1);
  ldm_free(mine, 8 * 4 * sizeof(float));
}

void tiled(void *arg) { tiled_get(arg, PLAIN); }
void tiled_wrongly(void *arg) { tiled_get(arg, WRONGLY); }
void overlapped(void *arg) { tiled_get(arg, OVERLAPPED); }
void overlapped_nothing_under(void *arg) { tiled_get(arg, NOTHING_UNDER); }
void overlapped_unwaited(void *arg) { tiled_get(arg, UNWAITED); }

/* CPE 0 broadcasts to every CPE's LDM; every CPE sums what it got. */
void broadcast(void *arg) {
  AthreadTest *t = arg;
  reply = 0;
  if (_MYID == 0) {
    athread_get(BCAST_MODE, t->bcast, shared_buf, sizeof shared_buf, (void *)&reply, (char)0xff, 0,
                0);
    while (reply != 1) {
    }
  }
  athread_syn(ARRAY_SCOPE, 0xffff);
  float sum = 0;
  for (int i = 0; i < BCAST_FLOATS; i++) sum += shared_buf[i];
  reply = 0;
  athread_put(PE_MODE, &sum, &t->sums[_MYID], sizeof sum, (void *)&reply, 0, 0);
  while (reply != 1) {
  }
}

/* Each CPE writes, synchronises with its row (then column, then everyone) and reads what the
 * others of the scope wrote. */
void scopes(void *arg) {
  AthreadTest *t = arg;
  int id = _MYID, row = id / 8, col = id % 8;
  int seen[64];
  static const scope kinds[3] = {ROW_SCOPE, COL_SCOPE, ARRAY_SCOPE};
  for (int k = 0; k < 3; k++) {
    int mark = 1000 * (k + 1) + id;
    reply = 0;
    athread_put(PE_MODE, &mark, &t->marks[k][id], sizeof mark, (void *)&reply, 0, 0);
    while (reply != 1) {
    }
    athread_syn(kinds[k], kinds[k] == ARRAY_SCOPE ? 0xffff : 0xff);
    athread_get(PE_MODE, t->marks[k], seen, sizeof seen, (void *)&reply, 0, 0, 0);
    while (reply != 2) {
    }
    int ok = 1;
    for (int j = 0; j < 64; j++) {
      int member = k == 0 ? j / 8 == row : k == 1 ? j % 8 == col : 1;
      if (member && seen[j] != 1000 * (k + 1) + j) ok = 0;
    }
    put_int(&t->scope_ok[k][id], ok);
  }
}

/* RLC: point to point along rows and columns, and a broadcast along each row. */
void rlc(void *arg) {
  AthreadTest *t = arg;
  int id = _MYID, row = id / 8, col = id % 8;
  doublev4 v = simd_set_doublev4(id, id, id, id), got;
  REG_PUTR(v, (col + 1) % 8);
  REG_GETR(got);
  put_int(&t->from_row[id], (int)got[0]);
  REG_PUTC(v, (row + 1) % 8);
  REG_GETC(got);
  put_int(&t->from_col[id], (int)got[3]);
  athread_syn(ROW_SCOPE, 0xff); /* RLC does not say who sent: the point-to-point values first */
  if (col == 0)
    REG_PUTR(v, 8);
  else {
    REG_GETR(got);
    put_int(&t->row_bcast[id], (int)got[1]);
  }
}

void ldm_overflow(void *arg) {
  (void)arg;
  row_buf[0] = 1; /* 4 KB of static LDM */
  if (_MYID == 9) ldm_malloc(62 * 1024);
}

void deadlock(void *arg) {
  AthreadTest *t = arg;
  doublev4 v;
  REG_GETR(v); /* everyone waits for a value nobody sends */
  put_int(&t->ids[_MYID], (int)v[0]);
}

void self_send(void *arg) {
  (void)arg;
  doublev4 v = {0};
  if (_MYID == 3) REG_PUTR(v, 3);
}

void simd(void *arg) {
  AthreadTest *t = arg;
  float scale, result[4];
  volatile int done = 0;
  athread_get(PE_MODE, &t->scale, &scale, sizeof scale, (void *)&done, 0, 0, 0);
  while (done != 1) {
  }
  floatv4 a = simd_set_floatv4(1, 2, 3, 4), b, c;
  simd_loade(b, &scale);
  c = simd_vmad(a, b, a);
  simd_storeu(c, result);
  if (_MYID == 0) athread_put(PE_MODE, result, t->simd_out, sizeof result, (void *)&done, 0, 0);
}

/* Checking mode: DMA reaches guarded main memory; each CPE adds 1 to its 1024 floats. */
void checked_dma(void *arg) {
  AthreadTest *t = arg;
  float *part = ldm_malloc(1024 * sizeof(float));
  volatile int done = 0;
  athread_get(PE_MODE, t->checked + _MYID * 1024, part, 1024 * sizeof(float), (void *)&done, 0, 0,
              0);
  while (done != 1) {
  }
  for (int i = 0; i < 1024; i++) part[i] += 1;
  athread_put(PE_MODE, part, t->checked + _MYID * 1024, 1024 * sizeof(float), (void *)&done, 0, 0);
  while (done != 2) {
  }
  ldm_free(part, 1024 * sizeof(float));
}

/* ... and a direct load from it is an error. */
void direct_access(void *arg) {
  AthreadTest *t = arg;
  if (_MYID == 5) put_int(&t->ids[5], (int)t->checked[100]);
}
