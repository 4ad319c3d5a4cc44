/* Generated programs' OpenMP threads wait passively unless OMP_WAIT_POLICY says otherwise
 * (why: threads.c). libgomp reads its settings when it is loaded, before main, so the choice is
 * made in the executable's preinit array, which the dynamic loader runs before any library's
 * initialisers. Executables only: programs link it by its symbol (swnc_link_flags pulls it
 * from the archive); the shared runtime `swnc run` loads leaves it out, and swnc sets the same
 * default before loading it. */
#include <stdlib.h>

void swn_wait_passively(int argc, char **argv, char **envp);

void swn_wait_passively(int argc, char **argv, char **envp) {
  (void)argc, (void)argv, (void)envp;
  setenv("OMP_WAIT_POLICY", "passive", 0); /* 0: a user's own setting stays */
}

__attribute__((section(".preinit_array"),
               used)) static void (*const before_libraries)(int, char **,
                                                            char **) = swn_wait_passively;
