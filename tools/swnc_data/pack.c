/* swnc-data pack: input images into shards, in parallel over shards (each thread writes whole
 * shards, so the output does not depend on the thread count), resumable: a shard is written to
 * NAME.part and renamed when complete, the manifest is written last, and a second run keeps
 * every complete shard of the same plan (pack.txt: the options and a hash of the inputs). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "swnc_data.h"

/* Pixel sums of one shard: per channel, and per pixel while every image has one shape. */
typedef struct ShardStats {
  int64_t images, skipped;
  uint64_t pixels; /* per channel */
  double sums[3];
  int h, w; /* the shape of every image (0: none yet; -1: varied) */
  double *pixel_sums;
} ShardStats;

typedef struct Packer {
  const InputSet *in;
  const Options *o;
  const char *out;
  int channels;
  int64_t shards, stop_after;
  const int64_t *todo; /* the shards to write, handed out in order */
  int64_t ntodo, next;
  ShardStats *stats;
  atomic_llong done;
  atomic_int finished; /* threads */
  atomic_bool failed;
  pthread_mutex_t lock;
} Packer;

static const char *const storage_words[] = {"pixels", "jpeg"};
static const char *const color_words[] = {"rgb", "bgr", "gray"};

/* ------------------------------------------------------------------ one image */

static void add_stats(ShardStats *s, const Image *im) {
  size_t n = (size_t)im->h * im->w;
  for (size_t i = 0; i < n; i++)
    for (int c = 0; c < im->c; c++) s->sums[c] += im->pixels[i * im->c + c];
  s->pixels += n;
  if (s->h == 0) {
    s->h = im->h, s->w = im->w;
    s->pixel_sums = calloc(n * im->c, sizeof(double));
  } else if (s->h != im->h || s->w != im->w) {
    s->h = s->w = -1;
    free(s->pixel_sums), s->pixel_sums = NULL;
  }
  if (s->pixel_sums)
    for (size_t i = 0; i < n * im->c; i++) s->pixel_sums[i] += im->pixels[i];
}

static void target_size(const Options *o, int h, int w, int *th, int *tw) {
  *th = h, *tw = w;
  if (o->resize_w) {
    *th = o->resize_h, *tw = o->resize_w;
  } else if (o->resize_short) {
    bool tall = h > w;
    double ratio = (double)o->resize_short / (tall ? w : h);
    *th = tall ? (int)(h * ratio + 0.5) : o->resize_short;
    *tw = tall ? o->resize_short : (int)(w * ratio + 0.5);
  }
}

/* The record of one input file: its bytes in *record (malloc'ed), its shape in *im. */
static bool make_record(const Packer *p, const char *path, Image *im, uint8_t **record,
                        size_t *length, char *err) {
  size_t size;
  uint8_t *file = read_file(path, &size, err);
  if (!file) return false;
  Image decoded;
  if (!decode_image(file, size, p->o->color, &decoded, err)) {
    free(file);
    return false;
  }
  int h, w;
  target_size(p->o, decoded.h, decoded.w, &h, &w);
  bool resized = h != decoded.h || w != decoded.w;
  if (h > 65535 || w > 65535 || h < 1 || w < 1) {
    snprintf(err, SWN_ERR_BYTES, "would be %dx%d after resizing", h, w);
    free(file), free(decoded.pixels);
    return false;
  }
  if (resized) {
    resize_image(&decoded, h, w, im);
    free(decoded.pixels);
  } else {
    *im = decoded;
  }
  bool ok = true;
  if (p->o->storage == SWN_STORE_PIXELS) {
    *length = (size_t)im->h * im->w * im->c;
    *record = malloc(*length);
    memcpy(*record, im->pixels, *length);
  } else if (!resized && is_jpeg(file, size)) { /* the original bytes: no second loss */
    *record = file, *length = size, file = NULL;
  } else {
    ok = encode_jpeg(im, p->o->color, p->o->quality, record, length, err);
  }
  free(file);
  if (!ok) free(im->pixels), im->pixels = NULL;
  return ok;
}

/* ------------------------------------------------------------------ one shard */

static bool write_at(int fd, const void *buf, size_t n, uint64_t offset) {
  for (size_t done = 0; done < n;) {
    ssize_t put = pwrite(fd, (const char *)buf + done, n - done, (off_t)(offset + done));
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return false;
    done += (size_t)put;
  }
  return true;
}

static size_t pixel_sums(const ShardStats *s, int channels) {
  return s->pixel_sums ? (size_t)s->h * s->w * channels : 0;
}

static size_t stats_bytes(const ShardStats *s, int channels) {
  return 40 + 8 * (size_t)channels + 8 * pixel_sums(s, channels);
}

static uint8_t *encode_stats(const ShardStats *s, int channels) {
  size_t n = stats_bytes(s, channels), per_pixel = pixel_sums(s, channels);
  uint8_t *b = calloc(1, n);
  swn_put_u32(b, (uint32_t)channels);
  swn_put_u32(b + 4, s->pixel_sums ? (uint32_t)s->h : 0);
  swn_put_u32(b + 8, s->pixel_sums ? (uint32_t)s->w : 0);
  swn_put_u64(b + 16, (uint64_t)s->images), swn_put_u64(b + 24, (uint64_t)s->skipped);
  swn_put_u64(b + 32, s->pixels);
  for (int c = 0; c < channels; c++) memcpy(b + 40 + 8 * c, &s->sums[c], 8);
  if (per_pixel) memcpy(b + 40 + 8 * channels, s->pixel_sums, 8 * per_pixel);
  return b; /* doubles as stored by this (little-endian) machine */
}

/* Shard k's input images: [first, end). */
static int64_t shard_end(const Packer *p, int64_t k) {
  int64_t end = (k + 1) * p->o->shard_size;
  return end < p->in->count ? end : p->in->count;
}

static void shard_paths(const Packer *p, int64_t k, char *path, char *part) {
  swn_shard_path(path, 4096, p->out, k);
  snprintf(part, 4200, "%s.part", path);
}

static bool fail_image(Packer *p, ShardStats *s, const char *path, const char *err) {
  if (p->o->skip_bad) {
    fprintf(stderr, "\rswnc-data: skipped %s: %s\n", path, err);
    s->skipped++;
    return true;
  }
  fprintf(stderr, "\r%s: error: %s (use --skip-bad to leave such images out)\n", path, err);
  return false;
}

static void test_interrupt(Packer *p) {
  if (p->stop_after > 0 && atomic_fetch_add(&p->done, 0) >= p->stop_after) _exit(3);
}

static bool write_shard(Packer *p, int64_t k) {
  char path[4096], part[4200];
  shard_paths(p, k, path, part);
  int fd = open(part, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    fprintf(stderr, "%s: error: cannot create: %s\n", part, strerror(errno));
    return false;
  }
  ShardStats *s = &p->stats[k];
  int64_t first = k * p->o->shard_size, last = shard_end(p, k);
  SwnRecord *records = calloc((size_t)(last - first), sizeof *records);
  uint64_t pos = SWN_SHARD_HEADER_BYTES;
  bool ok = true;
  for (int64_t i = first; ok && i < last && !atomic_load(&p->failed); i++) {
    const Input *in = &p->in->items[i];
    Image im;
    uint8_t *record;
    size_t length;
    char err[SWN_ERR_BYTES];
    if (!make_record(p, in->path, &im, &record, &length, err)) {
      ok = fail_image(p, s, in->path, err);
    } else {
      add_stats(s, &im);
      SwnRecord *r = &records[s->images++];
      *r = (SwnRecord){.offset = pos,
                       .length = (uint32_t)length,
                       .crc = swn_crc32(record, length),
                       .label = in->label,
                       .height = (uint16_t)im.h,
                       .width = (uint16_t)im.w,
                       .channels = (uint8_t)im.c};
      ok = length < UINT32_MAX && write_at(fd, record, length, pos);
      if (!ok) fprintf(stderr, "%s: error: cannot write: %s\n", part, strerror(errno));
      pos += length;
      free(record), free(im.pixels);
    }
    atomic_fetch_add(&p->done, 1);
    test_interrupt(p);
  }
  ok = ok && !atomic_load(&p->failed);
  size_t index_bytes = (size_t)s->images * SWN_INDEX_ENTRY_BYTES;
  uint8_t *index = calloc(1, index_bytes + 1);
  for (int64_t i = 0; i < s->images; i++)
    swn_encode_record(&records[i], index + i * SWN_INDEX_ENTRY_BYTES);
  SwnShardHeader h = {.version = SWN_PACK_VERSION,
                      .storage = (uint32_t)p->o->storage,
                      .count = (uint64_t)s->images,
                      .first_image = (uint64_t)first,
                      .index_offset = pos,
                      .stats_offset = pos + index_bytes,
                      .index_crc = swn_crc32(index, index_bytes)};
  uint8_t head[SWN_SHARD_HEADER_BYTES], *stats = encode_stats(s, p->channels);
  swn_encode_shard_header(&h, head);
  if (ok && !(write_at(fd, index, index_bytes, pos) &&
              write_at(fd, stats, stats_bytes(s, p->channels), h.stats_offset) &&
              write_at(fd, head, sizeof head, 0) && fsync(fd) == 0)) {
    fprintf(stderr, "%s: error: cannot write: %s\n", part, strerror(errno));
    ok = false;
  }
  close(fd);
  free(index), free(stats), free(records);
  if (ok && rename(part, path)) {
    fprintf(stderr, "%s: error: cannot rename to %s: %s\n", part, path, strerror(errno));
    ok = false;
  }
  return ok;
}

/* A complete shard of this plan from an earlier run: its stats, and true. */
static bool keep_shard(Packer *p, int64_t k) {
  char path[4096], part[4200], err[SWN_ERR_BYTES];
  shard_paths(p, k, path, part);
  SwnShardHeader h;
  SwnRecord *records;
  if (access(path, F_OK) || !swn_read_shard_index(path, &h, &records, err)) return false;
  free(records);
  if (h.first_image != (uint64_t)(k * p->o->shard_size) || h.storage != (uint32_t)p->o->storage)
    return false;
  FILE *f = fopen(path, "rb");
  uint8_t fixed[40];
  bool ok = f && !fseek(f, (long)h.stats_offset, SEEK_SET) && fread(fixed, 1, 40, f) == 40 &&
            swn_get_u32(fixed) == (uint32_t)p->channels;
  ShardStats *s = &p->stats[k];
  if (ok) {
    s->h = (int)swn_get_u32(fixed + 4), s->w = (int)swn_get_u32(fixed + 8);
    s->images = (int64_t)swn_get_u64(fixed + 16), s->skipped = (int64_t)swn_get_u64(fixed + 24);
    s->pixels = swn_get_u64(fixed + 32);
    ok = fread(s->sums, 8, (size_t)p->channels, f) == (size_t)p->channels;
    size_t n = (size_t)s->h * s->w * p->channels;
    if (ok && n) {
      s->pixel_sums = malloc(8 * n);
      ok = fread(s->pixel_sums, 8, n, f) == n;
    }
    if (!n) s->h = s->w = -1;
  }
  if (f) fclose(f);
  if (!ok) {
    free(s->pixel_sums);
    memset(s, 0, sizeof *s);
  }
  return ok;
}

static void *work(void *arg) {
  Packer *p = arg;
  for (;;) {
    pthread_mutex_lock(&p->lock);
    int64_t next = p->next++;
    pthread_mutex_unlock(&p->lock);
    if (next >= p->ntodo || atomic_load(&p->failed)) break;
    if (!write_shard(p, p->todo[next])) atomic_store(&p->failed, true);
  }
  atomic_fetch_add(&p->finished, 1);
  return NULL;
}

/* ------------------------------------------------------------------ the plan and the manifest */

static uint64_t inputs_hash(const InputSet *in) {
  uLong h = crc32(0L, Z_NULL, 0);
  for (int64_t i = 0; i < in->count; i++) {
    char label[16];
    snprintf(label, sizeof label, " %d\n", in->items[i].label);
    h = crc32(h, (const Bytef *)in->items[i].path, (uInt)strlen(in->items[i].path));
    h = crc32(h, (const Bytef *)label, (uInt)strlen(label));
  }
  return h;
}

static void plan_text(const InputSet *in, const Options *o, char *text, size_t size) {
  snprintf(
      text, size,
      "swnc-data pack plan 1\nimages %" PRId64 "\ninputs_crc %08" PRIx64 "\nshard_size %" PRId64
      "\nstorage %s\ncolor %s\nquality %d\nresize_short %d\nresize %dx%d\n",
      in->count, inputs_hash(in), o->shard_size, storage_words[o->storage], color_words[o->color],
      o->storage == SWN_STORE_JPEG ? o->quality : 0, o->resize_short, o->resize_w, o->resize_h);
}

/* Writes `text` to DIR/NAME atomically (NAME.tmp, then renamed). */
static bool write_text(const char *dir, const char *name, const void *data, size_t n) {
  char path[4096], tmp[4200];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "wb");
  bool ok = f && fwrite(data, 1, n, f) == n;
  ok = f && fflush(f) == 0 && fsync(fileno(f)) == 0 && ok;
  if (f) ok = fclose(f) == 0 && ok;
  ok = ok && rename(tmp, path) == 0;
  if (!ok) fprintf(stderr, "%s: error: cannot write: %s\n", path, strerror(errno));
  return ok;
}

/* An existing directory is resumed only if it holds this plan. */
static int check_out(const char *out, const char *plan) {
  char path[4096];
  snprintf(path, sizeof path, "%s/pack.txt", out);
  size_t n;
  char err[SWN_ERR_BYTES];
  uint8_t *old = read_file(path, &n, err);
  if (!old) {
    if (mkdir(out, 0755) == 0) return 0;
    if (errno == EEXIST && rmdir(out) == 0 && mkdir(out, 0755) == 0) return 0; /* empty */
    fprintf(stderr, "%s: error: %s\n", out,
            errno == ENOTEMPTY || errno == EEXIST
                ? "exists and is not a swnc-data pack in progress (no pack.txt): choose a new "
                  "directory"
                : strerror(errno));
    return -1;
  }
  bool same = n == strlen(plan) && !memcmp(old, plan, n);
  free(old);
  if (!same) {
    fprintf(stderr,
            "%s: error: holds a pack of other inputs or options (its pack.txt differs); "
            "remove it or choose another directory\n",
            out);
    return -1;
  }
  snprintf(path, sizeof path, "%s/dataset.txt", out);
  return access(path, F_OK) == 0 ? 1 : 0;
}

static bool write_results(Packer *p, const InputSet *in) {
  int64_t images = 0, skipped = 0, h = 0, w = 0;
  uint64_t pixels = 0;
  double sums[3] = {0, 0, 0};
  bool one_shape = true;
  for (int64_t k = 0; k < p->shards; k++) {
    ShardStats *s = &p->stats[k];
    images += s->images, skipped += s->skipped, pixels += s->pixels;
    for (int c = 0; c < p->channels; c++) sums[c] += s->sums[c];
    if (s->images == 0) continue;
    if (!s->pixel_sums || (h && (s->h != h || s->w != w))) one_shape = false;
    h = s->h, w = s->w;
  }
  if (images == 0) {
    fprintf(stderr, "%s: error: no image could be packed\n", p->out);
    return false;
  }
  bool ok = true;
  if (one_shape) {
    size_t n = (size_t)h * w * p->channels;
    uint8_t *mean = calloc(1, 20 + 4 * n);
    memcpy(mean, SWN_MEAN_MAGIC, 8);
    swn_put_u32(mean + 8, (uint32_t)p->channels), swn_put_u32(mean + 12, (uint32_t)h);
    swn_put_u32(mean + 16, (uint32_t)w);
    for (size_t i = 0; i < n; i++) {
      double sum = 0;
      for (int64_t k = 0; k < p->shards; k++)
        if (p->stats[k].images) sum += p->stats[k].pixel_sums[i];
      float v = (float)(sum / (double)images);
      uint32_t bits;
      memcpy(&bits, &v, 4);
      swn_put_u32(mean + 20 + 4 * i, bits);
    }
    ok = write_text(p->out, "mean.bin", mean, 20 + 4 * n);
    free(mean);
  }
  if (ok && in->class_names) {
    size_t cap = 64, n = 0;
    char *text = malloc(cap);
    for (int64_t c = 0; c < in->classes; c++) {
      size_t need = strlen(in->class_names[c]) + 24;
      if (n + need >= cap) text = realloc(text, cap = 2 * (n + need));
      n += (size_t)sprintf(text + n, "%" PRId64 " %s\n", c, in->class_names[c]);
    }
    ok = write_text(p->out, "classes.txt", text, n);
    free(text);
  }
  char manifest[1024];
  int n =
      snprintf(manifest, sizeof manifest,
               "swnc-data %d\nimages %" PRId64 "\nshards %" PRId64 "\nshard_size %" PRId64
               "\nskipped %" PRId64 "\nstorage %s\ncolor %s\nchannels %d\nclasses %" PRId64 "\n",
               SWN_PACK_VERSION, images, p->shards, p->o->shard_size, skipped,
               storage_words[p->o->storage], color_words[p->o->color], p->channels, in->classes);
  if (one_shape)
    n += snprintf(manifest + n, sizeof manifest - (size_t)n, "shape %" PRId64 " %" PRId64 "\n", h,
                  w);
  else
    n += snprintf(manifest + n, sizeof manifest - (size_t)n, "shape varied\n");
  n += snprintf(manifest + n, sizeof manifest - (size_t)n, "mean");
  for (int c = 0; c < p->channels; c++)
    n += snprintf(manifest + n, sizeof manifest - (size_t)n, " %.6f", sums[c] / (double)pixels);
  n += snprintf(manifest + n, sizeof manifest - (size_t)n, "\n%s",
                one_shape ? "mean_image mean.bin\n" : "");
  if (ok) ok = write_text(p->out, "dataset.txt", manifest, (size_t)n);
  if (ok && !p->o->quiet)
    printf("packed %" PRId64 " images of %" PRId64 " classes into %" PRId64 " shard%s in %s\n",
           images, in->classes, p->shards, p->shards == 1 ? "" : "s", p->out);
  /* even with --quiet: images left out are never silent */
  if (ok && skipped)
    printf("skipped %" PRId64 " unreadable image%s (named above)\n", skipped,
           skipped == 1 ? "" : "s");
  return ok;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void show_progress(Packer *p, int64_t total, double start, bool last) {
  long long done = atomic_load(&p->done);
  double rate = done / (now() - start + 1e-9);
  fprintf(stderr, "\rpacking: %lld/%lld images (%3.0f%%), %.0f images/s   %s", done,
          (long long)total, 100.0 * (double)done / (double)total, rate, last ? "\n" : "");
}

int pack(const char *source, const char *out, const char *root, const Options *o) {
  InputSet in;
  if (!read_inputs(source, root, &in)) return 1;
  char plan[1024];
  plan_text(&in, o, plan, sizeof plan);
  int state = check_out(out, plan);
  if (state != 0) {
    if (state > 0 && !o->quiet) printf("%s: already packed (the same inputs and options)\n", out);
    free_inputs(&in);
    return state > 0 ? 0 : 1;
  }
  bool ok = write_text(out, "pack.txt", plan, strlen(plan));
  Packer p = {.in = &in,
              .o = o,
              .out = out,
              .channels = o->color == SWN_COLOR_GRAY ? 1 : 3,
              .shards = (in.count + o->shard_size - 1) / o->shard_size};
  const char *stop = getenv("SWNC_DATA_TEST_STOP_AFTER"); /* tests: an interrupted pack */
  p.stop_after = stop ? atoll(stop) : 0;
  p.stats = calloc((size_t)p.shards, sizeof *p.stats);
  pthread_mutex_init(&p.lock, NULL);
  int64_t kept = 0;
  bool *keep = calloc((size_t)p.shards, 1);
  for (int64_t k = 0; ok && k < p.shards; k++)
    if ((keep[k] = keep_shard(&p, k))) kept++;
  if (kept && !o->quiet)
    printf("%s: resuming: %" PRId64 " of %" PRId64 " shards are complete\n", out, kept, p.shards);
  /* the shards still to write, handed out in order */
  int64_t *todo = calloc((size_t)p.shards + 1, sizeof *todo), ntodo = 0, work_images = 0;
  for (int64_t k = 0; k < p.shards; k++)
    if (!keep[k]) {
      todo[ntodo++] = k;
      work_images += shard_end(&p, k) - k * o->shard_size;
    }
  p.todo = todo, p.ntodo = ntodo;
  int threads = o->threads < ntodo ? o->threads : (int)ntodo, started = 0;
  pthread_t *tid = calloc((size_t)threads + 1, sizeof *tid);
  double start = now();
  bool show = !o->quiet && isatty(2);
  for (; ok && started < threads; started++)
    if (pthread_create(&tid[started], NULL, work, &p)) {
      fprintf(stderr, "swnc-data: error: cannot start a thread\n");
      ok = false;
      atomic_store(&p.failed, true);
      break;
    }
  while (atomic_load(&p.finished) < started) {
    struct timespec nap = {0, 100000000};
    nanosleep(&nap, NULL);
    if (show) show_progress(&p, work_images, start, false);
  }
  for (int t = 0; t < started; t++) pthread_join(tid[t], NULL);
  if (show && started > 0) show_progress(&p, work_images, start, true);
  ok = ok && !atomic_load(&p.failed) && write_results(&p, &in);
  for (int64_t k = 0; k < p.shards; k++) free(p.stats[k].pixel_sums);
  free(p.stats), free(keep), free(todo), free(tid);
  pthread_mutex_destroy(&p.lock);
  free_inputs(&in);
  return ok ? 0 : 1;
}
