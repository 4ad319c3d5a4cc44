/* swnc-sim: the network simulator's command line (docs/runtime.md, "Network simulator").
 * Replays the allreduce schedules the runtime runs on a modelled machine (a preset, below, or
 * its figures given one by one) for 1..1024 nodes, either for one message size or for a
 * training iteration profiled by a generated program's --comm-profile. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/sim.h"
#include "util.h"

/* The machines --machine names. Both are Sunway TaihuLight as swCaffe (section 5) describes
 * it: 256 nodes a supernode, a byte across supernodes 4 times a byte inside (the central
 * network's quarter of the bandwidth), 1 us a message, sums at 9.33 GB/s (a core group's
 * 28 GB/s moving 3 bytes per byte summed). They differ in the bandwidth inside a supernode:
 * - taihulight-links: the links' point-to-point 12 GB/s;
 * - taihulight (the default): 0.43 GB/s, what swCaffe's allreduce got with 1024 nodes
 *   exchanging at once, fitted to its AlexNet run (sub-batch 256: 715.45x one node's 94.17
 *   img/s, 244 MB packed after backward; this preset with --no-overlap: 715.9x). The same fit
 *   gives its sub-batches 128 and 64 within 2% and 8% and ResNet-50 within 2% of its published
 *   928x (docs/runtime.md, bench/sw26010.sh): nothing published explains the 28x
 *   between the links and this, so it is a measurement of the machine under load, not a
 *   model of its parts, and holds at 1024 nodes (fewer, the load and so the loss are less). */
typedef struct Machine {
  const char *name;
  SwnMachine figures;
} Machine;

#define TAIHULIGHT(bandwidth)                                                                      \
  {                                                                                                \
    .per_supernode = 256, .alpha = 1e-6, .beta = 1 / (bandwidth), .oversubscription = 4,           \
    .gamma = 1 / 9.33e9                                                                            \
  }
static const Machine machines[] = {{"taihulight", TAIHULIGHT(0.43e9)},
                                   {"taihulight-links", TAIHULIGHT(12e9)}};
enum { MACHINES = sizeof machines / sizeof machines[0] };

typedef struct Options {
  const Machine *preset;
  SwnMachine given; /* figures given one by one (0: the preset's) */
  SwnMachine machine;
  SwnAllreduceSetting allreduce;
  int min_nodes, max_nodes;
  double bytes, compute_scale;
  SwnCompression compression;
  const char *profile;
  bool steps, algorithm_given, no_overlap;
} Options;

static void usage(FILE *f) {
  fprintf(
      f,
      "usage: swnc-sim (--bytes N | --profile FILE) [options]\n\n"
      "Simulates the allreduce schedules swnc's runtime runs, on a modelled network, for 1..1024 "
      "nodes.\n"
      "  --bytes N              one allreduce of N bytes: time, bus bandwidth, bytes across "
      "supernodes\n"
      "  --profile FILE         a training iteration (a program's --comm-profile): speedup and "
      "the\n"
      "                         communication's share at the profile's per-node batch\n"
      "  --compute-scale X      multiply the profile's compute times by X (another node's speed)\n"
      "  --comm-precision P     fp32 (default) or fp16: the buckets sent as halves\n"
      "  --sparse D             send the top fraction D of each bucket's chunks (e.g. 0.01)\n"
      "  --sparse-chunk N       floats per chunk (default 4096)\n"
      "  --nodes A..B           node counts, powers of two from A to B (default 1..1024)\n"
      "  --algorithm ALG        topo (default), ring, hier, or auto (--profile: the runtime's\n"
      "                         rule on the simulated costs of the three: buckets merged to\n"
      "                         their n_1/2, each by the algorithm predicted fastest)\n"
      "  --sync S               --profile: allreduce (default), or S-Caffe's reduce to rank 0\n"
      "                         and broadcast with hier's chains: sc-b (after backward, before\n"
      "                         forward), sc-ob (the broadcast in stages overlapping forward),\n"
      "                         sc-obr (also the reduce overlapping backward)\n"
      "  --no-overlap           --profile: swCaffe's schedule: all gradients packed into one\n"
      "                         allreduce after backward, nothing overlapped\n"
      "  --collective C         --bytes: allreduce (default), reduce (to node 0) or broadcast\n"
      "                         (from node 0), the last two with hier's chains\n"
      "  --mapping MAP          topo's numbering: round-robin (default, supernode-aware) or "
      "contiguous\n"
      "  --chain N              ranks per chain for hier (default 8)\n"
      "  --hier-upper U         hier among the chain heads: auto (default: binomial below 64 "
      "KiB,\n"
      "                         ring above), binomial, ring or chain (a chain of chains)\n"
      "  --machine M            taihulight (default: TaihuLight's bandwidth under the load of\n"
      "                         1024 nodes, fitted to swCaffe's AlexNet run: 0.43 GB/s) or\n"
      "                         taihulight-links (its links' 12 GB/s); the figures below\n"
      "                         override the preset's\n"
      "  --per-supernode Q      nodes per supernode (TaihuLight 256)\n"
      "  --alpha S              latency per message, seconds (TaihuLight 1e-6)\n"
      "  --bandwidth B          bytes/s between two nodes of a supernode\n"
      "  --oversubscription F   across supernodes a byte costs F times more (TaihuLight 4)\n"
      "  --reduce-bandwidth B   bytes/s summed (TaihuLight 9.33e9: 28 GB/s moving 3 bytes per\n"
      "                         byte)\n"
      "  --steps                also print the per-step traffic of the largest node count\n"
      "  -h, --help             this help\n"
      "  --version              which swnc this is\n");
}

static _Noreturn void die(const char *fmt, const char *arg) {
  fprintf(stderr, "swnc-sim: error: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, " (see --help)\n");
  exit(1);
}

static double positive(const char *opt, const char *text) {
  char *end;
  errno = 0;
  double v = strtod(text, &end);
  if (errno || *end || end == text || !(v > 0) || !isfinite(v))
    die("%s needs a positive number", opt);
  return v;
}

static void node_range(const char *text, Options *o) {
  char *end;
  long a = strtol(text, &end, 10), b = a;
  if (!strncmp(end, "..", 2)) b = strtol(end + 2, &end, 10);
  if (*end || a < 1 || b < a || b > 65536)
    die("--nodes takes A..B with 1 <= A <= B <= 65536, not '%s'", text);
  o->min_nodes = (int)a, o->max_nodes = (int)b;
}

static const Machine *machine_named(const char *name) {
  for (int i = 0; i < MACHINES; i++)
    if (!strcmp(machines[i].name, name)) return &machines[i];
  die("--machine must be taihulight or taihulight-links, not '%s'", name);
}

/* The preset's figures, those given instead where given. */
static SwnMachine with_given(SwnMachine m, const SwnMachine *given) {
  if (given->per_supernode) m.per_supernode = given->per_supernode;
  if (given->alpha) m.alpha = given->alpha;
  if (given->beta) m.beta = given->beta;
  if (given->oversubscription) m.oversubscription = given->oversubscription;
  if (given->gamma) m.gamma = given->gamma;
  return m;
}

static void parse(int argc, char **argv, Options *o) {
  enum {
    BYTES = 256,
    PROFILE,
    SCALE,
    PRECISION,
    SPARSE,
    SPARSE_CHUNK,
    NODES,
    ALGORITHM,
    MAPPING,
    CHAIN,
    UPPER,
    PER,
    ALPHA,
    BANDWIDTH,
    OVER,
    REDUCE,
    STEPS,
    SYNC,
    COLLECTIVE,
    NO_OVERLAP,
    MACHINE
  };
  static const struct option longs[] = {
      {"bytes", 1, 0, BYTES},           {"profile", 1, 0, PROFILE},
      {"compute-scale", 1, 0, SCALE},   {"comm-precision", 1, 0, PRECISION},
      {"sparse", 1, 0, SPARSE},         {"sparse-chunk", 1, 0, SPARSE_CHUNK},
      {"nodes", 1, 0, NODES},           {"algorithm", 1, 0, ALGORITHM},
      {"mapping", 1, 0, MAPPING},       {"chain", 1, 0, CHAIN},
      {"hier-upper", 1, 0, UPPER},      {"per-supernode", 1, 0, PER},
      {"alpha", 1, 0, ALPHA},           {"bandwidth", 1, 0, BANDWIDTH},
      {"oversubscription", 1, 0, OVER}, {"reduce-bandwidth", 1, 0, REDUCE},
      {"steps", 0, 0, STEPS},           {"sync", 1, 0, SYNC},
      {"collective", 1, 0, COLLECTIVE}, {"no-overlap", 0, 0, NO_OVERLAP},
      {"machine", 1, 0, MACHINE},       {"help", 0, 0, 'h'},
      {"version", 0, 0, 'V'},           {0, 0, 0, 0}};
  *o = (Options){.preset = &machines[0],
                 .allreduce = {.algorithm = SWN_ALLREDUCE_TOPO,
                               .map = SWN_MAP_ROUND_ROBIN,
                               .chain = 8,
                               .upper = SWN_UPPER_AUTO},
                 .min_nodes = 1,
                 .max_nodes = 1024,
                 .compute_scale = 1,
                 .compression = {.density = 1, .chunk = 4096}};
  opterr = 0;
  for (int c; (c = getopt_long(argc, argv, ":h", longs, NULL)) != -1;) {
    switch (c) {
    case BYTES:
      o->bytes = positive("--bytes", optarg);
      if (o->bytes > SWN_SIM_MAX_BYTES)
        die("--bytes %s is more than 1 TiB (1099511627776)", optarg);
      break;
    case PROFILE: o->profile = optarg; break;
    case SCALE: o->compute_scale = positive("--compute-scale", optarg); break;
    case PRECISION:
      if (strcmp(optarg, "fp32") && strcmp(optarg, "fp16"))
        die("--comm-precision must be fp32 or fp16, not '%s'", optarg);
      o->compression.half = !strcmp(optarg, "fp16");
      break;
    case SPARSE:
      o->compression.density = positive("--sparse", optarg);
      if (o->compression.density > 1) die("--sparse needs a fraction in (0, 1], not '%s'", optarg);
      break;
    case SPARSE_CHUNK: o->compression.chunk = floor(positive("--sparse-chunk", optarg)); break;
    case NODES: node_range(optarg, o); break;
    case ALGORITHM:
      o->algorithm_given = true;
      o->allreduce.algorithm = (SwnAllreduceAlgorithm)swn_allreduce_find(optarg);
      if (o->allreduce.algorithm != SWN_ALLREDUCE_TOPO &&
          o->allreduce.algorithm != SWN_ALLREDUCE_RING &&
          o->allreduce.algorithm != SWN_ALLREDUCE_HIER &&
          o->allreduce.algorithm != SWN_ALLREDUCE_AUTO)
        die("--algorithm must be topo, ring, hier or auto, not '%s'", optarg);
      break;
    case MAPPING:
      if (!strcmp(optarg, "round-robin"))
        o->allreduce.map = SWN_MAP_ROUND_ROBIN;
      else if (!strcmp(optarg, "contiguous"))
        o->allreduce.map = SWN_MAP_CONTIGUOUS;
      else
        die("--mapping must be round-robin or contiguous, not '%s'", optarg);
      break;
    case CHAIN: o->allreduce.chain = (int)positive("--chain", optarg); break;
    case UPPER: {
      int u = swn_upper_find(optarg);
      if (u < 0) die("--hier-upper must be auto, binomial, ring or chain, not '%s'", optarg);
      o->allreduce.upper = (SwnUpperLevel)u;
      break;
    }
    case MACHINE: o->preset = machine_named(optarg); break;
    case PER: o->given.per_supernode = (int)positive("--per-supernode", optarg); break;
    case ALPHA: o->given.alpha = positive("--alpha", optarg); break;
    case BANDWIDTH: o->given.beta = 1 / positive("--bandwidth", optarg); break;
    case OVER: o->given.oversubscription = positive("--oversubscription", optarg); break;
    case REDUCE: o->given.gamma = 1 / positive("--reduce-bandwidth", optarg); break;
    case STEPS: o->steps = true; break;
    case SYNC: {
      int v = swn_sync_find(optarg);
      if (v < 0) die("--sync must be allreduce, sc-b, sc-ob or sc-obr, not '%s'", optarg);
      o->allreduce.sync = (SwnSync)v;
      break;
    }
    case COLLECTIVE:
      if (!strcmp(optarg, "allreduce"))
        o->allreduce.collective = SWN_COLLECTIVE_ALLREDUCE;
      else if (!strcmp(optarg, "reduce"))
        o->allreduce.collective = SWN_COLLECTIVE_REDUCE;
      else if (!strcmp(optarg, "broadcast"))
        o->allreduce.collective = SWN_COLLECTIVE_BROADCAST;
      else
        die("--collective must be allreduce, reduce or broadcast, not '%s'", optarg);
      break;
    case NO_OVERLAP: o->no_overlap = true; break;
    case 'h': usage(stdout); exit(0);
    case 'V': printf("swnc-sim (swnc %s)\n", SWNC_VERSION); exit(0);
    case ':': die("option '%s' needs an argument", argv[optind - 1]);
    default: die("unknown option '%s'", argv[optind - 1]);
    }
  }
  if (optind < argc) die("unexpected argument '%s'", argv[optind]);
  o->machine = with_given(o->preset->figures, &o->given);
  if (!o->bytes == !o->profile) die("%s", "give one of --bytes and --profile");
  if (o->bytes && (o->compression.half || o->compression.density < 1))
    die("%s", "--comm-precision and --sparse model training iterations: give --profile");
  if (o->bytes && o->allreduce.algorithm == SWN_ALLREDUCE_AUTO)
    die("%s", "auto chooses per gradient bucket: give --profile");
  if (o->bytes && o->allreduce.sync != SWN_SYNC_ALLREDUCE)
    die("%s", "--sync models training iterations: give --profile (or --collective for one "
              "message)");
  if (o->no_overlap && !o->profile)
    die("%s", "--no-overlap models training iterations: give --profile");
  if (o->no_overlap && o->allreduce.sync != SWN_SYNC_ALLREDUCE)
    die("%s", "--no-overlap is the allreduce's schedule, --sync the reduce to rank 0's");
  if (o->profile && o->allreduce.collective != SWN_COLLECTIVE_ALLREDUCE)
    die("%s", "--collective is one message's: give --bytes (or --sync for training)");
  bool rooted = o->allreduce.sync != SWN_SYNC_ALLREDUCE ||
                o->allreduce.collective != SWN_COLLECTIVE_ALLREDUCE;
  if (rooted && o->algorithm_given && o->allreduce.algorithm != SWN_ALLREDUCE_HIER)
    die("reduce to node 0 and broadcast run hier's chains, not --algorithm %s",
        swn_allreduce_names[o->allreduce.algorithm]);
  if (rooted && o->compression.half) die("%s", "the reduce to rank 0 is not compressed");
  if (rooted && o->compression.density < 1)
    die("%s", "the reduce to rank 0 sends every gradient: --sparse is the allreduce's");
  if (rooted) o->allreduce.algorithm = SWN_ALLREDUCE_HIER;
}

static void print_steps(const SwnSimResult *r) {
  printf("\n# step  bytes sent (all nodes)  across supernodes\n");
  for (int k = 0; k < r->steps; k++)
    printf("%6d  %22.0f  %17.0f\n", k, r->step_bytes[k], r->step_cross[k]);
}

/* "taihulight: alpha 1e-06 s, 4.3e+08 B/s inside, ..." */
static void print_machine(const Options *o) {
  const SwnMachine *m = &o->machine;
  const SwnMachine *g = &o->given;
  bool changed = g->per_supernode || g->alpha || g->beta || g->oversubscription || g->gamma;
  printf("%s%s: alpha %g s, %g B/s inside, x%g across supernodes of %d, sum %g B/s",
         o->preset->name, changed ? " as given" : "", m->alpha, 1 / m->beta, m->oversubscription,
         m->per_supernode, 1 / m->gamma);
}

/* "topo (round-robin)", "hier (chains of 8, heads: ring)", ... */
static void print_setting(const SwnAllreduceSetting *a) {
  if (a->sync != SWN_SYNC_ALLREDUCE)
    printf("%s: reduce to rank 0 and broadcast, ", swn_sync_names[a->sync]);
  printf("%s", swn_allreduce_names[a->algorithm]);
  if (a->algorithm == SWN_ALLREDUCE_TOPO)
    printf(a->map == SWN_MAP_ROUND_ROBIN ? " (round-robin)" : " (contiguous)");
  if (a->algorithm == SWN_ALLREDUCE_HIER)
    printf(" (chains of %d, heads: %s)", a->chain, swn_upper_names[a->upper]);
}

static int message(const Options *o) {
  static const char *const kinds[] = {"allreduce", "reduce to node 0", "broadcast from node 0"};
  printf("# %s of %.0f bytes, ", kinds[o->allreduce.collective], o->bytes);
  print_setting(&o->allreduce);
  printf("; ");
  print_machine(o);
  printf("\n");
  printf("# %-8s %14s %14s %20s\n", "Nodes", "Time(us)", "BusBW(GB/s)", "Across supernodes(B)");
  SwnSimResult last = {0};
  for (int p = o->min_nodes; p <= o->max_nodes; p *= 2) {
    SwnMachine m = o->machine;
    m.nodes = p;
    SwnSimResult r;
    char error[256];
    if (!swn_simulate(&m, &o->allreduce, o->bytes, o->steps, &r, error, sizeof error)) {
      fprintf(stderr, "swnc-sim: error: %s\n", error);
      return 1;
    }
    /* bus bandwidth as NCCL counts it: a reduce or broadcast moves the vector once */
    double moved = o->allreduce.collective == SWN_COLLECTIVE_ALLREDUCE ? 2.0 * (p - 1) / p : 1;
    double bus = p > 1 ? moved * o->bytes / r.seconds / 1e9 : 0;
    printf("%-10d %14.2f %14.3f %20.0f\n", p, r.seconds * 1e6, bus, r.cross_bytes);
    swn_sim_result_free(&last);
    last = r;
  }
  if (o->steps) print_steps(&last);
  swn_sim_result_free(&last);
  return 0;
}

/* swCaffe's schedule: the gradients packed into one buffer, allreduced once after backward. */
static void pack_after_backward(SwnIterationProfile *p) {
  double total = 0;
  for (int b = 0; b < p->nbuckets; b++) total += p->bucket_bytes[b];
  if (p->nbuckets < 1) return;
  p->nbuckets = 1, p->bucket_bytes[0] = total, p->bucket_ready[0] = p->backward;
}

static int training(const Options *o) {
  SwnIterationProfile prof;
  char error[256];
  if (!swn_profile_read(o->profile, &prof, error, sizeof error)) {
    fprintf(stderr, "swnc-sim: error: %s\n", error);
    return 1;
  }
  prof.forward *= o->compute_scale, prof.backward *= o->compute_scale,
      prof.update *= o->compute_scale;
  for (int b = 0; b < prof.nbuckets; b++) prof.bucket_ready[b] *= o->compute_scale;
  if (o->no_overlap) pack_after_backward(&prof);
  double total = 0;
  for (int b = 0; b < prof.nbuckets; b++) total += prof.bucket_bytes[b];
  const SwnCompression *z = &o->compression;
  printf("# %s, batch %d per node: compute %.2f ms per iteration, %d gradient buckets, %.1f MB; "
         "%s",
         prof.network, prof.batch, 1e3 * (prof.forward + prof.backward + prof.update),
         prof.nbuckets, total / 1e6, o->allreduce.sync == SWN_SYNC_ALLREDUCE ? "allreduce " : "");
  print_setting(&o->allreduce);
  printf(", %s", z->half ? "fp16" : "fp32");
  if (o->no_overlap) printf(", packed after backward (no overlap)");
  if (z->density < 1) printf(", sparse %g%% of chunks of %.0f", 100 * z->density, z->chunk);
  printf("; ");
  print_machine(o);
  printf("\n");
  bool automatic = o->allreduce.algorithm == SWN_ALLREDUCE_AUTO;
  printf("# %-8s %14s %14s %14s %10s %10s %12s%s\n", "Nodes", "Iteration(ms)",
         o->allreduce.sync == SWN_SYNC_ALLREDUCE ? "Allreduce(ms)" : "Reduce+bcast", "Exposed(ms)",
         "Comm(%)", "Speedup", "Efficiency(%)",
         automatic ? "  Jobs  Merged-to(B)  Largest-by" : "");
  int status = 0;
  for (int p = o->min_nodes; p <= o->max_nodes && !status; p *= 2) {
    SwnMachine m = o->machine;
    m.nodes = p;
    SwnScaling s;
    if (!swn_predict(&prof, &m, &o->allreduce, z, &s, error, sizeof error)) {
      fprintf(stderr, "swnc-sim: error: %s\n", error);
      status = 1;
      break;
    }
    printf("%-10d %14.2f %14.2f %14.2f %10.1f %10.1f %12.1f", p, s.iteration * 1e3,
           s.communication * 1e3, s.exposed * 1e3, 100 * s.exposed / s.iteration, s.speedup,
           100 * s.speedup / p);
    if (automatic && p > 1)
      printf(" %5d %13.0f  %s", s.jobs, s.threshold, swn_allreduce_names[s.largest]);
    printf("\n");
  }
  swn_profile_release(&prof);
  return status;
}

int main(int argc, char **argv) {
  swn_program = "swnc-sim"; /* the runtime's messages (out of memory) name this program */
  Options o;
  parse(argc, argv, &o);
  return o.profile ? training(&o) : message(&o);
}
