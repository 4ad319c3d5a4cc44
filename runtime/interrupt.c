/* SIGINT and SIGTERM while a network trains. The first asks the training loop to stop after
 * the iteration in hand, as Caffe's `sigint_effect: SNAPSHOT` does: the loop says so, saves a
 * checkpoint when --checkpoint names one, and the program exits with 128 + the signal. A
 * second signal ends the process at once, removing the checkpoint being written, if any (its
 * temporary file; the previous checkpoint stays whole behind its name). */
#include "interrupt.h"

#include <signal.h>
#include <stddef.h>

#include "util.h"

static volatile sig_atomic_t caught;
static struct sigaction previous[2];
static const int signals[2] = {SIGINT, SIGTERM};

static void on_signal(int sig) {
  if (!caught) {
    caught = sig;
    return;
  }
  swn_temporary_remove(); /* async-signal-safe: unlink */
  signal(sig, SIG_DFL);
  raise(sig);
}

void swn_interrupt_catch(void) {
  struct sigaction a = {.sa_handler = on_signal, .sa_flags = SA_RESTART};
  sigemptyset(&a.sa_mask);
  for (int i = 0; i < 2; i++) sigaction(signals[i], &a, &previous[i]);
}

void swn_interrupt_release(void) {
  for (int i = 0; i < 2; i++) sigaction(signals[i], &previous[i], NULL);
}

int swn_interrupt_signal(void) { return caught; }
