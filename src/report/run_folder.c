/* The report's file access: whole-file reads, JSON objects of the run folder, the atomic write of the page. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "base/alloc.h"
#include "report/report_internal.h"

tg_status rp_read_json(const char *run, const char *file, tg_json_doc **doc) {
  char path[RP_PATH_MAX];
  *doc = NULL;
  if (!rp_path(path, sizeof path, run, file)) return tg_error(TG_ERR_IO, "report: path of %s is too long", file);
  tg_status st = tg_json_parse_file(path, doc);
  if (st == TG_OK && tg_json_root(*doc)->type != TG_JSON_OBJECT) {
    tg_json_free(*doc);
    *doc = NULL;
    st = tg_error(TG_ERR_FORMAT, "%s: not a JSON object", path);
  }
  return st;
}

