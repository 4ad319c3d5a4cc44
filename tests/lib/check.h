/* A minimal test harness: CHECK counts, main prints "N passed, N failed". */
#ifndef SWNC_CHECK_H
#define SWNC_CHECK_H

#include <stdio.h>

static int checks_passed, checks_failed;

#define CHECK(cond)                                                                                \
  do {                                                                                             \
    if (cond)                                                                                      \
      checks_passed++;                                                                             \
    else {                                                                                         \
      checks_failed++;                                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);                     \
    }                                                                                              \
  } while (0)

#define CHECK_EQ_INT(a, b)                                                                         \
  do {                                                                                             \
    long long a_ = (long long)(a), b_ = (long long)(b);                                            \
    if (a_ == b_)                                                                                  \
      checks_passed++;                                                                             \
    else {                                                                                         \
      checks_failed++;                                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s == %s (%lld != %lld)\n", __FILE__, __LINE__, #a,    \
              #b, a_, b_);                                                                         \
    }                                                                                              \
  } while (0)

static int check_report(void) {
  printf("%d passed, %d failed\n", checks_passed, checks_failed);
  return checks_failed != 0;
}

#endif
