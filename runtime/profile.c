/* --profile: wall time per layer and phase, from the marks generated code places where each
 * layer's kernel calls begin; on a target that estimates its hardware's time (swk_estimate:
 * sw26010 on its emulator), also the estimate and the work behind it per layer and phase. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "kernels.h"
#include "machine_load.h"
#include "profile.h"
#include "util.h"

struct SwnProfile {
  const SwnNetwork *net;
  double *seconds;       /* [layer][phase] */
  SwkEstimate *estimate; /* [layer][phase]: the target's estimate, if it makes one */
  SwkEstimate last;      /* the totals at the last mark */
  bool estimating;
  int current, phase;
  double since;
  int64_t steps;
  SwnLoadMark started; /* what else ran on the machine meanwhile */
};

static void add_difference(SwkEstimate *sum, const SwkEstimate *now, const SwkEstimate *before) {
  sum->seconds += now->seconds - before->seconds;
  sum->cpe_seconds += now->cpe_seconds - before->cpe_seconds;
  sum->mpe_seconds += now->mpe_seconds - before->mpe_seconds;
  sum->flops += now->flops - before->flops;
  sum->dma_bytes += now->dma_bytes - before->dma_bytes;
  sum->rlc_words += now->rlc_words - before->rlc_words;
  sum->launches += now->launches - before->launches;
}

/* The work this thread's estimate leaves out (swn_target_exclude_*), and where it began. */
static _Thread_local SwkEstimate excluded, excluded_from;

/* This thread's estimate: the kernel set's totals less what is left out. */
static bool own_estimate(SwkEstimate *e) {
  if (!swk_estimate(e)) return false;
  SwkEstimate none = {0};
  add_difference(e, &none, &excluded);
  return true;
}

double swn_target_now(void) {
  SwkEstimate e;
  return own_estimate(&e) ? e.seconds : swn_now();
}

void swn_target_exclude_begin(void) { swk_estimate(&excluded_from); }

void swn_target_exclude_end(void) {
  SwkEstimate now;
  if (swk_estimate(&now)) add_difference(&excluded, &now, &excluded_from);
}

bool swn_target_estimates(void) {
  SwkEstimate e;
  return swk_estimate(&e);
}

SwnProfile *swn_profile_new(const SwnNetwork *net) {
  SwnProfile *p = swn_alloc(sizeof *p);
  p->net = net;
  p->seconds = swn_alloc(sizeof(double) * 3 * (size_t)net->nlayers);
  p->estimate = swn_alloc(sizeof(SwkEstimate) * 3 * (size_t)net->nlayers);
  p->estimating = own_estimate(&p->last);
  p->current = -1;
  swn_load_mark(&p->started);
  return p;
}

void swn_profile_mark(SwnProfile *p, int op, int phase) {
  double now = swn_now();
  if (p->current >= 0) p->seconds[3 * p->current + p->phase] += now - p->since;
  if (p->estimating) {
    SwkEstimate totals;
    own_estimate(&totals);
    if (p->current >= 0) add_difference(&p->estimate[3 * p->current + p->phase], &totals, &p->last);
    p->last = totals;
  }
  if (op < 0 && phase == SWN_PHASE_UPDATE) p->steps++;
  p->current = op;
  p->phase = phase;
  p->since = now;
}

/* Per layer: the estimate per phase, the share of the MPE in it, and the work behind it, of
 * the profiled worker's core group; the other groups work on their shares meanwhile. */
static void report_estimate(const SwnProfile *p, int batch, int core_groups, FILE *f) {
  double per = p->steps ? 1.0 / (double)p->steps : 0, total[3] = {0}, mpe = 0;
  fprintf(f,
          "\nestimated time on the target per training iteration (ms; emulated work per iteration");
  if (core_groups > 1)
    fprintf(f, "; core group 0 of %d, on %d of the %d images, and the update", core_groups,
            batch / core_groups + (batch % core_groups > 0), batch);
  fprintf(f, "):\n%-32s %10s %10s %10s %6s %9s %9s %9s %8s\n", "layer", "forward", "backward",
          "update", "MPE", "GFLOP", "DMA MB", "RLC Mw", "launches");
  for (int i = 0; i < p->net->nlayers; i++) {
    const SwkEstimate *e = &p->estimate[3 * i];
    SwkEstimate sum = {0};
    for (int k = 0; k < 3; k++)
      add_difference(&sum, &e[k], &(SwkEstimate){0}), total[k] += e[k].seconds;
    mpe += sum.mpe_seconds;
    if (sum.seconds == 0) continue;
    fprintf(f, "%-32s %10.3f %10.3f %10.3f %5.0f%% %9.4f %9.2f %9.3f %8.1f\n", p->net->layers[i],
            e[0].seconds * 1e3 * per, e[1].seconds * 1e3 * per, e[2].seconds * 1e3 * per,
            100 * sum.mpe_seconds / sum.seconds, sum.flops * 1e-9 * per, sum.dma_bytes * 1e-6 * per,
            sum.rlc_words * 1e-6 * per, (double)sum.launches * per);
  }
  double iteration = (total[0] + total[1] + total[2]) * per;
  fprintf(f, "%-32s %10.3f %10.3f %10.3f %5.0f%%\n", "total", total[0] * 1e3 * per,
          total[1] * 1e3 * per, total[2] * 1e3 * per,
          iteration > 0 ? 100 * mpe * per / iteration : 0);
  if (iteration > 0)
    fprintf(f, "estimated: %.3f ms per iteration of %d images on %d core group%s, %.1f images/s\n",
            iteration * 1e3, batch, core_groups, core_groups == 1 ? "" : "s", batch / iteration);
}

/* Times taken beside other work include waiting for it: said, not left to be guessed. */
static void report_other_load(const SwnProfile *p, FILE *f) {
  SwnLoadMark now;
  swn_load_mark(&now);
  double others = swn_other_load(&p->started, &now);
  if (others >= 0.1)
    fprintf(f,
            "note: other processes kept %.0f%% of this machine's %ld cores busy while these "
            "times were taken; they include waiting for them (profile on an idle machine)\n",
            100 * others, sysconf(_SC_NPROCESSORS_ONLN));
}

void swn_profile_report(SwnProfile *p, int batch, int core_groups, FILE *f) {
  double total[3] = {0};
  for (int i = 0; i < 3 * p->net->nlayers; i++) total[i % 3] += p->seconds[i];
  double all = total[0] + total[1] + total[2], per = p->steps ? 1e3 / (double)p->steps : 0;
  fprintf(f,
          "\nprofile over %lld training iteration%s (ms per iteration), kernels: %s\n"
          "%-32s %10s %10s %10s %7s\n",
          (long long)p->steps, p->steps == 1 ? "" : "s", swk_isa(), "layer", "forward", "backward",
          "update", "share");
  for (int i = 0; i < p->net->nlayers; i++) {
    const double *s = &p->seconds[3 * i];
    double sum = s[0] + s[1] + s[2];
    if (sum == 0) continue;
    fprintf(f, "%-32s %10.3f %10.3f %10.3f %6.1f%%\n", p->net->layers[i], s[0] * per, s[1] * per,
            s[2] * per, all > 0 ? 100 * sum / all : 0);
  }
  fprintf(f, "%-32s %10.3f %10.3f %10.3f\n", "total", total[0] * per, total[1] * per,
          total[2] * per);
  if (p->estimating) report_estimate(p, batch, core_groups, f);
  report_other_load(p, f);
}

void swn_profile_write_json(const SwnProfile *p, const char *path, int batch) {
  FILE *f = fopen(path, "w");
  if (!f) swn_fatal_at(path, "cannot write the profile: %s", strerror(errno));
  double per = p->steps ? 1e3 / (double)p->steps : 0;
  fprintf(f, "{\"network\":\"%s\",\"batch\":%d,\"iterations\":%lld,\"kernels\":\"%s\",\"layers\":[",
          p->net->name, batch, (long long)p->steps, swk_isa());
  for (int i = 0, first = 1; i < p->net->nlayers; i++) {
    const double *s = &p->seconds[3 * i];
    if (s[0] + s[1] + s[2] == 0) continue;
    fprintf(f, "%s\n{\"name\":\"%s\",\"forward_ms\":%.6f,\"backward_ms\":%.6f,\"update_ms\":%.6f}",
            first ? "" : ",", p->net->layers[i], s[0] * per, s[1] * per, s[2] * per);
    first = 0;
  }
  fputs("\n]}\n", f);
  if (ferror(f) | fclose(f)) swn_fatal_at(path, "cannot write the profile");
}

void swn_profile_free(SwnProfile *p) {
  if (!p) return;
  free(p->seconds);
  free(p->estimate);
  free(p);
}
