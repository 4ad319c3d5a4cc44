/* Training-scaling prediction from a measured iteration (sim.h), and the profile's text form:
 *   swnc-profile 1
 *   network NAME
 *   batch B                      (per rank)
 *   forward S / backward S / update S   (seconds, one line each)
 *   buckets N
 *   bucket I bytes B ready S     (N lines; ready: seconds after backward began) */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../util.h"
#include "sim.h"

void swn_profile_write(const SwnIterationProfile *p, FILE *f) {
  fprintf(f,
          "swnc-profile 1\nnetwork %s\nbatch %d\nforward %.9g\nbackward %.9g\nupdate %.9g\nbuckets "
          "%d\n",
          p->network, p->batch, p->forward, p->backward, p->update, p->nbuckets);
  for (int b = 0; b < p->nbuckets; b++)
    fprintf(f, "bucket %d bytes %.0f ready %.9g\n", b, p->bucket_bytes[b], p->bucket_ready[b]);
}

static bool fail(char *error, size_t size, const char *path, int line, const char *what) {
  snprintf(error, size, "%s:%d: %s", path, line, what);
  return false;
}

bool swn_profile_read(const char *path, SwnIterationProfile *p, char *error, size_t size) {
  *p = (SwnIterationProfile){0};
  FILE *f = fopen(path, "r");
  if (!f) return fail(error, size, path, 0, "cannot open the profile");
  char line[256];
  int n = 0, seen = 0;
  bool ok = true;
  while (ok && fgets(line, sizeof line, f)) {
    n++;
    int version, index;
    double bytes, ready;
    if (n == 1)
      ok = sscanf(line, "swnc-profile %d", &version) == 1 && version == 1;
    else if (!strncmp(line, "network ", 8))
      ok = sscanf(line, "network %63s", p->network) == 1;
    else if (!strncmp(line, "batch ", 6))
      ok = sscanf(line, "batch %d", &p->batch) == 1 && p->batch > 0;
    else if (!strncmp(line, "forward ", 8))
      ok = sscanf(line, "forward %lf", &p->forward) == 1 && p->forward >= 0;
    else if (!strncmp(line, "backward ", 9))
      ok = sscanf(line, "backward %lf", &p->backward) == 1 && p->backward >= 0;
    else if (!strncmp(line, "update ", 7))
      ok = sscanf(line, "update %lf", &p->update) == 1 && p->update >= 0;
    else if (!strncmp(line, "buckets ", 8)) {
      ok = !p->bucket_bytes && sscanf(line, "buckets %d", &p->nbuckets) == 1 && p->nbuckets >= 0 &&
           p->nbuckets < 1000000;
      if (ok) {
        p->bucket_bytes = swn_alloc(sizeof(double) * ((size_t)p->nbuckets + 1));
        p->bucket_ready = swn_alloc(sizeof(double) * ((size_t)p->nbuckets + 1));
      }
    } else if (!strncmp(line, "bucket ", 7))
      ok = p->bucket_bytes &&
           sscanf(line, "bucket %d bytes %lf ready %lf", &index, &bytes, &ready) == 3 &&
           index == seen && index < p->nbuckets && bytes >= 0 && bytes <= SWN_SIM_MAX_BYTES &&
           ready >= 0 &&
           (seen++, p->bucket_bytes[index] = bytes, p->bucket_ready[index] = ready, true);
    else
      ok = line[0] == '\n' || line[0] == '#';
  }
  fclose(f);
  if (ok && (n == 0 || !p->batch || seen != p->nbuckets)) {
    swn_profile_release(p);
    return fail(error, size, path, n, "incomplete profile");
  }
  if (!ok) {
    swn_profile_release(p);
    return fail(error, size, path, n,
                "not a swnc profile line (written by a program's --comm-profile)");
  }
  return true;
}

void swn_profile_release(SwnIterationProfile *p) {
  free(p->bucket_bytes), free(p->bucket_ready);
  *p = (SwnIterationProfile){0};
}

static bool allreduce_time(const SwnMachine *m, const SwnAllreduceSetting *a, double bytes,
                           double *seconds, char *error, size_t size) {
  SwnSimResult r;
  if (!swn_simulate(m, a, bytes, false, &r, error, size)) return false;
  *seconds += r.seconds;
  swn_sim_result_free(&r);
  return true;
}

/* One bucket of `bytes` as the runtime sends it (SwnCompression). */
static bool bucket_time(const SwnMachine *m, const SwnAllreduceSetting *a, const SwnCompression *z,
                        double bytes, double *seconds, char *error, size_t size) {
  *seconds = 0;
  double sent = bytes;
  if (z->density < 1) {
    double chunks = ceil(bytes / 4 / z->chunk), keep = fmax(1, ceil(z->density * chunks));
    if (!allreduce_time(m, a, 4 * chunks, seconds, error, size)) return false;
    sent = fmin(bytes, keep * z->chunk * 4);
    *seconds += 2 * bytes * m->gamma; /* velocity and residual: one more pass each */
  }
  if (z->half) {
    if (!allreduce_time(m, a, 4, seconds, error, size)) return false;
    sent /= 2;
  }
  return allreduce_time(m, a, sent, seconds, error, size);
}

bool swn_cost_simulate(const SwnMachine *m, const SwnAllreduceSetting *a, double largest,
                       SwnCostTable *t, char *error, size_t size) {
  *t = (SwnCostTable){.ranks = m->nodes,
                      .groups = (m->nodes + m->per_supernode - 1) / m->per_supernode};
  swn_cost_ladder(t, largest);
  for (int alg = SWN_ALLREDUCE_TOPO; alg <= SWN_ALLREDUCE_HIER; alg++) {
    SwnAllreduceSetting one = *a;
    one.algorithm = (SwnAllreduceAlgorithm)alg;
    t->has[alg] = true;
    for (int i = 0; i < t->nsizes; i++) {
      t->seconds[alg][i] = 0;
      if (!allreduce_time(m, &one, t->bytes[i], &t->seconds[alg][i], error, size)) return false;
    }
  }
  return true;
}

/* The jobs of an iteration: merged buckets (auto) or one per bucket, each with its algorithm. */
typedef struct Jobs {
  int n;
  double *bytes, *ready;
  SwnAllreduceAlgorithm *algorithm;
} Jobs;

static bool plan_jobs(const SwnIterationProfile *p, const SwnMachine *m,
                      const SwnAllreduceSetting *a, const SwnCompression *z, Jobs *j,
                      SwnScaling *out, char *error, size_t size) {
  size_t n = (size_t)p->nbuckets + 1;
  int *job_of = swn_alloc(sizeof(int) * n);
  j->bytes = swn_alloc(sizeof(double) * n), j->ready = swn_alloc(sizeof(double) * n);
  j->algorithm = swn_alloc(sizeof(SwnAllreduceAlgorithm) * n);
  SwnCostTable t;
  bool ok = true, automatic = a->algorithm == SWN_ALLREDUCE_AUTO;
  double largest = 0, wire = z->half ? 2 : 4; /* bytes per float sent */
  for (int b = 0; b < p->nbuckets; b++) largest += p->bucket_bytes[b];
  if (automatic) {
    ok = swn_cost_simulate(m, a, fmax(largest / 4 * wire, 1), &t, error, size);
    out->threshold = ok ? swn_cost_threshold(&t, true) * 4 / wire : 0;
  }
  j->n = ok ? swn_merge_buckets(p->bucket_bytes, p->nbuckets, out->threshold, job_of) : 0;
  for (int b = 0; b < p->nbuckets && ok; b++)
    j->bytes[job_of[b]] += p->bucket_bytes[b], j->ready[job_of[b]] = p->bucket_ready[b];
  for (int k = 0; k < j->n; k++)
    j->algorithm[k] = automatic ? swn_cost_choice(&t, j->bytes[k] / 4 * wire, true) : a->algorithm;
  free(job_of);
  return ok;
}

/* Seconds of a rooted collective of `bytes` with hier's design. */
static bool rooted_time(const SwnMachine *m, const SwnAllreduceSetting *a, SwnCollective kind,
                        double bytes, double *seconds, char *error, size_t size) {
  SwnAllreduceSetting one = *a;
  one.algorithm = SWN_ALLREDUCE_HIER, one.collective = kind;
  *seconds = 0;
  return allreduce_time(m, &one, bytes, seconds, error, size);
}

/* Forward's time on the layers of bucket b: backward's share of them, scaled to forward. */
static double forward_share(const SwnIterationProfile *p, int b) {
  double begin = b ? p->bucket_ready[b - 1] : 0;
  double end = b == p->nbuckets - 1 ? p->backward : p->bucket_ready[b];
  if (!(p->backward > 0)) return p->forward / p->nbuckets;
  return p->forward * fmax(0, end - begin) / p->backward;
}

static bool predict_rooted(const SwnIterationProfile *p, const SwnMachine *m,
                           const SwnAllreduceSetting *a, SwnScaling *out, char *error,
                           size_t size) {
  double total = 0, t, port = 0, forward = 0; /* port: when the network is free */
  bool ok = true, staged = a->sync != SWN_SYNC_SC_B;
  for (int b = 0; b < p->nbuckets; b++) total += p->bucket_bytes[b];
  if (!staged) { /* one broadcast before forward */
    ok = rooted_time(m, a, SWN_COLLECTIVE_BROADCAST, total, &t, error, size);
    port = forward = t, out->communication += t;
  }
  for (int b = p->nbuckets - 1; b >= 0 && ok; b--) { /* forward order */
    if (staged) {
      ok = rooted_time(m, a, SWN_COLLECTIVE_BROADCAST, p->bucket_bytes[b], &t, error, size);
      port += t, out->communication += t;
      forward = fmax(forward, port);
    }
    forward += forward_share(p, b);
  }
  if (!p->nbuckets) forward += p->forward;
  double backward_end = forward + p->backward;
  if (a->sync == SWN_SYNC_SC_OBR) {
    for (int b = 0; b < p->nbuckets && ok; b++) {
      ok = rooted_time(m, a, SWN_COLLECTIVE_REDUCE, p->bucket_bytes[b], &t, error, size);
      port = fmax(port, forward + p->bucket_ready[b]) + t, out->communication += t;
    }
    out->jobs = p->nbuckets;
  } else if (ok && total > 0) {
    ok = rooted_time(m, a, SWN_COLLECTIVE_REDUCE, total, &t, error, size);
    port = fmax(port, backward_end) + t, out->communication += t;
    out->jobs = 1;
  }
  out->iteration = fmax(backward_end, port) + p->update;
  out->exposed = out->iteration - out->compute;
  out->speedup = m->nodes * out->compute / out->iteration;
  return ok;
}

bool swn_predict(const SwnIterationProfile *p, const SwnMachine *m, const SwnAllreduceSetting *a,
                 const SwnCompression *compression, SwnScaling *out, char *error, size_t size) {
  double compute = p->forward + p->backward + p->update;
  *out = (SwnScaling){.iteration = compute, .compute = compute, .speedup = 1};
  if (m->nodes <= 1) return true;
  if (a->sync != SWN_SYNC_ALLREDUCE) return predict_rooted(p, m, a, out, error, size);
  Jobs j = {0};
  bool ok = plan_jobs(p, m, a, compression, &j, out, error, size);
  double comm_end = 0, biggest = -1; /* the jobs' allreduces, in order, on one network port */
  for (int k = 0; k < j.n && ok; k++) {
    double seconds;
    SwnAllreduceSetting one = *a;
    one.algorithm = j.algorithm[k];
    ok = bucket_time(m, &one, compression, j.bytes[k], &seconds, error, size);
    comm_end = fmax(comm_end, j.ready[k]) + seconds;
    out->communication += seconds;
    if (j.bytes[k] > biggest) biggest = j.bytes[k], out->largest = j.algorithm[k];
  }
  out->jobs = j.n;
  free(j.bytes), free(j.ready), free(j.algorithm);
  double backward_end = fmax(p->backward, comm_end);
  out->iteration = p->forward + backward_end + p->update;
  out->exposed = backward_end - p->backward;
  out->speedup = m->nodes * compute / out->iteration;
  return ok;
}
