/* libFuzzer target: the generated programs' readers of untrusted files, through their public
 * entry points: an IDX image and label file pair, a CIFAR-10 batch file, a checkpoint, and the
 * compiler's tuning-file reader. The first byte picks the reader; the rest is the file. A
 * reader that rejects its input reports and stops the program (swn_fatal); here the stop
 * returns to the fuzzer instead (swn_set_error_rank's hook), so only crashes, sanitizer
 * reports and hangs are findings. The readers keep what they hold when they stop (the process
 * ends): here the files a rejected read left open are closed after it, and scripts/fuzz.sh runs
 * this target without leak detection, in fork mode, so that a worker that outgrows its memory
 * is replaced rather than reported. */
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../../ir/tuning.h"
#include "../../runtime/dataset.h"
#include "../../runtime/train.h"
#include "../../runtime/util.h"

static jmp_buf rejected;
static void back_to_fuzzer(void) { longjmp(rejected, 1); }

static char path[64], second[64];

static void write_file(const char *name, const uint8_t *data, size_t size) {
  FILE *f = fopen(name, "wb");
  if (!f) abort(); /* /tmp unwritable: nothing to fuzz */
  if (size) fwrite(data, 1, size, f);
  fclose(f);
}

/* A network with two small parameter tensors and a little state, for checkpoints. */
static const SwnParamInfo params[] = {
    {.name = "fc.weight", .ndims = 2, .dims = {3, 4}, .offset = 0, .count = 12},
    {.name = "fc.bias", .ndims = 1, .dims = {3}, .offset = 12, .count = 3},
    {0}};
static const SwnStateInfo state[] = {{.name = "bn.running_mean", .offset = 0, .count = 2}, {0}};
static const SwnNetwork net = {.name = "fuzz",
                               .hash = 42,
                               .param_words = 15,
                               .state_words = 2,
                               .params = params,
                               .nparams = 2,
                               .state = state,
                               .nstate = 1,
                               .in_c = 3,
                               .in_h = 32,
                               .in_w = 32,
                               .classes = 10};

static SwnDataset dataset; /* freed after each input, read or rejected */

static void read_one(int reader, const uint8_t *data, size_t size) {
  dataset = (SwnDataset){.what = "training"};
  switch (reader % 4) {
  case 0: { /* IDX: the bytes split at their middle into images and labels */
    write_file(path, data, size / 2);
    write_file(second, data + size / 2, size - size / 2);
    swn_load_idx(path, second, 64, &dataset);
    return;
  }
  case 1: {
    write_file(path, data, size);
    const char *files[] = {path};
    swn_load_cifar(files, 1, 64, &dataset);
    return;
  }
  case 2: {
    write_file(path, data, size);
    float p[15], s[2], momentum[15];
    int64_t iteration;
    uint64_t seed;
    swn_load_checkpoint(&net, path, p, momentum, s, &iteration, &seed);
    return;
  }
  default: {
    write_file(path, data, size);
    Arena a = {0};
    Tuning t;
    tuning_load(&a, path, false, &t);
    arena_free(&a);
  }
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!path[0]) {
    snprintf(path, sizeof path, "/tmp/swnc-fuzz-%d-a", (int)getpid());
    snprintf(second, sizeof second, "/tmp/swnc-fuzz-%d-b", (int)getpid());
    swn_set_error_rank(-1, 0, back_to_fuzzer);
    static FILE *sink;
    sink = fopen("/dev/null", "w");
    diag_set_stream(sink);
    if (sink) stderr = sink; /* the readers' messages */
  }
  if (size < 1) return 0;
  int first_free = dup(0); /* files opened from here on are the reader's */
  close(first_free);
  if (!setjmp(rejected)) read_one(data[0], data + 1, size - 1);
  swn_free_dataset(&dataset);
  for (int fd = first_free; fd < first_free + 16; fd++) close(fd);
  return 0;
}
