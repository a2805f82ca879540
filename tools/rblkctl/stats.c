// SPDX-License-Identifier: MIT
/*
 * rblkctl stats [NAME] [--watch [SECS]] [--count N] [--json]: the target's
 * per-volume and per-session counters.  --watch prints rates over each
 * interval (differences of the monotonic counters).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "ctl.h"
#include "helpers.h"
#include "rblk_proto.h"
#include "size.h"

static const char *const ops[] = { "read", "write", "flush", "discard", "write_zeroes" };
#define N_OPS (ARRAY_SIZE(ops))

/* Upper bound (us) of the bucket holding the p-th fraction of samples. */
static uint64_t percentile_us(json_object *hist, uint64_t total, double p)
{
	uint64_t want = (uint64_t)((double)total * p + 0.5), seen = 0;
	size_t n = hist ? json_object_array_length(hist) : 0;

	if (!total)
		return 0;
	if (!want)
		want = 1;
	for (size_t b = 0; b < n; b++) {
		seen += (uint64_t)json_object_get_int64(json_object_array_get_idx(hist, b));
		if (seen >= want)
			return 1ull << (b + 1);
	}
	return 1ull << n;
}

/* FLUSH/FUA commands and the fdatasync / RWF_DSYNC work they caused. */
static void print_durability(json_object *stats, const char *indent)
{
	json_object *d;

	if (!json_object_object_get_ex(stats, "durability", &d))
		return;
	printf("%sdurability: flush %" PRId64 ", fua %" PRId64
	       ", fdatasync %" PRId64 ", dsync_writes %" PRId64 "\n", indent,
	       ctl_jint(d, "flush"), ctl_jint(d, "fua"),
	       ctl_jint(d, "fdatasync"), ctl_jint(d, "dsync_writes"));
}

/* TCP zero-copy sends; nothing when there were none (RDMA, small I/O). */
static void print_zero_copy(json_object *stats, const char *indent)
{
	json_object *z;
	char b[32];

	if (!json_object_object_get_ex(stats, "zero_copy", &z) ||
	    ctl_jint(z, "sends") <= 0)
		return;
	printf("%szero copy: sends %" PRId64 ", bytes %s, copied %" PRId64 "\n",
	       indent, ctl_jint(z, "sends"),
	       rblk_human_size((uint64_t)ctl_jint(z, "bytes"), b, sizeof(b)),
	       ctl_jint(z, "copied"));
}

void ctl_print_stats(json_object *stats, const char *indent);
void ctl_print_stats(json_object *stats, const char *indent)
{
	printf("%s%-13s %12s %12s %8s %10s %10s %10s\n", indent, "OP", "OPS", "BYTES",
	       "ERRORS", "AVG_US", "P50_US<=", "P99_US<=");
	for (size_t i = 0; i < N_OPS; i++) {
		json_object *o, *h = NULL;
		uint64_t n;
		char b[32];

		if (!json_object_object_get_ex(stats, ops[i], &o))
			continue;
		n = (uint64_t)ctl_jint(o, "ops");
		json_object_object_get_ex(o, "lat_us_log2", &h);
		printf("%s%-13s %12" PRIu64 " %12s %8" PRId64 " %10.1f %10" PRIu64 " %10" PRIu64 "\n",
		       indent, ops[i], n,
		       rblk_human_size((uint64_t)ctl_jint(o, "bytes"), b, sizeof(b)),
		       ctl_jint(o, "errors"),
		       n ? (double)ctl_jint(o, "lat_ns_sum") / (double)n / 1000.0 : 0.0,
		       percentile_us(h, n, 0.5), percentile_us(h, n, 0.99));
	}
	print_durability(stats, indent);
	print_zero_copy(stats, indent);
}

/* The volume's backend: commands at the store now, and how long the
 * store took (the "backend_io" object, all backends alike). */
void ctl_print_backend_io(json_object *v, const char *indent);
void ctl_print_backend_io(json_object *v, const char *indent)
{
	json_object *b, *h = NULL;
	uint64_t n;

	if (!json_object_object_get_ex(v, "backend_io", &b) || !b)
		return;
	n = (uint64_t)ctl_jint(b, "ops");
	json_object_object_get_ex(b, "lat_us_log2", &h);
	printf("%sbackend: in flight %" PRId64 ", %" PRIu64 " done, %" PRId64
	       " errors, avg %.1f us, p50 <= %" PRIu64 " us, p99 <= %" PRIu64
	       " us, max %.1f us\n", indent, ctl_jint(b, "in_flight"), n,
	       ctl_jint(b, "errors"),
	       n ? (double)ctl_jint(b, "lat_ns_sum") / (double)n / 1000.0 : 0.0,
	       percentile_us(h, n, 0.5), percentile_us(h, n, 0.99),
	       (double)ctl_jint(b, "lat_max_ns") / 1000.0);
}

static void print_rates(json_object *now, json_object *prev, double secs,
			const char *indent)
{
	printf("%s%-13s %10s %10s %8s\n", indent, "OP", "IOPS", "MiB/s", "ERR/s");
	for (size_t i = 0; i < N_OPS; i++) {
		json_object *a, *b = NULL;

		if (!json_object_object_get_ex(now, ops[i], &a))
			continue;
		if (prev)
			json_object_object_get_ex(prev, ops[i], &b);
		printf("%s%-13s %10.0f %10.2f %8.1f\n", indent, ops[i],
		       (double)(ctl_jint(a, "ops") - ctl_jint(b, "ops")) / secs,
		       (double)(ctl_jint(a, "bytes") - ctl_jint(b, "bytes")) / secs / 1048576.0,
		       (double)(ctl_jint(a, "errors") - ctl_jint(b, "errors")) / secs);
	}
}

/* The previous sample's stats of volume name (or NULL). */
static json_object *find_prev(json_object *prev, const char *name)
{
	json_object *vols, *st;

	if (!prev || !json_object_object_get_ex(prev, "volumes", &vols))
		return NULL;
	for (size_t i = 0; i < json_object_array_length(vols); i++) {
		json_object *v = json_object_array_get_idx(vols, i);

		if (!strcmp(ctl_jstr(v, "name", ""), name) &&
		    json_object_object_get_ex(v, "stats", &st))
			return st;
	}
	return NULL;
}

/* How often the target's limits acted since it started (target-wide;
 * docs/admin.md, "Resource limits"), keys as the target names them. */
static void print_limits(json_object *rsp)
{
	json_object *lim;

	if (!json_object_object_get_ex(rsp, "limits", &lim) ||
	    !json_object_is_type(lim, json_type_object))
		return;
	printf("limits (target-wide, since start)\n");
	json_object_object_foreach(lim, k, v)
		printf("  %-34s %12" PRId64 "\n", k, json_object_get_int64(v));
}

static void print_sample(json_object *rsp, json_object *prev, double secs,
			 bool watch)
{
	json_object *vols, *st, *ss;

	if (!json_object_object_get_ex(rsp, "volumes", &vols))
		return;
	if (!json_object_array_length(vols))
		printf("no volumes\n");
	for (size_t i = 0; i < json_object_array_length(vols); i++) {
		json_object *v = json_object_array_get_idx(vols, i);
		const char *name = ctl_jstr(v, "name", "?");

		printf("volume %s\n", name);
		if (!json_object_object_get_ex(v, "stats", &st))
			continue;
		if (watch)
			print_rates(st, find_prev(prev, name), secs, "  ");
		else
			ctl_print_stats(st, "  ");
		ctl_print_backend_io(v, "  ");
		if (watch || !json_object_object_get_ex(v, "sessions", &ss))
			continue;
		for (size_t k = 0; k < json_object_array_length(ss); k++) {
			json_object *s = json_object_array_get_idx(ss, k), *sst;

			printf("  session %" PRId64 " host %s peer %s queue %" PRId64 "\n",
			       ctl_jint(s, "id"), ctl_jstr(s, "host", "?"),
			       ctl_jstr(s, "peer", "?"), ctl_jint(s, "queue_id"));
			if (json_object_object_get_ex(s, "stats", &sst))
				ctl_print_stats(sst, "    ");
		}
	}
	if (!watch && json_object_array_length(vols) > 1 &&
	    json_object_object_get_ex(rsp, "total", &st)) {
		printf("total\n");
		ctl_print_stats(st, "  ");
	}
	if (!watch)
		print_limits(rsp);
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: rblkctl stats [NAME] [--watch [SECS]] [--count N] [--json] [--socket PATH]\n"
"  Counters of every volume (or NAME) and of each attached session: ops, bytes,\n"
"  errors per op type, mean latency, p50/p99 from a log2 latency histogram;\n"
"  FLUSH and FUA commands with the fdatasync / RWF_DSYNC writes they caused;\n"
"  the total over the volumes shown; how often the target's limits acted\n"
"  (connections refused over a cap, back-pressure waits, timeout closes).\n"
"  --watch [SECS]  print rates every SECS seconds (default 1) until interrupted\n"
"  --count N       with --watch: stop after N samples\n"
"  --json          raw JSON answer (one object per sample)\n");
}

int rblkctl_stats(int argc, char **argv)
{
	const char *name = NULL;
	double interval = 0, t_prev = 0;
	long count = 0, n = 0;
	json_object *prev = NULL;
	bool watch = false;
	int i = 1, g;

	while (i < argc) {
		const char *a = argv[i];
		char *end;

		g = ctl_global_opt(argc, argv, &i);
		if (g < 0)
			return 2;
		if (g)
			continue;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(a, "--watch") || !strncmp(a, "--watch=", 8)) {
			const char *v = a[7] == '=' ? a + 8 : NULL;

			watch = true;
			interval = 1;
			i++;
			/* Optional value: "--watch 2" or "--watch=2". */
			if (!v && i < argc && argv[i][0] >= '0' && argv[i][0] <= '9')
				v = argv[i++];
			if (v) {
				interval = strtod(v, &end);
				if (*end || interval < 0.1 || interval > 3600) {
					fprintf(stderr, "rblkctl stats: --watch %s: want seconds 0.1..3600\n", v);
					return 2;
				}
			}
			continue;
		}
		if (!strcmp(a, "--count")) {
			if (i + 1 >= argc) {
				fprintf(stderr, "rblkctl stats: --count needs N\n");
				return 2;
			}
			count = strtol(argv[i + 1], &end, 10);
			if (*end || count <= 0) {
				fprintf(stderr, "rblkctl stats: --count %s: want a positive number\n", argv[i + 1]);
				return 2;
			}
			i += 2;
			continue;
		}
		if (a[0] == '-') {
			fprintf(stderr, "rblkctl stats: unknown option %s\n", a);
			usage(stderr);
			return 2;
		}
		if (name) {
			fprintf(stderr, "rblkctl stats: give at most one volume NAME\n");
			return 2;
		}
		if (rblk_name_valid(a)) {
			fprintf(stderr, "rblkctl stats: invalid volume name\n");
			return 2;
		}
		name = a;
		i++;
	}
	for (;;) {
		json_object *req = json_object_new_object(), *rsp;
		double t = rblk_now_s();

		json_object_object_add(req, "cmd", json_object_new_string("stats"));
		if (name)
			json_object_object_add(req, "name", json_object_new_string(name));
		if (ctl_request(req, &rsp)) {
			json_object_put(prev);
			return 1;
		}
		if (ctl_json) {
			printf("%s\n", json_object_to_json_string_ext(rsp, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
		} else if (!watch) {
			print_sample(rsp, NULL, 0, false);
		} else if (prev) {
			time_t wall = time(NULL);
			char ts[32];

			strftime(ts, sizeof(ts), "%H:%M:%S", localtime(&wall));
			printf("--- %s (%.1f s)\n", ts, t - t_prev);
			print_sample(rsp, prev, t - t_prev, true);
		}
		fflush(stdout);
		json_object_put(prev);
		prev = rsp;
		t_prev = t;
		n++;
		if (!watch || (count && n >= count + (ctl_json ? 0 : 1)))
			break;
		usleep((useconds_t)(interval * 1e6));
	}
	json_object_put(prev);
	return 0;
}
