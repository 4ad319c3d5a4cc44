/* What to pack: a class-folder tree (PyTorch's ImageFolder) or a list file of "path label"
 * lines (Caffe's convert_imageset). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "swnc_data.h"

static void *grow(void *p, int64_t *cap, int64_t need, size_t item) {
  if (need <= *cap) return p;
  *cap = *cap ? *cap * 2 : 64;
  if (*cap < need) *cap = need;
  void *q = realloc(p, (size_t)*cap * item);
  if (!q) {
    fprintf(stderr, "swnc-data: error: out of memory\n");
    exit(1);
  }
  return q;
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool is_image_name(const char *name) {
  const char *dot = strrchr(name, '.');
  return dot && (!strcasecmp(dot, ".jpg") || !strcasecmp(dot, ".jpeg") || !strcasecmp(dot, ".png"));
}

/* The sorted names in `dir` that are directories (want_dirs) or image files; -1 if it cannot be
 * read. Hidden entries are left out. */
static int64_t list_dir(const char *dir, bool want_dirs, char ***names) {
  DIR *d = opendir(dir);
  if (!d) return -1;
  int64_t n = 0, cap = 0;
  *names = NULL;
  for (struct dirent *e; (e = readdir(d));) {
    if (e->d_name[0] == '.') continue;
    char path[4096];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    bool is_dir = !stat(path, &st) && S_ISDIR(st.st_mode);
    if (want_dirs ? !is_dir : is_dir || !is_image_name(e->d_name)) continue;
    *names = grow(*names, &cap, n + 1, sizeof **names);
    (*names)[n++] = strdup(e->d_name);
  }
  closedir(d);
  if (n > 1) qsort(*names, (size_t)n, sizeof **names, by_name);
  return n;
}

static void add(InputSet *set, int64_t *cap, char *path, int32_t label) {
  set->items = grow(set->items, cap, set->count + 1, sizeof *set->items);
  set->items[set->count++] = (Input){path, label};
}

static bool read_tree(const char *root, InputSet *set) {
  char **classes;
  int64_t nclasses = list_dir(root, true, &classes), cap = 0;
  if (nclasses < 0) {
    fprintf(stderr, "%s: error: cannot read the directory: %s\n", root, strerror(errno));
    return false;
  }
  if (nclasses == 0) {
    fprintf(stderr, "%s: error: holds no class folders (one folder of images per class)\n", root);
    free(classes);
    return false;
  }
  set->class_names = classes, set->classes = nclasses;
  for (int64_t c = 0; c < nclasses; c++) {
    char folder[4096], **files;
    snprintf(folder, sizeof folder, "%s/%s", root, classes[c]);
    int64_t n = list_dir(folder, false, &files);
    if (n <= 0) {
      fprintf(stderr, "%s: error: %s\n", folder,
              n < 0 ? strerror(errno) : "the class folder holds no images (.jpg, .jpeg, .png)");
      free(files);
      return false;
    }
    for (int64_t i = 0; i < n; i++) {
      char *path = malloc(strlen(folder) + strlen(files[i]) + 2);
      sprintf(path, "%s/%s", folder, files[i]);
      add(set, &cap, path, (int32_t)c);
      free(files[i]);
    }
    free(files);
  }
  return true;
}

/* "path label" with the label after the last space, as convert_imageset reads it. */
static bool read_list(const char *list, const char *root, InputSet *set) {
  FILE *f = fopen(list, "r");
  if (!f) {
    fprintf(stderr, "%s: error: cannot open: %s\n", list, strerror(errno));
    return false;
  }
  char base[4096];
  const char *slash = strrchr(list, '/');
  snprintf(base, sizeof base, "%.*s", slash ? (int)(slash - list) : 1, slash ? list : ".");
  if (root) snprintf(base, sizeof base, "%s", root);
  char *line = NULL;
  size_t size = 0;
  int64_t cap = 0, number = 0;
  bool ok = true;
  while (ok && getline(&line, &size, f) > 0) {
    number++;
    line[strcspn(line, "\r\n")] = 0;
    char *text = line + strspn(line, " \t");
    if (!*text || *text == '#') continue;
    char *space = strrchr(text, ' '), *end;
    long label = space ? strtol(space + 1, &end, 10) : -1;
    if (!space || *end || end == space + 1 || label < 0 || label > INT32_MAX) {
      fprintf(stderr, "%s:%lld: error: expected 'path label' (a label of 0 or more), got '%s'\n",
              list, (long long)number, text);
      ok = false;
      break;
    }
    *space = 0;
    char *path = malloc(strlen(base) + strlen(text) + 2);
    if (text[0] == '/')
      strcpy(path, text);
    else
      sprintf(path, "%s/%s", base, text);
    add(set, &cap, path, (int32_t)label);
    if (label + 1 > set->classes) set->classes = label + 1;
  }
  free(line);
  fclose(f);
  if (ok && set->count == 0) {
    fprintf(stderr, "%s: error: lists no images\n", list);
    ok = false;
  }
  return ok;
}

bool read_inputs(const char *source, const char *root, InputSet *set) {
  memset(set, 0, sizeof *set);
  struct stat st;
  if (stat(source, &st)) {
    fprintf(stderr, "%s: error: %s\n", source, strerror(errno));
    return false;
  }
  return S_ISDIR(st.st_mode) ? read_tree(source, set) : read_list(source, root, set);
}

void free_inputs(InputSet *set) {
  for (int64_t i = 0; i < set->count; i++) free(set->items[i].path);
  if (set->class_names)
    for (int64_t c = 0; c < set->classes; c++) free(set->class_names[c]);
  free(set->class_names);
  free(set->items);
  memset(set, 0, sizeof *set);
}
