/* The LLVM backend (LLVM-C API only): the lowered program as an LLVM module. */
#ifndef SWNC_EMIT_LLVM_H
#define SWNC_EMIT_LLVM_H

#include <llvm-c/Core.h>

#include "../lower.h"

/* Builds and verifies the module for `m` in `ctx`; reports errors (with LLVM's message) and
 * returns NULL on failure. */
LLVMModuleRef llvm_build_module(const Module *m, const char *source, LLVMContextRef ctx);

/* The LLVM type mirroring a runtime struct of runtime/swnc_rt.h ("SwnStep", "SwnNetwork",
 * "SwnParamInfo", "SwnStateInfo", "SwnMetric", "SwnTrainConfig", "SwnDataConfig"), for the
 * layout test. */
LLVMTypeRef llvm_runtime_type(LLVMContextRef ctx, const char *name);

#endif
