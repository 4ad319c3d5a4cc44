/* Cost tables and the auto rule (cost.h). */
#include "cost.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { FIRST_SIZE = 1024 };
/* A bucket reaches at least this share of the large-message bandwidth: Hockney's n_1/2, the
 * size where latency and bytes cost the same. Higher shares merge more and overlap less: at
 * 0.9, LeNet's whole gradient became one bucket on 2 ranks of one machine (shm's alpha is tens
 * of microseconds), so nothing was left to overlap with backward. */
#define LATENCY_SHARE 0.5

int swn_cost_ladder(SwnCostTable *t, double largest) {
  t->nsizes = 0;
  double b = FIRST_SIZE;
  for (; b < largest && t->nsizes < SWN_COST_MAX_SIZES - 1; b *= 4) t->bytes[t->nsizes++] = b;
  t->bytes[t->nsizes++] = largest > FIRST_SIZE ? fmin(largest, b) : FIRST_SIZE;
  return t->nsizes;
}

/* Seconds per byte of large messages: the slope from the largest size back to one at most a
 * quarter of it (a short last segment would hand its noise to every larger bucket). */
static double large_slope(const SwnCostTable *t, SwnAllreduceAlgorithm a) {
  int k = t->nsizes - 1, j = 0;
  if (k == 0) return 0;
  while (j + 1 < k && t->bytes[j + 1] <= t->bytes[k] / 4) j++;
  double slope = (t->seconds[a][k] - t->seconds[a][j]) / (t->bytes[k] - t->bytes[j]);
  return slope > 0 ? slope : 0;
}

double swn_cost_time(const SwnCostTable *t, SwnAllreduceAlgorithm a, double bytes) {
  const double *b = t->bytes, *s = t->seconds[a];
  int n = t->nsizes;
  if (n == 1 || bytes <= b[0]) return s[0];
  if (bytes >= b[n - 1]) return s[n - 1] + large_slope(t, a) * (bytes - b[n - 1]);
  int k = 1; /* the segment [b[k - 1], b[k]] holding bytes */
  while (bytes > b[k]) k++;
  return s[k - 1] + (s[k] - s[k - 1]) / (b[k] - b[k - 1]) * (bytes - b[k - 1]);
}

static bool candidate(const SwnCostTable *t, int a, bool messages_only) {
  return t->has[a] && !(messages_only && a == SWN_ALLREDUCE_SHM);
}

SwnAllreduceAlgorithm swn_cost_choice(const SwnCostTable *t, double bytes, bool messages_only) {
  SwnAllreduceAlgorithm best = SWN_ALLREDUCE_MPI;
  double fastest = INFINITY;
  for (int a = 0; a < SWN_ALLREDUCE_COUNT; a++)
    if (candidate(t, a, messages_only) && swn_cost_time(t, a, bytes) < fastest)
      fastest = swn_cost_time(t, a, bytes), best = (SwnAllreduceAlgorithm)a;
  return best;
}

static double fastest_time(const SwnCostTable *t, double bytes, bool messages_only) {
  return swn_cost_time(t, swn_cost_choice(t, bytes, messages_only), bytes);
}

double swn_cost_threshold(const SwnCostTable *t, bool messages_only) {
  int n = t->nsizes;
  double last = t->bytes[n - 1];
  if (n < 2) return last;
  double per_byte = large_slope(t, swn_cost_choice(t, last, messages_only));
  if (!(per_byte > 0)) return last;
  for (double b = t->bytes[0]; b < last; b *= 2)
    if (per_byte * b >= LATENCY_SHARE * fastest_time(t, b, messages_only)) return b;
  return last;
}

int swn_merge_buckets(const double *bytes, int n, double threshold, int *job_of) {
  int jobs = 0;
  double open = 0; /* bytes in the job being filled */
  for (int b = 0; b < n; b++) {
    job_of[b] = jobs;
    open += bytes[b];
    if (open >= threshold || b == n - 1) jobs++, open = 0;
  }
  return jobs;
}

void swn_cost_write(const SwnCostTable *t, FILE *f) {
  fprintf(f, "swnc-allreduce-costs 1\nranks %d\ngroups %d\nsizes", t->ranks, t->groups);
  for (int i = 0; i < t->nsizes; i++) fprintf(f, " %.0f", t->bytes[i]);
  fprintf(f, "\n");
  for (int a = 0; a < SWN_ALLREDUCE_COUNT; a++) {
    if (!t->has[a]) continue;
    fprintf(f, "%s", swn_allreduce_names[a]);
    for (int i = 0; i < t->nsizes; i++) fprintf(f, " %.6g", t->seconds[a][i]);
    fprintf(f, "\n");
  }
}

/* Reads up to `max` positive numbers from `text`; returns how many, -1 on anything else. */
static int numbers(const char *text, double *out, int max) {
  int n = 0;
  for (char *end;; text = end) {
    while (*text == ' ' || *text == '\t') text++;
    if (*text == '\n' || !*text) return n;
    double v = strtod(text, &end);
    if (end == text || !(v > 0) || !isfinite(v) || n == max) return -1;
    out[n++] = v;
  }
}

static bool fail(char *error, size_t size, const char *path, int line, const char *what) {
  snprintf(error, size, "%s:%d: %s", path, line, what);
  return false;
}

static bool parse_line(const char *line, SwnCostTable *t) {
  char name[16];
  int used = 0;
  if (sscanf(line, "ranks %d", &t->ranks) == 1) return t->ranks > 1;
  if (sscanf(line, "groups %d", &t->groups) == 1) return t->groups > 0;
  if (!strncmp(line, "sizes ", 6)) {
    if (t->nsizes) return false;
    t->nsizes = numbers(line + 6, t->bytes, SWN_COST_MAX_SIZES);
    for (int i = 1; i < t->nsizes; i++)
      if (t->bytes[i] <= t->bytes[i - 1]) return false;
    return t->nsizes > 0;
  }
  if (sscanf(line, "%15s%n", name, &used) != 1) return false;
  int a = swn_allreduce_find(name);
  if (a <= SWN_ALLREDUCE_AUTO || t->has[a] || !t->nsizes) return false;
  t->has[a] = true;
  return numbers(line + used, t->seconds[a], SWN_COST_MAX_SIZES) == t->nsizes;
}

bool swn_cost_read(const char *path, SwnCostTable *t, char *error, size_t size) {
  *t = (SwnCostTable){0};
  FILE *f = fopen(path, "r");
  if (!f) return fail(error, size, path, 0, "cannot open the allreduce cost table");
  char line[1024];
  int n = 0;
  bool ok = true;
  while (ok && fgets(line, sizeof line, f)) {
    int version;
    n++;
    if (n == 1)
      ok = sscanf(line, "swnc-allreduce-costs %d", &version) == 1 && version == 1;
    else
      ok = line[0] == '\n' || line[0] == '#' || parse_line(line, t);
  }
  fclose(f);
  if (!ok)
    return fail(
        error, size, path, n,
        "not a line of an allreduce cost table (bench/allreduce --write-costs writes them)");
  bool any = false;
  for (int a = 0; a < SWN_ALLREDUCE_COUNT; a++) any |= t->has[a];
  if (!t->ranks || !t->groups || !any)
    return fail(error, size, path, n, "incomplete allreduce cost table");
  return true;
}
