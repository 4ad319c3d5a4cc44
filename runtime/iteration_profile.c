#include "iteration_profile.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

void swn_timing_record(SwnTiming *t, const SwnDistributed *d, const double phase[4]) {
  SwnIterationProfile *p = &t->sum;
  if (!p->bucket_bytes) {
    p->nbuckets = d->nbuckets;
    p->bucket_bytes = swn_alloc(sizeof(double) * (size_t)(p->nbuckets + 1));
    p->bucket_ready = swn_alloc(sizeof(double) * (size_t)(p->nbuckets + 1));
  }
  p->forward += phase[1] - phase[0], p->backward += phase[2] - phase[1],
      p->update += phase[3] - phase[2];
  for (int b = 0; b < p->nbuckets; b++) {
    p->bucket_bytes[b] = 4.0 * (double)d->words[b];
    p->bucket_ready[b] += d->ready_at[b] - phase[1];
  }
  t->count++;
}

void swn_timing_write(SwnTiming *t, const char *path, const char *network, int batch) {
  SwnIterationProfile *p = &t->sum;
  if (!t->count) return;
  double n = t->count;
  snprintf(p->network, sizeof p->network, "%s", network);
  p->batch = batch;
  p->forward /= n, p->backward /= n, p->update /= n;
  for (int b = 0; b < p->nbuckets; b++) p->bucket_ready[b] /= n;
  t->count = 0;
  FILE *f = fopen(path, "w");
  if (!f) swn_fatal_at(path, "cannot write the profile: %s", strerror(errno));
  swn_profile_write(p, f);
  if (fclose(f)) swn_fatal_at(path, "cannot write the profile: %s", strerror(errno));
  printf("wrote %s: one iteration's phases and gradient buckets, for swnc-sim\n", path);
}
