/* swnc's Caffe commands: import-caffe (prototxts and weights in), export-caffe (a prototxt out),
 * and reading a .prototxt wherever a .swn file is read. */
#ifndef SWNC_CAFFE_COMMANDS_H
#define SWNC_CAFFE_COMMANDS_H

#include "../frontend/caffe.h"
#include "../passes/passes.h"

/* Whether `path` names a Caffe network (ends in .prototxt). */
bool is_prototxt(const char *path);

/* Reads a network source of either kind: .swn, or a Caffe prototxt (with its solver and image
 * shape from `caffe`); `net` receives the Caffe blob map (may be NULL). */
Module *read_network(const char *path, const CaffeImportOptions *caffe, const Override *overrides,
                     int noverrides, CaffeNet *net);

/* swnc import-caffe: writes m (as read, before the passes) as .swn text to `output` (stdout if
 * NULL), with `source` named in its heading. */
bool write_swn(const Module *m, const char *source, const char *output);

/* swnc import-caffe --weights: m compiled, the model's blobs through `net` into a checkpoint. */
bool write_caffe_weights(Module *m, const CaffeNet *net, const char *model_path,
                         const char *checkpoint);

/* swnc export-caffe: m as written (elaborated, shapes inferred and verified) as a prototxt. */
bool export_caffe(Module *m, const char *source, const char *output);

#endif
