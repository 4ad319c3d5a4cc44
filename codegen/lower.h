/* The lowered program, the whole of what both backends emit (the C backend prints it, the
 * LLVM backend builds it; neither reads the IR): the constant data a generated program holds
 * (kernel-parameter structs, the runtime's descriptor tables, the SwnNetwork) as typed values,
 * and for every forward, backward and update step the calls with their arguments. Every call
 * is checked against its declaration in the contract (contract.h) and every constant is typed
 * by the contract's structs, so the backends add no decisions and no layouts of their own. */
#ifndef SWNC_LOWER_H
#define SWNC_LOWER_H

#include "../ir/ir.h"
#include "contract.h"

/* Where a pointer points: per-image offsets in the image region are scaled by the batch. The
 * regions are SwnStep's pointer fields from `image` on, in this order. */
typedef enum {
  REG_IMAGE,
  REG_FIXED,
  REG_PARAMS,
  REG_GRADS,
  REG_MOMENTUM,
  REG_STATE,
  REG_COUNT
} Region;
static inline int region_step_field(Region r) { return SwnStep_image + (int)r; }

typedef struct Ptr {
  bool null;
  Region region;
  int64_t offset; /* words; per image in REG_IMAGE */
  bool i32;       /* int32_t * rather than float * */
} Ptr;

typedef enum {
  ARG_BATCH,       /* int: images in this call */
  ARG_SEED,        /* uint64_t: the run's seed (SwnStep) */
  ARG_ITERATION,   /* uint64_t (SwnStep) */
  ARG_FIRST_IMAGE, /* uint64_t (SwnStep) */
  ARG_WORKSPACE,   /* float * (SwnStep) */
  ARG_STRUCT,      /* const pointer to the op's kernel-parameter struct */
  ARG_PTR,
  ARG_INPUTS,  /* a local array of pointers the kernel reads (concat, add forward) */
  ARG_OUTPUTS, /* a local array of pointers it writes (their backward) */
  ARG_BOOLS,   /* a local array of bools */
  ARG_SIZES,   /* a constant array of int64_t */
  ARG_BOOL,
  ARG_INT,        /* int */
  ARG_INT64,      /* int64_t */
  ARG_LR,         /* float: the step's learning rate times `scale` */
  ARG_DECAY,      /* float: the weight decay times `scale` (SwnStep) */
  ARG_MOMENTUM,   /* float: the momentum coefficient (SwnStep) */
  ARG_FLOAT,      /* float: the constant `scale` */
  ARG_FOLD_SCALE, /* float: SwnStep's fold_scale times `scale` (a parameter's lr_mult) */
  ARG_FOLD_KEEP,  /* float: SwnStep's fold_keep */
  ARG_STEP,       /* SwnStep *: the step itself */
} ArgKind;

/* The SwnStep field an argument is read from, or -1 if it is not one. */
int arg_step_field(ArgKind k);

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
  const AbiFunction *fn; /* its declaration in the contract */
  int op;                /* the op it belongs to, for profiles */
  const char *label;     /* the op's name, for comments */
  const char *object;    /* ARG_STRUCT: the global that holds the op's kernel struct */
  VEC(CallArg) args;
} Call;

typedef VEC(Call) CallList;

/* A constant of one of the contract's types. A LIST is a struct's fields in declaration order
 * or an array's elements; missing trailing ones are zero. */
typedef enum {
  DATUM_ZERO,
  DATUM_INT,
  DATUM_FLOAT,
  DATUM_STRING,
  DATUM_SYMBOL,
  DATUM_LIST
} DatumKind;
typedef struct Datum {
  DatumKind kind;
  int64_t i;     /* INT; a U64 field keeps its bits */
  double f;      /* FLOAT */
  const char *s; /* STRING: the text; SYMBOL: a global's or step function's name; INT: a
                       word the C backend shows beside the number (an enum's name), or NULL */
  struct Datum *items;
  int n; /* LIST */
} Datum;

/* A constant global: a struct (type.length 0) or an array of `value.n` elements. */
typedef struct Global {
  const char *name;
  AbiField type; /* code, C type and, for an array, length > 0 */
  Datum value;
  const char *comment; /* or NULL */
} Global;

/* The step functions a program defines, which the SwnNetwork names as SYMBOLs. */
#define LOWERED_WORKSPACE "workspace"
#define LOWERED_FORWARD "forward"
#define LOWERED_EVALUATE "evaluate"
#define LOWERED_BACKWARD "backward"
#define LOWERED_UPDATE "update"
#define LOWERED_NETWORK "network" /* the SwnNetwork global, handed to swn_main */

typedef struct Lowered {
  const char *name, *source;
  VEC(Global) globals; /* each refers only to globals before it and to the step functions */
  CallList forward, backward, update; /* the training step, on the training plan */
  CallList evaluate;                  /* forward in inference mode, on the evaluation plan */
  CallList workspace;                 /* calls returning size_t: the workspace is the largest */
} Lowered;

/* Lowers `m` (after all passes); `source` is the .swn path the program names. Reports an error
 * and returns false if the runtime cannot run it (e.g. not exactly one input and one label
 * layer). */
bool lower_module(const Module *m, const char *source, Arena *a, Lowered *out);

/* The hash a checkpoint of this network carries: FNV-1a of the parameter table (names, shapes,
 * offsets) and the state size (docs/runtime.md, Checkpoints). */
uint64_t network_hash(const Module *m);

#endif
