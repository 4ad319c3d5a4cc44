/* The compute threads of a generated program (threads.c). */
#ifndef SWNC_RT_THREADS_H
#define SWNC_RT_THREADS_H

/* Starts the kernels' `threads` threads, or stops with an error that says what limits them. */
void swn_threads_start(int threads);

#endif
