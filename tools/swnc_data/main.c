/* swnc-data's command line. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "swnc_data.h"
#include "util.h"

static void usage(FILE *f) {
  fprintf(f, "usage: swnc-data pack SOURCE DIR [options]   pack images into a dataset directory\n"
             "       swnc-data info DIR                    what a packed dataset holds\n"
             "       swnc-data verify DIR                  read, check and decode every record\n"
             "       swnc-data --version\n\n"
             "SOURCE is a folder with one subfolder of images per class (classes numbered in\n"
             "sorted order, their names written to DIR/classes.txt), or a list file of\n"
             "'path label' lines (paths relative to the list's folder, or to --root).\n"
             "Images are JPEG or PNG. An interrupted pack continues where it stopped when run\n"
             "again with the same arguments.\n\n"
             "pack options:\n"
             "  --resize N            shorter side to N pixels, keeping the aspect ratio\n"
             "  --resize WxH          exactly W x H pixels\n"
             "  --store pixels|jpeg   decoded pixels (default: fast to read, larger), or JPEG\n"
             "                        (JPEG inputs kept byte for byte unless resized)\n"
             "  --quality Q           JPEG quality when encoding, 1-100 (default 90)\n"
             "  --color rgb|bgr|gray  channel order, or one gray channel (default rgb)\n"
             "  --shard-size N        images per shard (default 1000)\n"
             "  --threads N           packing threads (default: this machine's cores)\n"
             "  --root DIR            folder the list file's paths are relative to\n"
             "  --skip-bad            leave out unreadable or corrupt images, count and name them\n"
             "                        (default: stop at the first, writing nothing complete)\n"
             "  --quiet               no progress or summary\n"
             "  -h, --help            this help\n");
}

static int word(const char *opt, const char *value, const char *const *words, int n) {
  for (int i = 0; i < n; i++)
    if (!strcmp(value, words[i])) return i;
  fprintf(stderr, "swnc-data: error: %s must be one of", opt);
  for (int i = 0; i < n; i++) fprintf(stderr, " %s", words[i]);
  fprintf(stderr, ", not '%s'\n", value);
  exit(2);
}

static long long number(const char *opt, const char *value, long long lo, long long hi) {
  char *end;
  long long v = strtoll(value, &end, 10);
  if (*end || end == value || v < lo || v > hi) {
    fprintf(stderr, "swnc-data: error: %s needs a whole number from %lld to %lld, not '%s'\n", opt,
            lo, hi, value);
    exit(2);
  }
  return v;
}

static void resize_option(const char *value, Options *o) {
  int w, h;
  char x, extra;
  if (sscanf(value, "%d%c%d%c", &w, &x, &h, &extra) == 3 && (x == 'x' || x == 'X') && w > 0 &&
      h > 0 && w <= 65535 && h <= 65535)
    o->resize_w = w, o->resize_h = h, o->resize_short = 0;
  else
    o->resize_short = (int)number("--resize", value, 1, 65535), o->resize_w = o->resize_h = 0;
}

int main(int argc, char **argv) {
  swn_program = "swnc-data"; /* the runtime's messages (out of memory) name this program */
  if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  if (!strcmp(argv[1], "--version")) {
    printf("swnc-data (swnc %s)\n", SWNC_VERSION);
    return 0;
  }
  const char *command = argv[1];
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  Options o = {.storage = SWN_STORE_PIXELS,
               .color = SWN_COLOR_RGB,
               .quality = 90,
               .shard_size = 1000,
               .threads = cores > 0 ? (int)cores : 1};
  const char *root = NULL;
  static const struct option longs[] = {{"resize", required_argument, 0, 'r'},
                                        {"store", required_argument, 0, 's'},
                                        {"quality", required_argument, 0, 'q'},
                                        {"color", required_argument, 0, 'c'},
                                        {"shard-size", required_argument, 0, 'n'},
                                        {"threads", required_argument, 0, 't'},
                                        {"root", required_argument, 0, 'R'},
                                        {"skip-bad", no_argument, 0, 'b'},
                                        {"quiet", no_argument, 0, 'Q'},
                                        {"help", no_argument, 0, 'h'},
                                        {0, 0, 0, 0}};
  static const char *const storage[] = {"pixels", "jpeg"}, *const color[] = {"rgb", "bgr", "gray"};
  opterr = 0;
  optind = 2;
  for (int c; (c = getopt_long(argc, argv, ":h", longs, NULL)) != -1;) {
    switch (c) {
    case 'r': resize_option(optarg, &o); break;
    case 's': o.storage = word("--store", optarg, storage, 2); break;
    case 'q': o.quality = (int)number("--quality", optarg, 1, 100); break;
    case 'c': o.color = word("--color", optarg, color, 3); break;
    case 'n': o.shard_size = number("--shard-size", optarg, 1, 1 << 24); break;
    case 't': o.threads = (int)number("--threads", optarg, 1, 256); break;
    case 'R': root = optarg; break;
    case 'b': o.skip_bad = true; break;
    case 'Q': o.quiet = true; break;
    case 'h': usage(stdout); return 0;
    case ':': fprintf(stderr, "swnc-data: error: %s needs a value\n", argv[optind - 1]); return 2;
    default:
      fprintf(stderr, "swnc-data: error: unknown option '%s' (see --help)\n", argv[optind - 1]);
      return 2;
    }
  }
  int operands = argc - optind;
  if (!strcmp(command, "pack") && operands == 2)
    return pack(argv[optind], argv[optind + 1], root, &o);
  if ((!strcmp(command, "info") || !strcmp(command, "verify")) && operands == 1)
    return command[0] == 'i' ? info(argv[optind]) : verify(argv[optind], o.quiet);
  if (strcmp(command, "pack") && strcmp(command, "info") && strcmp(command, "verify"))
    fprintf(stderr, "swnc-data: error: unknown command '%s' (pack, info or verify)\n", command);
  else
    fprintf(stderr, "swnc-data: error: %s takes %s (see --help)\n", command,
            !strcmp(command, "pack") ? "SOURCE and DIR" : "one DIR");
  return 2;
}
