/* The compiler's view of the compiler-runtime-kernel contract: the structs and functions that
 * runtime/kernels.h and runtime/swnc_rt.h declare as rows (runtime/contract.h), expanded here
 * into tables. Lowering checks every call against them; the backends take struct layouts,
 * field names and function types from them, so nothing is spelled out twice. */
#ifndef SWNC_CONTRACT_TABLES_H
#define SWNC_CONTRACT_TABLES_H

#include "../runtime/swnc_rt.h"

typedef enum {
  ABI_VOID,
  ABI_I32,
  ABI_I64,
  ABI_U64,
  ABI_SIZE,
  ABI_F32,
  ABI_BOOL,
  ABI_PTR,
  ABI_STRUCT
} AbiCode;

/* A struct field or a function parameter: how it crosses, its C type (for ABI_STRUCT, the
 * struct's name) and its name; `length` > 0 for an array field. */
typedef struct AbiField {
  AbiCode code;
  const char *ctype, *name;
  int length;
} AbiField;

typedef struct AbiStruct {
  const char *name;
  const AbiField *fields;
  int nfields;
} AbiStruct;

typedef struct AbiFunction {
  const char *name;
  AbiCode ret;
  const AbiField *params;
  int nparams;
} AbiFunction;

typedef enum {
#define ABI_ID(T) ABI_##T,
  SWN_STRUCTS(ABI_ID)
#undef ABI_ID
      ABI_STRUCT_COUNT
} AbiStructId;

extern const AbiStruct abi_structs[ABI_STRUCT_COUNT];
const AbiStruct *abi_struct_named(const char *name); /* NULL if not in the contract */
const AbiFunction *abi_function(const char *name);   /* NULL if not in the contract */

/* Field indices, <Struct>_<field>: SwnStep_seed, SwnNetwork_train, SwkConv_groups, ... */
#define ABI_CAT(a, b) a##_##b
#define ABI_INDEX(a, b) ABI_CAT(a, b)
#define ABI_ENUM_FIELD(code, ctype, name) ABI_INDEX(ABI_OF, name),
#define ABI_ENUM_ARRAY(code, ctype, name, length) ABI_INDEX(ABI_OF, name),
#define ABI_OF SwkConv
enum { SwkConv_FIELDS(ABI_ENUM_FIELD, ABI_ENUM_ARRAY) };
#undef ABI_OF
#define ABI_OF SwkPool
enum { SwkPool_FIELDS(ABI_ENUM_FIELD, ABI_ENUM_ARRAY) };
#undef ABI_OF
#define ABI_OF SwkFc
enum { SwkFc_FIELDS(ABI_ENUM_FIELD, ABI_ENUM_ARRAY) };
#undef ABI_OF
#define ABI_OF SwkAct
enum { SwkAct_FIELDS(ABI_ENUM_FIELD, ABI_ENUM_ARRAY) };
#undef ABI_OF
#define ABI_OF SwkBatchNorm
enum { SwkBatchNorm_FIELDS(ABI_ENUM_FIELD, ABI_ENUM_ARRAY) };
#undef ABI_OF
#define ABI_OF SwkLrn
enum { SwkLrn_FIELDS(ABI_ENUM_FIELD, ABI_ENUM_ARRAY) };
#undef ABI_OF
#define ABI_OF SwkUpsample
enum { SwkUpsample_FIELDS(ABI_ENUM_FIELD, ABI_ENUM_ARRAY) };
#undef ABI_OF
#define ABI_OF SwkSoftmax
enum { SwkSoftmax_FIELDS(ABI_ENUM_FIELD, ABI_ENUM_ARRAY) };
#undef ABI_OF
#define ABI_OF SwkDropout
enum { SwkDropout_FIELDS(ABI_ENUM_FIELD, ABI_ENUM_ARRAY) };
#undef ABI_OF
#define ABI_OF SwkSoftmaxLoss
enum { SwkSoftmaxLoss_FIELDS(ABI_ENUM_FIELD, ABI_ENUM_ARRAY) };
#undef ABI_OF
#define ABI_OF SwnParamInfo
enum { SwnParamInfo_FIELDS(ABI_ENUM_FIELD, ABI_ENUM_ARRAY) };
#undef ABI_OF
#define ABI_OF SwnStateInfo
enum { SwnStateInfo_FIELDS(ABI_ENUM_FIELD, ABI_ENUM_ARRAY) };
#undef ABI_OF
#define ABI_OF SwnMetric
enum { SwnMetric_FIELDS(ABI_ENUM_FIELD, ABI_ENUM_ARRAY) };
#undef ABI_OF
#define ABI_OF SwnPlan
enum { SwnPlan_FIELDS(ABI_ENUM_FIELD, ABI_ENUM_ARRAY) };
#undef ABI_OF
#define ABI_OF SwnTrainConfig
enum { SwnTrainConfig_FIELDS(ABI_ENUM_FIELD, ABI_ENUM_ARRAY) };
#undef ABI_OF
#define ABI_OF SwnDataConfig
enum { SwnDataConfig_FIELDS(ABI_ENUM_FIELD, ABI_ENUM_ARRAY) };
#undef ABI_OF
#define ABI_OF SwnStep
enum { SwnStep_FIELDS(ABI_ENUM_FIELD, ABI_ENUM_ARRAY) };
#undef ABI_OF
#define ABI_OF SwnNetwork
enum { SwnNetwork_FIELDS(ABI_ENUM_FIELD, ABI_ENUM_ARRAY) };
#undef ABI_OF

#endif
