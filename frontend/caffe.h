/* Caffe's files in: network and solver prototxts to the unelaborated module the .swn parser
 * builds (docs/language.md, "Caffe models"), and .caffemodel weights to parameter values. */
#ifndef SWNC_CAFFE_H
#define SWNC_CAFFE_H

#include "frontend.h"

typedef struct CaffeImportOptions {
  const char *solver;     /* a solver prototxt, or NULL */
  int64_t input_shape[3]; /* --input-shape: [C, H, W] of the images; C = 0: not given */
} CaffeImportOptions;

/* Where a Caffe layer's learned blobs go: the statement whose parameters or state they are. */
typedef enum {
  CAFFE_WEIGHTS,   /* Convolution, InnerProduct: weights, then the bias */
  CAFFE_BN_STATS,  /* BatchNorm: mean x s, variance x s, s (Caffe's running sums) */
  CAFFE_BN_AFFINE, /* Scale after a BatchNorm: the batch norm's scale, then its shift */
} CaffeBlobRole;

typedef struct CaffeLayer {
  const char *name; /* Caffe's */
  const char *type;
  const char *stmt; /* the statement (and so the layer of the graph) that holds its blobs */
  CaffeBlobRole role;
} CaffeLayer;

typedef struct CaffeNet {
  VEC(CaffeLayer) layers; /* the layers with blobs, in file order */
} CaffeNet;

/* Reads `net_path` (and o->solver) into a module, then applies the overrides, as
 * frontend_parse_file does. The module has errors if diag_error_count() grew (a file that
 * cannot be read among them). `net` (may be NULL) receives the blob map. */
Module *caffe_import(const char *net_path, const CaffeImportOptions *o, const Override *overrides,
                     int noverrides, CaffeNet *net);

/* One learned blob of a .caffemodel: its shape and values. */
typedef struct CaffeBlob {
  int rank;
  int64_t dim[4];
  int64_t count;
  float *data; /* count values, in the module's arena */
} CaffeBlob;

typedef struct CaffeModelLayer {
  const char *name;
  VEC(CaffeBlob) blobs;
} CaffeModelLayer;

typedef struct CaffeModel {
  VEC(CaffeModelLayer) layers; /* layers with blobs, in file order */
} CaffeModel;

/* Reads a binary NetParameter (the `layer` form and the legacy V1 `layers` form) into `out`,
 * allocating in `a`. Reports "FILE: error: ..." naming the layer and blob and returns false on
 * a truncated or malformed file. */
bool caffemodel_read(Arena *a, const char *path, CaffeModel *out);

/* Writes the blobs of `model` into a compiled module's parameter pool (`params`, the
 * module's parameter words) and state (`state`, its state words), through the map `net` that
 * caffe_import gave; `path` names the model file in messages. False after reporting a blob
 * whose shape or count disagrees with the network. */
bool caffe_weights(const Module *m, const CaffeNet *net, const CaffeModel *model, const char *path,
                   float *params, float *state);

#endif
