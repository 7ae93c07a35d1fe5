/* The rolls of a continuous futures series as `tickgrad bars` and `inspect` print them. */
#include <math.h>
#include "cli/roll_report.h"
#include "data/readers/timeconv.h"

static const char *adjust_name(tg_adjust a) {
  return a == TG_ADJUST_RATIO ? "ratio" : a == TG_ADJUST_NONE ? "none" : "difference";
}

void tg_cli_print_rolls(FILE *f, const tg_roll_list *l, const char *rule, tg_adjust adjust) {
  if (l->spreads || l->options)
    fprintf(f, "  contracts   %lld spreads and %lld options dropped\n", (long long)l->spreads, (long long)l->options);
  if (l->stitched || !rule) fprintf(f, "  rolls       %d (read as stitched: contract changes)\n", l->n);
  else fprintf(f, "  rolls       %d (--roll %s, --adjust %s)\n", l->n, rule, adjust_name(adjust));
  for (int k = 0; k < l->n; k++) {
    const tg_roll *r = &l->v[k];
    char t[48], d[48], adj[48];
    if (isnan(r->adjustment)) snprintf(adj, sizeof adj, "none");
    else if (adjust == TG_ADJUST_RATIO) snprintf(adj, sizeof adj, "x%.10g", r->adjustment);
    else snprintf(adj, sizeof adj, "%+.10g", r->adjustment);
    fprintf(f, "              %s  %s -> %s  adjustment %s", tg_format_utc(r->ts, 0, t, sizeof t), r->from, r->to, adj);
    if (r->basis_day != INT64_MIN)
      fprintf(f, " (closes %.10g -> %.10g on %.10s)", r->from_close, r->to_close,
              tg_format_utc(r->basis_day, 0, d, sizeof d));
    else if (!l->stitched) fprintf(f, " (no day both traded)");
    fprintf(f, "\n");
  }
}
