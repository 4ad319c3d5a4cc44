/* How the compiler-runtime-kernel contract is written down, once. Every struct that crosses
 * the boundary between generated code and the runtime or the kernels is a list of rows
 *   F(code, C type, name)            a scalar field
 *   A(code, C type, name, length)    an array field
 * and every function that generated code calls is a row
 *   FN(return code, name, (P(code, C type, name), ...))
 * The runtime's headers (kernels.h, swnc_rt.h) expand these lists into the C declarations;
 * the compiler (codegen/contract.c) expands the same lists into tables from which lowering
 * checks every call, the C backend prints structs and the LLVM backend builds their types.
 * A code says how a value crosses the boundary:
 *   I32 int, I64 int64_t, U64 uint64_t, SIZE size_t, F32 float, BOOL bool, PTR any pointer,
 *   STRUCT a nested struct (its C type is the struct's name), VOID (returns only).
 * docs/adding-an-op.md shows where a new kernel's rows go. */
#ifndef SWNC_CONTRACT_H
#define SWNC_CONTRACT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* C declarations from the rows. */
#define SWN_C_FIELD(code, ctype, name) ctype name;
#define SWN_C_ARRAY(code, ctype, name, length) ctype name[length];
#define SWN_C_STRUCT(T)                                                                            \
  typedef struct T {                                                                               \
    T##_FIELDS(SWN_C_FIELD, SWN_C_ARRAY)                                                           \
  } T;
#define SWN_C_PARAM(code, ctype, name) ctype name
#define SWN_C_RETURN_VOID void
#define SWN_C_RETURN_SIZE size_t
#define SWN_C_RETURN_I32 int
#define SWN_C_FUNCTION(ret, name, params) SWN_C_RETURN_##ret name params;

#endif
