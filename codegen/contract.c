/* The contract's tables (contract.h), expanded from the runtime's rows, and the checks that
 * the IR's enums which cross into the runtime have the runtime's values. */
#include "contract.h"

#include <string.h>

#include "../ir/ir.h"

#define FIELD_ROW(code, ctype, name) {ABI_##code, #ctype, #name, 0},
#define ARRAY_ROW(code, ctype, name, length) {ABI_##code, #ctype, #name, length},
#define STRUCT_FIELDS(T) static const AbiField T##_fields[] = {T##_FIELDS(FIELD_ROW, ARRAY_ROW)};
SWN_STRUCTS(STRUCT_FIELDS)

const AbiStruct abi_structs[ABI_STRUCT_COUNT] = {
#define STRUCT_ROW(T) {#T, T##_fields, (int)(sizeof T##_fields / sizeof(AbiField))},
    SWN_STRUCTS(STRUCT_ROW)
#undef STRUCT_ROW
};

#define PARAM_ROW(code, ctype, name)                                                               \
  { ABI_##code, #ctype, #name, 0 }
#define UNPAREN(...) __VA_ARGS__
#define PARAMS(params) ((const AbiField[]){UNPAREN params})
#define FUNCTION_ROW(ret, name, params)                                                            \
  {#name, ABI_##ret, PARAMS(params), (int)(sizeof PARAMS(params) / sizeof(AbiField))},
static const AbiFunction functions[] = {SWK_KERNELS(FUNCTION_ROW, PARAM_ROW)
                                            SWN_CALLS(FUNCTION_ROW, PARAM_ROW)};

const AbiStruct *abi_struct_named(const char *name) {
  for (int i = 0; i < ABI_STRUCT_COUNT; i++)
    if (!strcmp(abi_structs[i].name, name)) return &abi_structs[i];
  return NULL;
}

const AbiFunction *abi_function(const char *name) {
  for (size_t i = 0; i < sizeof functions / sizeof functions[0]; i++)
    if (!strcmp(functions[i].name, name)) return &functions[i];
  return NULL;
}

/* The IR's enums that lowering passes to the runtime as numbers. */
#define SAME(ir, runtime) ((int)(ir) == (int)(runtime))
_Static_assert(SAME(INIT_XAVIER, SWN_INIT_XAVIER) && SAME(INIT_MSRA, SWN_INIT_MSRA) &&
                   SAME(INIT_GAUSSIAN, SWN_INIT_GAUSSIAN) && SAME(INIT_UNIFORM, SWN_INIT_UNIFORM) &&
                   SAME(INIT_CONSTANT, SWN_INIT_CONSTANT),
               "InitKind follows SwnInit");
_Static_assert(SAME(LR_FIXED, SWN_LR_FIXED) && SAME(LR_STEP, SWN_LR_STEP) &&
                   SAME(LR_MULTISTEP, SWN_LR_MULTISTEP) && SAME(LR_INV, SWN_LR_INV) &&
                   SAME(LR_POLY, SWN_LR_POLY) && SAME(LR_EXP, SWN_LR_EXP) &&
                   SAME(LR_COSINE, SWN_LR_COSINE),
               "LrPolicy follows SwnLrPolicy");
_Static_assert(SAME(OPT_SGD, SWN_OPT_SGD) && SAME(OPT_EASGD, SWN_OPT_EASGD) &&
                   SAME(OPT_LARS, SWN_OPT_LARS) && SAME(OPT_ADAM, SWN_OPT_ADAM) &&
                   SAME(OPT_ADAMW, SWN_OPT_ADAMW),
               "OptimizerKind follows SwnOptimizer");
_Static_assert(SAME(DATA_IDX, SWN_DATA_IDX) && SAME(DATA_CIFAR, SWN_DATA_CIFAR) &&
                   SAME(DATA_SYNTHETIC, SWN_DATA_SYNTHETIC) && SAME(DATA_PACKED, SWN_DATA_PACKED),
               "DataSource follows SwnDataSource");
_Static_assert(CONV_FORWARD == 0 && CONV_WGRAD == 1 && CONV_DGRAD == 2,
               "SWN_CONV_PLAN(word, c) numbers computations so");
_Static_assert(SAME(LAYOUT_BNRC, SWN_LAYOUT_BNRC) && SAME(LAYOUT_RCNB, SWN_LAYOUT_RCNB) &&
                   SAME(LAYOUT_BNRC16, SWN_LAYOUT_BNRC16),
               "Layout follows SWN_LAYOUT_*");
/* ConvPlan and SWN_PLAN_* expand the same rows (runtime/conv_plans.h) */
_Static_assert(SAME(PLAN_COUNT, SWN_PLANS), "ConvPlan follows SWN_PLAN_*");
_Static_assert(PLAN_COUNT <= 6, "SWN_CONV_WORD_LEGAL holds 6 plans a computation");
_Static_assert(SAME(DATA_MEAN_MAX, SWN_MAX_MEAN), "data.mean's bound is the runtime's");
_Static_assert((int)LIST_MAX <= (int)SWN_MAX_FILES && (int)LIST_MAX <= (int)SWN_MAX_STEPS,
               "a setting's list fits the runtime's arrays");
_Static_assert(SAME(TEST_BATCH_MAX, SWN_TEST_BATCH_MAX),
               "--stats and the runtime cap an automatic test batch alike");
