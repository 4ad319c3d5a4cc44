/* The lowered program both backends emit (the C backend prints it, the LLVM backend builds
 * it): for every forward, backward and update step, the kernel calls with their arguments,
 * plus the constant kernel-parameter structs, and the tables the runtime reads. It is derived
 * once from the IR's schedule and memory plan; backends add no decisions of their own. */
#ifndef SWNC_LOWER_H
#define SWNC_LOWER_H

#include "../ir/ir.h"

/* Where a pointer points: per-image offsets in the image region are scaled by the batch. */
typedef enum { REG_IMAGE, REG_FIXED, REG_PARAMS, REG_GRADS, REG_MOMENTUM, REG_STATE } Region;

typedef struct Ptr {
  bool null;
  Region region;
  int64_t offset; /* words; per image in REG_IMAGE */
  bool i32;       /* int32_t * rather than float * */
} Ptr;

typedef enum {
  ARG_BATCH,       /* int: images in this call */
  ARG_TRAIN,       /* bool: training or inference mode */
  ARG_SEED,        /* uint64_t: the run's seed */
  ARG_ITERATION,   /* uint64_t */
  ARG_FIRST_IMAGE, /* uint64_t */
  ARG_WORKSPACE,   /* float * */
  ARG_STRUCT,      /* const pointer to the op's kernel-parameter struct */
  ARG_PTR,
  ARG_INPUTS,      /* a local array of pointers the kernel reads (concat, add forward) */
  ARG_OUTPUTS,     /* a local array of pointers it writes (their backward) */
  ARG_BOOLS,       /* a local array of bools */
  ARG_SIZES,       /* a constant array of int64_t */
  ARG_BOOL,
  ARG_INT,         /* int */
  ARG_INT64,       /* int64_t */
  ARG_LR,          /* float: the step's learning rate times `scale` */
  ARG_DECAY,       /* float: the weight decay times `scale` */
  ARG_MOMENTUM,    /* float: the momentum coefficient */
  ARG_STEP,        /* SwnStep *: the step itself */
} ArgKind;

typedef struct CallArg {
  ArgKind kind;
  Ptr ptr;
  int64_t i;
  double scale;
  VEC(Ptr) ptrs;
  VEC(bool) bools;
  VEC(int64_t) sizes;
} CallArg;

typedef struct Call {
  const char *fn;
  int op;            /* the op it belongs to, for comments and profiles */
  VEC(CallArg) args;
} Call;

/* A kernel-parameter struct: the C type name and every field in declaration order. */
typedef enum { FIELD_INT, FIELD_INT64, FIELD_UINT64, FIELD_FLOAT, FIELD_BOOL } FieldKind;
typedef struct StructField {
  const char *name;
  FieldKind kind;
  double value;
} StructField;

typedef struct KernelStruct {
  const char *type; /* NULL: the op takes no struct */
  VEC(StructField) fields;
} KernelStruct;

typedef VEC(Call) CallList;

/* The runtime's descriptor tables (runtime/swnc_rt.h), as values. */
typedef struct ParamEntry {
  const char *name;
  int rank;
  int64_t dims[4];
  int64_t offset, count, fan_in;
  double lr_mult, decay_mult, init_arg;
  int init;
} ParamEntry;

typedef struct StateEntry {
  const char *name;
  int64_t offset, count;
  double init;
} StateEntry;

typedef struct MetricEntry {
  const char *name;
  int64_t offset;
  bool is_loss;
} MetricEntry;

typedef struct Lowered {
  const Module *m;
  VEC(KernelStruct) structs; /* per op */
  CallList forward, backward, update, workspace; /* workspace: calls returning size_t */
  int input_op, label_op, loss_op;
  uint64_t hash;
  StrList train_files, test_files; /* the data section's, relative ones made absolute */
  VEC(ParamEntry) params;
  VEC(StateEntry) state;
  VEC(MetricEntry) metrics;
  int64_t in_c, in_h, in_w, input_offset, label_offset, classes;
  int nbuckets;
} Lowered;

/* Lowers `m` (after all passes); `source` is the .swn path, against whose directory relative
 * data paths are resolved. Reports an error and returns false if the runtime cannot run it
 * (e.g. not exactly one input and one label layer). */
bool lower_module(const Module *m, const char *source, Arena *a, Lowered *out);



#endif
