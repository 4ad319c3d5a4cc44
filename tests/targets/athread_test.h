/* What test_athread.c (MPE) and athread_cpe.c (CPE) share. */
#ifndef SWNC_ATHREAD_TEST_H
#define SWNC_ATHREAD_TEST_H

enum { ROW_FLOATS = 400, BCAST_FLOATS = 256 };

typedef struct AthreadTest {
  int ids[64];
  float matrix[64 * ROW_FLOATS], out[64 * ROW_FLOATS], copy[64 * ROW_FLOATS];
  float bcast[BCAST_FLOATS], sums[64];
  int marks[3][64], scope_ok[3][64];
  int from_row[64], from_col[64], row_bcast[64];
  float scale, simd_out[4];
  float *checked; /* CHECKED_FLOATS from aligned_alloc: main memory checking mode guards */
} AthreadTest;

enum { CHECKED_FLOATS = 64 * 1024 };

#endif
