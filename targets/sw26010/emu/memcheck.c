/* The emulator's checking mode (SWEMU_CHECK_MEMORY=1): CPE code that touches main memory other
 * than by DMA stops with an error naming the kernel, the CPE and the address.
 *
 * How: a program linked with -Wl,--wrap=aligned_alloc,--wrap=free (the sw26010 kernel set's
 * link flags) gets its large allocations (64 KB and up: the runtime's tensors, parameters and
 * scratch) from here, each mapped twice from one memory file. While CPEs run, the program's
 * view of every such block is inaccessible; DMA copies through the second view. A fault on a
 * block is a CPE's direct access if the faulting thread is running a CPE; an MPE thread (another
 * core group's worker) waits until no core group is running CPEs and retries. Without the
 * environment variable, or for smaller allocations, the wrappers call the C library's. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "memcheck.h"

enum { CHECK_MIN_BYTES = 64 * 1024, MAX_BLOCKS = 1024 };

typedef struct Block {
  char *user, *alias; /* the program's view and the DMA engine's */
  size_t bytes;       /* mapped, whole pages */
} Block;

static Block blocks[MAX_BLOCKS];
static atomic_int nblocks;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int running;               /* core groups running CPEs now */
static _Atomic(SwemuCpeFault) cpe_fault; /* what a fault in a checked block reports to */
static bool enabled;                     /* SWEMU_CHECK_MEMORY, read once */
static pthread_once_t read_environment = PTHREAD_ONCE_INIT;

void *__real_aligned_alloc(size_t alignment, size_t bytes);
void __real_free(void *p);

static void read_setting(void) {
  const char *v = getenv("SWEMU_CHECK_MEMORY");
  enabled = v && *v && strcmp(v, "0") != 0;
}

bool swemu_check_enabled(void) {
  pthread_once(&read_environment, read_setting);
  return enabled;
}

static Block *find(const void *p) {
  int n = atomic_load(&nblocks);
  for (int i = 0; i < n; i++)
    if (blocks[i].user && (const char *)p >= blocks[i].user &&
        (const char *)p < blocks[i].user + blocks[i].bytes)
      return &blocks[i];
  return NULL;
}

static void *map_twice(size_t bytes) {
  int fd = memfd_create("swemu-main-memory", MFD_CLOEXEC);
  if (fd < 0 || ftruncate(fd, (off_t)bytes) != 0) {
    if (fd >= 0) close(fd);
    return NULL;
  }
  char *user = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  char *alias = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (user == MAP_FAILED || alias == MAP_FAILED) {
    if (user != MAP_FAILED) munmap(user, bytes);
    if (alias != MAP_FAILED) munmap(alias, bytes);
    return NULL;
  }
  pthread_mutex_lock(&lock);
  int slot = 0, n = atomic_load(&nblocks);
  while (slot < n && blocks[slot].user) slot++;
  if (slot == MAX_BLOCKS) {
    pthread_mutex_unlock(&lock);
    munmap(user, bytes), munmap(alias, bytes);
    return NULL;
  }
  blocks[slot] = (Block){user, alias, bytes};
  if (slot == n) atomic_store(&nblocks, n + 1);
  pthread_mutex_unlock(&lock);
  return user;
}

void *__wrap_aligned_alloc(size_t alignment, size_t bytes) {
  if (!swemu_check_enabled() || bytes < CHECK_MIN_BYTES || alignment > 4096)
    return __real_aligned_alloc(alignment, bytes);
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  void *p = map_twice((bytes + page - 1) / page * page);
  return p ? p : __real_aligned_alloc(alignment, bytes);
}

void __wrap_free(void *p) {
  if (p && swemu_check_enabled()) {
    pthread_mutex_lock(&lock);
    Block *b = find(p);
    if (b) {
      munmap(b->user, b->bytes), munmap(b->alias, b->bytes);
      *b = (Block){0};
    }
    pthread_mutex_unlock(&lock);
    if (b) return;
  }
  __real_free(p);
}

char *swemu_check_dma_address(char *mem) {
  if (!swemu_check_enabled()) return mem;
  Block *b = find(mem);
  return b ? b->alias + (mem - b->user) : mem;
}

static void protect_all(int protection) {
  int n = atomic_load(&nblocks);
  for (int i = 0; i < n; i++)
    if (blocks[i].user) mprotect(blocks[i].user, blocks[i].bytes, protection);
}

static void on_fault(int sig, siginfo_t *info, void *context) {
  (void)context;
  Block *b = find(info->si_addr);
  if (b && atomic_load(&running) > 0) {
    atomic_load (&cpe_fault)(info->si_addr, b->user, b->bytes); /* returns if no CPE runs here */
    while (atomic_load(&running) > 0) sched_yield(); /* an MPE thread: retry once CPEs are done */
    return;
  }
  signal(sig, SIG_DFL); /* not ours: fault again, as without the emulator */
}

static void install_handler(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_fault;
  sa.sa_flags = SA_SIGINFO | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, NULL);
}

void swemu_check_begin(SwemuCpeFault on_cpe_fault) {
  if (!swemu_check_enabled()) return;
  atomic_store(&cpe_fault, on_cpe_fault);
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, install_handler);
  pthread_mutex_lock(&lock);
  if (atomic_fetch_add(&running, 1) == 0) protect_all(PROT_NONE);
  pthread_mutex_unlock(&lock);
}

void swemu_check_end(void) {
  if (!swemu_check_enabled()) return;
  pthread_mutex_lock(&lock);
  if (atomic_load(&running) == 1) protect_all(PROT_READ | PROT_WRITE); /* before waiters see 0 */
  atomic_fetch_sub(&running, 1);
  pthread_mutex_unlock(&lock);
}

void swemu_check_release(void) { protect_all(PROT_READ | PROT_WRITE); }
