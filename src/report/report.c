/* tg_report_write: the page around the sections (style, load check script) written atomically into the run folder. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "report/report_internal.h"
#include "tickgrad/report.h"
#include "tickgrad/version.h"

static const char *const STYLE =
    ":root{--fg:#1f2937;--muted:#6b7280;--line:#e5e7eb;--bg:#f4f5f7;--card:#fff;--accent:#2563eb}\n"
    "*{box-sizing:border-box}\n"
    "body{margin:0;background:var(--bg);color:var(--fg);"
    "font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,'Helvetica Neue',Arial,sans-serif}\n"
    "main{max-width:1140px;margin:0 auto;padding:28px 24px 48px}\n"
    "header.top h1{margin:0 0 2px;font-size:26px;letter-spacing:-.01em}\n"
    ".sub{margin:0 0 10px;color:var(--muted)}\n"
    "nav a{margin-right:16px;color:var(--accent);text-decoration:none;font-weight:500}\n"
    "section{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:18px 22px 20px;"
    "margin:18px 0;box-shadow:0 1px 2px rgba(16,24,40,.05)}\n"
    "h2{font-size:18px;margin:0 0 12px}\n"
    "h3{font-size:14px;margin:18px 0 8px;color:#374151;text-transform:uppercase;letter-spacing:.04em}\n"
    ".grid{display:grid;grid-template-columns:repeat(2,minmax(0,1fr));gap:14px;margin-top:12px}\n"
    "@media (max-width:900px){.grid{grid-template-columns:1fr}}\n"
    "svg.chart{display:block;width:100%;height:auto;background:#fff;border:1px solid var(--line);border-radius:8px;"
    "margin:8px 0}\n"
    ".grid svg.chart{margin:0}\n"
    "svg.chart text{font:11px system-ui,-apple-system,'Segoe UI',Roboto,Arial,sans-serif;fill:#4b5563}\n"
    "svg.chart text.t{font-size:13px;font-weight:600;fill:#111827}\n"
    "svg.chart text.al{fill:#6b7280}\n"
    "svg.chart line.gl{stroke:#eef0f3}\n"
    "svg.chart line.ax{stroke:#9ca3af}\n"
    "svg.chart path.ln{fill:none;stroke-width:1.7;stroke-linejoin:round;stroke-linecap:round}\n"
    ".nochart{border:1px dashed var(--line);border-radius:8px;padding:12px 14px}\n"
    ".nochart .t{font-weight:600;font-size:13px;margin-bottom:6px}\n"
    "dl.kv{display:grid;grid-template-columns:repeat(auto-fill,minmax(250px,1fr));gap:0 24px;margin:0}\n"
    "dl.kv div{display:flex;justify-content:space-between;gap:12px;border-bottom:1px solid #f1f2f4;padding:3px 0}\n"
    "dl.kv dt{color:var(--muted)}\n"
    "dl.kv dd{margin:0;text-align:right;overflow-wrap:anywhere;font-variant-numeric:tabular-nums}\n"
    "table{border-collapse:collapse;font-variant-numeric:tabular-nums;margin:6px 0}\n"
    "th,td{padding:4px 12px;border-bottom:1px solid var(--line);text-align:right;white-space:nowrap}\n"
    "th{font-weight:600;color:#374151;background:#f9fafb}\n"
    "th:first-child,td:first-child{text-align:left}\n"
    "table.stats{min-width:520px}\n"
    "tr.gap td{text-align:center;color:var(--muted)}\n"
    ".scroll{overflow-x:auto}\n"
    ".na{margin:6px 0;color:#9a3412;background:#fff7ed;border:1px solid #fed7aa;border-radius:6px;padding:6px 10px}\n"
    ".note{margin:6px 0;color:var(--muted);font-size:13px}\n"
    "footer{color:var(--muted);font-size:12px;text-align:center}\n"
    "#report-errors{white-space:pre-wrap;color:#b91c1c}\n"
    "#report-errors:empty{display:none}\n";

/* window.onerror from the first moment; the end of the body copies what it caught into #report-errors. */
static const char *const HEAD_SCRIPT =
    "<script>window.reportErrors=[];window.onerror=function(m){window.reportErrors.push(String(m));};</script>\n";
static const char *const TAIL_SCRIPT =
    "<script>\n"
    "(function(){var box=document.getElementById('report-errors');\n"
    "function show(m){box.textContent+=(box.textContent?'\\n':'')+m;}\n"
    "window.reportErrors.forEach(show);\n"
    "window.onerror=function(m){show(String(m));};\n"
    "document.body.setAttribute('data-report','ok');})();\n"
    "</script>\n";

void rp_page_begin(rp_page *p, const char *title) {
  rp_raw(p, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>");
  rp_text(p, title);
  rp_raw(p, "</title>\n<style>\n");
  rp_raw(p, STYLE);
  rp_raw(p, "</style>\n");
  rp_raw(p, HEAD_SCRIPT);
  rp_raw(p, "</head>\n<body>\n<main>\n");
}

void rp_page_end(rp_page *p, const char *from) {
  rp_raw(p, "<footer>written by tickgrad ");
  rp_text(p, tg_version());
  if (from) {
    rp_raw(p, " from the files of ");
    rp_text(p, from);
  }
  rp_raw(p, "; open it in any browser, it loads nothing else</footer>\n</main>\n<div id=\"report-errors\"></div>\n");
  rp_raw(p, TAIL_SCRIPT);
  rp_raw(p, "</body>\n</html>\n");
}

tg_status tg_report_write(const char *run_dir, FILE *log) {
  struct stat sb;
  if (!run_dir || !run_dir[0]) return tg_error(TG_ERR_INVALID, "report: no run folder");
  if (stat(run_dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
    return tg_error(TG_ERR_IO, "report: run folder '%s' does not exist or is not a folder", run_dir);
  char path[RP_PATH_MAX];
  if (!rp_path(path, sizeof path, run_dir, "report.html"))
    return tg_error(TG_ERR_IO, "report: the path of '%s' is too long", run_dir);
  rp_page p;
  memset(&p, 0, sizeof p);
  p.run = run_dir;
  char title[RP_PATH_MAX + 32];
  snprintf(title, sizeof title, "tickgrad report: %s", run_dir);
  rp_page_begin(&p, title);
  rp_section_header(&p);
  rp_section_metrics(&p);
  rp_section_eval(&p);
  rp_section_telemetry(&p);
  rp_section_backtest(&p);
  rp_page_end(&p, run_dir);
  tg_status st = p.b.oom ? tg_error(TG_ERR_NOMEM, "report: out of memory building %s", path)
                         : tg_write_atomic(path, p.b.data, p.b.len);
  tg_text_free(&p.b);
  if (st == TG_OK && log) {
    fprintf(log, "report: %s (%d chart%s)\n", path, p.charts, p.charts == 1 ? "" : "s");
    fflush(log);
  }
  return st;
}
