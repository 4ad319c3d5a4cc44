/* --infer (infer.h). Images go in as they are (no mean, scale or crop: the array is what the
 * input layer holds), in order, batch after batch; the last batch may be smaller. */
#include "infer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npy.h"
#include "util.h"
#include "workers.h"

/* Whether the array's shape is N images of the network's input shape. */
static bool images_of(const SwnNetwork *net, const SwnNpy *a) {
  bool vector = net->in_h == 1 && net->in_w == 1;
  if (a->ndims == 2) return vector && a->dims[1] == net->in_c;
  return a->ndims == 4 && a->dims[1] == net->in_c && a->dims[2] == net->in_h &&
         a->dims[3] == net->in_w;
}

static void check_shape(const SwnNetwork *net, const char *path, const SwnNpy *a) {
  if (images_of(net, a) && a->dims[0] > 0) return;
  char shape[160] = "";
  for (int i = 0; i < a->ndims; i++)
    snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "%s%lld", i ? " x " : "",
             (long long)a->dims[i]);
  swn_fatal_at(path, "is a %s array; network '%s' takes N x %d x %d x %d images (N at least 1)",
               a->ndims ? shape : "scalar", net->name, net->in_c, net->in_h, net->in_w);
}

void swn_infer(const SwnNetwork *net, SwnStep *step, int64_t batch, const char *input,
               const char *output) {
  SwnNpy in = swn_npy_read(input);
  check_shape(net, input, &in);
  int64_t images = in.dims[0], per_image = in.count / images, classes = net->classes;
  float *scores = swn_alloc(sizeof(float) * (size_t)(images * classes));
  for (int64_t first = 0; first < images; first += batch) {
    int n = (int)(images - first < batch ? images - first : batch);
    step->batch = n;
    memcpy(swn_batch_input(&net->eval_plan, step, n), in.data + first * per_image,
           sizeof(float) * (size_t)(n * per_image));
    memset(swn_batch_labels(&net->eval_plan, step, n), 0, sizeof(int32_t) * (size_t)n);
    net->evaluate(step);
    memcpy(scores + first * classes, step->image + net->eval_plan.scores_offset * n,
           sizeof(float) * (size_t)(n * classes));
  }
  int64_t dims[2] = {images, classes};
  swn_npy_write(output, scores, 2, dims);
  free(scores), free(in.data);
}
