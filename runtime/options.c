#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "comm/schedule.h"
#include "loader.h"
#include "ranks.h"
#include "util.h"

/* Evaluation runs forward alone on its own plan (docs/runtime.md): by default its batch is as
 * many images as fit in the memory a training batch uses, so evaluating raises no peak. The
 * compiler's --stats predicts the same (plan_test_batch). */
int64_t swn_auto_test_batch(const SwnNetwork *net, int64_t batch) {
  int64_t fit = net->plan.image_words * batch / net->eval_plan.image_words;
  return fit < 1 ? 1 : fit > SWN_TEST_BATCH_MAX ? SWN_TEST_BATCH_MAX : fit;
}

static const char *test_batch_default(const SwnNetwork *net) {
  static char text[96];
  if (net->train.test_batch)
    snprintf(text, sizeof text, "%lld", (long long)net->train.test_batch);
  else
    snprintf(text, sizeof text, "%lld: as many as fit in a training batch's memory",
             (long long)swn_auto_test_batch(net, net->train.batch));
  return text;
}

static void usage(const SwnNetwork *net) {
  printf(
      "usage: %s [options]\n\n"
      "Trains the network '%s' (compiled by swnc from %s), or evaluates it.\n\n"
      "training:\n"
      "  --epochs N             passes over the training set (default %lld)\n"
      "  --iterations N         train N iterations in total instead (default %lld: use epochs)\n"
      "  --batch N              images per iteration (default %lld)\n"
      "  --lr RATE              the base learning rate instead of the compiled one (%g); the\n"
      "                         policy, warm-up and multipliers apply to it as to that one\n"
      "  --test-batch N         images per evaluation batch (default %s)\n"
      "  --seed N               seed of initialisation, shuffling and dropout (default %lld)\n"
      "  --no-shuffle           train in file order\n"
      "  --threads N            compute threads (default: the %ld cores shared by this machine's "
      "ranks)\n"
      "  --core-groups N        workers per process, one per core group, each on its share of\n"
      "                         the batch (default and most: %d, this target's)\n"
      "data:\n"
      "  --train FILE[,FILE]    training data (default: the network file's data section)\n"
      "  --test FILE[,FILE]     test data\n"
      "  --train-size N         use only the first N training images (0: all)\n"
      "  --test-size N          use only the first N test images (0: all)\n"
      "  --loader-threads N     threads reading, decoding and augmenting images ahead of\n"
      "                         training (default: as many as compute threads for a packed\n"
      "                         data set, 1 for images held in memory)\n"
      "output and state:\n"
      "  --display N            a progress line every N iterations (default %lld)\n"
      "  --quiet                no progress, only the summary and errors\n"
      "  --log FILE             also write progress and results as JSON lines\n"
      "  --checkpoint FILE      save a checkpoint after each epoch and at the end\n"
      "  --checkpoint-every N   also every N iterations\n"
      "  --resume FILE          continue from a checkpoint exactly where it stopped\n"
      "  --init-weights FILE    start from the weights of a checkpoint, by name: tensors of\n"
      "                         another shape or absent stay freshly initialised (reported)\n"
      "  --strict               with --init-weights: every tensor, of the same shape, or none\n"
      "  --eval-only            evaluate on the test set and exit\n"
      "  --infer IN.npy --output OUT.npy\n"
      "                         run IN (N x C x H x W float32, as the input layer holds it)\n"
      "                         through the network in evaluation mode; write the scores\n"
      "                         the loss reads (N x classes float32) to OUT, and exit\n"
      "  --profile[=FILE]       time every layer's forward, backward and update; print a table\n"
      "                         (and write it to FILE as JSON, for swnc-plot)\n"
      "  --autotune             time every convolution plan that can run a computation in the\n"
      "                         first iterations, keep the fastest per layer and computation;\n"
      "                         print the choices\n"
      "  --save-gradients FILE  after training, save the last iteration's gradients\n"
      "                         (checkpoint format; a debugging aid)\n"
      "distributed (mpirun -np N %s: N ranks, each --batch images per iteration):\n"
      "  --allreduce ALG        auto, topo (recursive halving/doubling, supernode-aware), ring,\n"
      "                         hier (chains in groups, leaders across), shm (one machine:\n"
      "                         summed in shared memory), mpi (MPI_Allreduce);\n"
      "                         default auto, or $SWN_ALLREDUCE\n"
      "  --group-size N         ranks per group (supernode): ranks r/N share one (default: one\n"
      "                         group per machine, or $SWN_GROUP_SIZE)\n"
      "  --chain N              ranks per chain of the hier algorithm (default 8, or $SWN_CHAIN)\n"
      "  --hier-upper U         hier among the chain heads: binomial (a tree: latency-bound\n"
      "                         sizes), ring, chain (a chain of chains: large vectors, few\n"
      "                         heads) or auto (binomial below 64 KiB, ring above; default,\n"
      "                         or $SWN_HIER_UPPER)\n"
      "  --no-overlap           allreduce the gradients after backward instead of during it\n"
      "  --sync S               allreduce (default, or $SWN_SYNC): every rank sums the gradients\n"
      "                         and updates; or S-Caffe's reduce to rank 0, which updates and\n"
      "                         broadcasts the weights: sc-b (after backward, before forward),\n"
      "                         sc-ob (the broadcast in stages overlapping forward), sc-obr\n"
      "                         (also the reduce overlapping backward); collectives of hier's\n"
      "                         chains, or MPI_Reduce and MPI_Bcast with --allreduce mpi\n"
      "  --comm-precision P     fp32 (default) or fp16: gradients sent as IEEE halves, scaled\n"
      "                         into half's range, summed in fp32 (needs a program compiled\n"
      "                         with --no-fold-gradients)\n"
      "  --scale-lr             linear scaling: the learning rate times the number of ranks\n"
      "                         (the global batch grows with them; combine with warmup)\n"
      "  --sparse D             send only the fraction D (e.g. 0.1 or 10%%) of each bucket's\n"
      "                         chunks with the largest L1 norms over the ranks, keep the rest\n"
      "                         as a local residual (momentum correction; needs a program\n"
      "                         compiled with --no-fold-gradients)\n"
      "  --sparse-chunk N       gradients per chunk (default 4096)\n"
      "  --sparse-warmup E      epochs of warm-up, the density falling from 1 to D (default 1)\n"
      "  --comm-costs FILE      auto chooses from this cost table (bench/allreduce\n"
      "                         --write-costs) instead of timing the algorithms at start-up\n"
      "  --comm-profile FILE    write the mean iteration's phases and gradient buckets (after\n"
      "                         the first iteration) for swnc-sim's scaling prediction\n"
      "  -h, --help             this help\n"
      "  --version              the network, the swnc that built this program, the kernels\n",
      swn_program, net->name, net->source, (long long)net->train.epochs,
      (long long)net->train.iterations, (long long)net->train.batch, (double)net->train.lr,
      test_batch_default(net), (long long)net->train.seed, sysconf(_SC_NPROCESSORS_ONLN),
      swk_core_groups(), (long long)net->train.display, swn_program);
}

/* An integer in [min, max]: every count a user gives is bounded where it is read, so no
 * arithmetic on it can overflow later. */
static int64_t number_in(const char *opt, const char *text, int64_t min, int64_t max) {
  char *end;
  errno = 0;
  long long v = strtoll(text, &end, 10);
  if (errno || *end || end == text || v < min || v > max)
    swn_fatal("%s needs an integer from %lld to %lld, but got '%s'", opt, (long long)min,
              (long long)max, text);
  return v;
}

/* Iterations, epochs and other counts of things done one after another. */
static int64_t number(const char *opt, const char *text, int64_t min) {
  return number_in(opt, text, min, SWN_COUNT_MAX);
}

/* Images per batch, threads: counts that size memory and are held in an int. */
static int small_number(const char *opt, const char *text, int64_t min, int64_t max) {
  return (int)number_in(opt, text, min, max);
}

/* A density: a number in (0, 1], or a percentage ("10%"). */
static float fraction(const char *opt, const char *text) {
  char *end;
  errno = 0;
  double v = strtod(text, &end);
  if (*end == '%' && end != text) v /= 100, end++;
  if (errno || *end || end == text || !(v > 0 && v <= 1))
    swn_fatal("%s needs a fraction in (0, 1] or a percentage, but got '%s'", opt, text);
  return (float)v;
}

/* A learning rate: a positive finite number. */
static float rate(const char *opt, const char *text) {
  char *end;
  errno = 0;
  double v = strtod(text, &end);
  if (errno || *end || end == text || !(v > 0 && v < 1e30))
    swn_fatal("%s needs a positive number, but got '%s'", opt, text);
  return (float)v;
}

static int split_files(const char *opt, char *list, const char **out) {
  int n = 0;
  for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok;
       tok = strtok_r(NULL, ",", &save)) {
    if (n == SWN_MAX_FILES) swn_fatal("%s takes at most %d files", opt, SWN_MAX_FILES);
    out[n++] = tok;
  }
  if (!n) swn_fatal("%s needs a file name", opt);
  return n;
}

enum {
  O_EPOCHS = 256,
  O_ITERATIONS,
  O_BATCH,
  O_TEST_BATCH,
  O_SEED,
  O_NO_SHUFFLE,
  O_THREADS,
  O_CORE_GROUPS,
  O_TRAIN,
  O_TEST,
  O_TRAIN_SIZE,
  O_TEST_SIZE,
  O_LOADER_THREADS,
  O_DISPLAY,
  O_QUIET,
  O_LOG,
  O_CHECKPOINT,
  O_CHECKPOINT_EVERY,
  O_RESUME,
  O_INIT_WEIGHTS,
  O_EVAL_ONLY,
  O_INFER,
  O_LR,
  O_STRICT,
  O_OUTPUT,
  O_SAVE_GRADIENTS,
  O_PROFILE,
  O_AUTOTUNE,
  O_ALLREDUCE,
  O_GROUP_SIZE,
  O_CHAIN,
  O_HIER_UPPER,
  O_NO_OVERLAP,
  O_COMM_PRECISION,
  O_SCALE_LR,
  O_SPARSE,
  O_SPARSE_CHUNK,
  O_SPARSE_WARMUP,
  O_COMM_PROFILE,
  O_COMM_COSTS,
  O_SYNC,
  O_VERSION
};

static int ranks(const char *where, const char *text) {
  return small_number(where, text, 1, 1 << 20);
}

static int algorithm(const char *where, const char *name) {
  int a = swn_allreduce_find(name);
  if (a < 0) swn_fatal("%s must be auto, topo, ring, hier, shm or mpi, not '%s'", where, name);
  return a;
}

static int upper_level(const char *where, const char *name) {
  int u = swn_upper_find(name);
  if (u < 0) swn_fatal("%s must be auto, binomial, ring or chain, not '%s'", where, name);
  return u;
}

static int sync_schedule(const char *where, const char *name) {
  int s = swn_sync_find(name);
  if (s < 0) swn_fatal("%s must be allreduce, sc-b, sc-ob or sc-obr, not '%s'", where, name);
  return s;
}

/* Defaults for the distributed options from the environment (a launcher sets them once). */
static void environment_defaults(SwnOptions *o) {
  const char *a = getenv("SWN_ALLREDUCE"), *g = getenv("SWN_GROUP_SIZE"), *c = getenv("SWN_CHAIN"),
             *u = getenv("SWN_HIER_UPPER"), *s = getenv("SWN_SYNC");
  if (s && *s) o->sync = sync_schedule("SWN_SYNC", s);
  if (a && *a) o->allreduce = algorithm("SWN_ALLREDUCE", a);
  if (g && *g) o->group_size = ranks("SWN_GROUP_SIZE", g);
  if (c && *c) o->chain = ranks("SWN_CHAIN", c);
  if (u && *u) o->hier_upper = upper_level("SWN_HIER_UPPER", u);
}

/* Options that mean nothing without another are refused rather than ignored. */
static void check_combinations(const SwnOptions *o) {
  if (o->checkpoint_every && !o->checkpoint)
    swn_fatal("--checkpoint-every %lld needs --checkpoint FILE to say where to save",
              (long long)o->checkpoint_every);
  if (o->eval_only && !o->init_weights && !o->resume)
    swn_fatal("--eval-only evaluates trained weights: give them with --init-weights FILE (or "
              "--resume FILE)");
  if (!o->infer != !o->output)
    swn_fatal("%s", o->infer
                        ? "--infer FILE.npy needs --output FILE.npy to say where the scores go"
                        : "--output FILE.npy is where --infer writes its scores: give --infer");
  if (o->infer && !o->init_weights && !o->resume)
    swn_fatal("--infer runs trained weights: give them with --init-weights FILE (or --resume "
              "FILE)");
  if (o->infer && o->eval_only) swn_fatal("--infer and --eval-only exclude each other");
  if (o->strict && !o->init_weights)
    swn_fatal("--strict says how --init-weights loads: give --init-weights FILE");
}

void swn_parse_options(const SwnNetwork *net, int argc, char **argv, SwnOptions *o) {
  static const struct option longs[] = {
      {"epochs", required_argument, 0, O_EPOCHS},
      {"iterations", required_argument, 0, O_ITERATIONS},
      {"batch", required_argument, 0, O_BATCH},
      {"test-batch", required_argument, 0, O_TEST_BATCH},
      {"seed", required_argument, 0, O_SEED},
      {"no-shuffle", no_argument, 0, O_NO_SHUFFLE},
      {"threads", required_argument, 0, O_THREADS},
      {"core-groups", required_argument, 0, O_CORE_GROUPS},
      {"train", required_argument, 0, O_TRAIN},
      {"test", required_argument, 0, O_TEST},
      {"train-size", required_argument, 0, O_TRAIN_SIZE},
      {"test-size", required_argument, 0, O_TEST_SIZE},
      {"loader-threads", required_argument, 0, O_LOADER_THREADS},
      {"display", required_argument, 0, O_DISPLAY},
      {"quiet", no_argument, 0, O_QUIET},
      {"log", required_argument, 0, O_LOG},
      {"checkpoint", required_argument, 0, O_CHECKPOINT},
      {"checkpoint-every", required_argument, 0, O_CHECKPOINT_EVERY},
      {"resume", required_argument, 0, O_RESUME},
      {"init-weights", required_argument, 0, O_INIT_WEIGHTS},
      {"eval-only", no_argument, 0, O_EVAL_ONLY},
      {"infer", required_argument, 0, O_INFER},
      {"lr", required_argument, 0, O_LR},
      {"strict", no_argument, 0, O_STRICT},
      {"output", required_argument, 0, O_OUTPUT},
      {"save-gradients", required_argument, 0, O_SAVE_GRADIENTS},
      {"profile", optional_argument, 0, O_PROFILE},
      {"autotune", no_argument, 0, O_AUTOTUNE},
      {"allreduce", required_argument, 0, O_ALLREDUCE},
      {"group-size", required_argument, 0, O_GROUP_SIZE},
      {"chain", required_argument, 0, O_CHAIN},
      {"hier-upper", required_argument, 0, O_HIER_UPPER},
      {"no-overlap", no_argument, 0, O_NO_OVERLAP},
      {"comm-precision", required_argument, 0, O_COMM_PRECISION},
      {"scale-lr", no_argument, 0, O_SCALE_LR},
      {"sparse", required_argument, 0, O_SPARSE},
      {"sparse-chunk", required_argument, 0, O_SPARSE_CHUNK},
      {"sparse-warmup", required_argument, 0, O_SPARSE_WARMUP},
      {"comm-profile", required_argument, 0, O_COMM_PROFILE},
      {"comm-costs", required_argument, 0, O_COMM_COSTS},
      {"sync", required_argument, 0, O_SYNC},
      {"help", no_argument, 0, 'h'},
      {"version", no_argument, 0, O_VERSION},
      {0, 0, 0, 0}};
  const SwnTrainConfig *t = &net->train;
  *o = (SwnOptions){.epochs = t->epochs,
                    .iterations = t->iterations,
                    .batch = t->batch,
                    .test_batch = t->test_batch,
                    .train_size = net->data.train_size,
                    .test_size = net->data.test_size,
                    .ntrain = net->data.ntrain,
                    .ntest = net->data.ntest,
                    .seed = (uint64_t)t->seed,
                    .display = t->display,
                    .shuffle = true,
                    .overlap = true,
                    .sparse_density = 1,
                    .sparse_chunk = 4096,
                    .sparse_warmup = 1,
                    .core_groups = swk_core_groups()};
  environment_defaults(o);
  memcpy(o->train, net->data.train, sizeof o->train);
  memcpy(o->test, net->data.test, sizeof o->test);
  opterr = 0;
  optind = 0; /* a fresh scan: under `swnc run` the compiler's own getopt ran in this process */
  int c;
  while ((c = getopt_long(argc, argv, ":h", longs, NULL)) != -1) {
    switch (c) {
    case O_EPOCHS: o->epochs = number("--epochs", optarg, 0); break;
    case O_ITERATIONS: o->iterations = number("--iterations", optarg, 0); break;
    case O_BATCH: o->batch = small_number("--batch", optarg, 1, SWN_BATCH_MAX); break;
    case O_TEST_BATCH:
      o->test_batch = small_number("--test-batch", optarg, 1, SWN_BATCH_MAX);
      break;
    case O_SEED: o->seed = (uint64_t)number_in("--seed", optarg, 0, INT64_MAX); break;
    case O_NO_SHUFFLE: o->shuffle = false; break;
    case O_THREADS: o->threads = small_number("--threads", optarg, 1, SWN_THREADS_MAX); break;
    case O_CORE_GROUPS: o->core_groups = small_number("--core-groups", optarg, 1, 1024); break;
    case O_TRAIN: o->ntrain = split_files("--train", optarg, o->train); break;
    case O_TEST: o->ntest = split_files("--test", optarg, o->test); break;
    case O_TRAIN_SIZE: o->train_size = number("--train-size", optarg, 0); break;
    case O_TEST_SIZE: o->test_size = number("--test-size", optarg, 0); break;
    case O_LOADER_THREADS:
      o->loader_threads = small_number("--loader-threads", optarg, 1, SWN_LOADER_MAX_THREADS);
      break;
    case O_DISPLAY: o->display = number("--display", optarg, 1); break;
    case O_QUIET: o->quiet = true; break;
    case O_LOG: o->log_path = optarg; break;
    case O_CHECKPOINT: o->checkpoint = optarg; break;
    case O_CHECKPOINT_EVERY: o->checkpoint_every = number("--checkpoint-every", optarg, 1); break;
    case O_RESUME: o->resume = optarg; break;
    case O_INIT_WEIGHTS: o->init_weights = optarg; break;
    case O_EVAL_ONLY: o->eval_only = true; break;
    case O_INFER: o->infer = optarg; break;
    case O_LR: o->lr = rate("--lr", optarg); break;
    case O_STRICT: o->strict = true; break;
    case O_OUTPUT: o->output = optarg; break;
    case O_SAVE_GRADIENTS: o->save_gradients = optarg; break;
    case O_PROFILE: o->profile = true, o->profile_json = optarg; break;
    case O_AUTOTUNE: o->autotune = true; break;
    case O_ALLREDUCE: o->allreduce = algorithm("--allreduce", optarg); break;
    case O_GROUP_SIZE: o->group_size = ranks("--group-size", optarg); break;
    case O_CHAIN: o->chain = ranks("--chain", optarg); break;
    case O_HIER_UPPER: o->hier_upper = upper_level("--hier-upper", optarg); break;
    case O_NO_OVERLAP: o->overlap = false; break;
    case O_COMM_PRECISION:
      if (strcmp(optarg, "fp32") && strcmp(optarg, "fp16"))
        swn_fatal("--comm-precision must be fp32 or fp16, not '%s'", optarg);
      o->comm_fp16 = !strcmp(optarg, "fp16");
      break;
    case O_SCALE_LR: o->scale_lr = true; break;
    case O_SPARSE: o->sparse_density = fraction("--sparse", optarg); break;
    case O_SPARSE_CHUNK: o->sparse_chunk = number("--sparse-chunk", optarg, 1); break;
    case O_SPARSE_WARMUP: o->sparse_warmup = number("--sparse-warmup", optarg, 0); break;
    case O_COMM_PROFILE: o->comm_profile = optarg; break;
    case O_COMM_COSTS: o->comm_costs = optarg; break;
    case O_SYNC: o->sync = sync_schedule("--sync", optarg); break;
    case 'h':
      if (swn_mpi_rank() == 0) usage(net);
      exit(0);
    case O_VERSION:
      if (swn_mpi_rank() == 0)
        printf("%s: network '%s' from %s, built by swnc %s for %s\n", swn_program, net->name,
               net->source, SWNC_VERSION, swk_isa());
      exit(0);
    case ':': swn_fatal("option '%s' needs an argument (see --help)", argv[optind - 1]);
    default: swn_fatal("unknown option '%s' (see --help)", argv[optind - 1]);
    }
  }
  if (optind < argc) swn_fatal("unexpected argument '%s' (see --help)", argv[optind]);
  if (o->resume && o->init_weights) swn_fatal("--resume and --init-weights exclude each other");
  if (o->save_gradients && net->gradients_in_momentum)
    swn_fatal("--save-gradients: %s adds its gradients into the momentum as backward computes "
              "them, so none are kept; compile it with swnc --no-fold-gradients to save them",
              net->name);
  if (net->gradients_in_momentum && swk_core_groups() > 1)
    swn_fatal("internal: gradients folded into momentum on a target of %d core groups",
              swk_core_groups());
  if (!o->test_batch) o->test_batch = swn_auto_test_batch(net, o->batch);
  check_combinations(o);
  if (o->core_groups > swk_core_groups())
    swn_fatal("--core-groups %d: this target has %d core group%s per process", o->core_groups,
              swk_core_groups(), swk_core_groups() == 1 ? "" : "s");
}
