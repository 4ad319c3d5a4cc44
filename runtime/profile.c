/* --profile: wall time per layer and phase, from the marks generated code places where each
 * layer's kernel calls begin. */
#include <stdio.h>
#include <stdlib.h>

#include "profile.h"
#include "util.h"

struct SwnProfile {
  const SwnNetwork *net;
  double *seconds; /* [layer][phase] */
  int current, phase;
  double since;
  int64_t steps;
};

SwnProfile *swn_profile_new(const SwnNetwork *net) {
  SwnProfile *p = swn_alloc(sizeof *p);
  p->net = net;
  p->seconds = swn_alloc(sizeof(double) * 3 * (size_t)net->nlayers);
  p->current = -1;
  return p;
}

void swn_profile_mark(SwnProfile *p, int op, int phase) {
  double now = swn_now();
  if (p->current >= 0) p->seconds[3 * p->current + p->phase] += now - p->since;
  if (op < 0 && phase == SWN_PHASE_UPDATE) p->steps++;
  p->current = op;
  p->phase = phase;
  p->since = now;
}

void swn_profile_report(SwnProfile *p, FILE *f) {
  double total[3] = {0};
  for (int i = 0; i < 3 * p->net->nlayers; i++) total[i % 3] += p->seconds[i];
  double all = total[0] + total[1] + total[2], per = p->steps ? 1e3 / (double)p->steps : 0;
  fprintf(f, "\nprofile over %lld training iterations (ms per iteration):\n%-32s %10s %10s %10s %7s\n",
          (long long)p->steps, "layer", "forward", "backward", "update", "share");
  for (int i = 0; i < p->net->nlayers; i++) {
    const double *s = &p->seconds[3 * i];
    double sum = s[0] + s[1] + s[2];
    if (sum == 0) continue;
    fprintf(f, "%-32s %10.3f %10.3f %10.3f %6.1f%%\n", p->net->layers[i], s[0] * per, s[1] * per, s[2] * per,
            all > 0 ? 100 * sum / all : 0);
  }
  fprintf(f, "%-32s %10.3f %10.3f %10.3f\n", "total", total[0] * per, total[1] * per, total[2] * per);
}

void swn_profile_free(SwnProfile *p) {
  if (!p) return;
  free(p->seconds);
  free(p);
}
