// SPDX-License-Identifier: MIT
/*
 * rblkctl volume create|delete|resize|list|show|allow|deny|secret: one
 * request each to the target's admin socket (docs/admin.md).  Input is
 * checked here first for a friendly message, and again by the target,
 * which is the authority.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auth.h"
#include "ctl.h"
#include "getopt_exact.h"
#include "helpers.h"
#include "rblk_proto.h"
#include "size.h"

/* Options every volume subcommand takes, plus its own. */
enum { O_SOCKET = 1000, O_JSON, O_HELP };
#define COMMON_OPTS \
	{ "socket", required_argument, NULL, O_SOCKET }, \
	{ "json", no_argument, NULL, O_JSON }, \
	{ "help", no_argument, NULL, O_HELP }

struct vol_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *usage;	/* after "rblkctl volume " */
	const char *help;
};

static const struct vol_cmd *cur;	/* for usage messages */

static int usage_err(const char *fmt, const char *arg)
{
	fprintf(stderr, "rblkctl volume %s: ", cur->name);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nusage: rblkctl volume %s\n", cur->usage);
	return 2;
}

static int show_help(void)
{
	printf("usage: rblkctl volume %s\n%s\n"
	       "common options: --socket PATH (admin socket, default %s), --json, --help\n",
	       cur->usage, cur->help, CTL_DEFAULT_SOCKET);
	return 0;
}

/* Common option handling; returns -1 to continue, else an exit status. */
static int common_opt(int c)
{
	switch (c) {
	case O_SOCKET: ctl_socket = optarg; return -1;
	case O_JSON:   ctl_json = true; return -1;
	case O_HELP:
	case 'h':      return show_help();
	default:       return usage_err("%s", "bad option");
	}
}

static int check_name(const char *what, const char *name)
{
	if (rblk_name_valid(name)) {
		fprintf(stderr, "rblkctl volume %s: invalid %s name (use 1..63 of A-Z a-z 0-9 . _ : -, not '.', '..', no leading '-')\n",
			cur->name, what);
		return 2;
	}
	return 0;
}

static int check_size(const char *s, uint64_t *out)
{
	int ret = rblk_parse_size(s, out);

	if (ret || !*out || *out % 512) {
		fprintf(stderr, "rblkctl volume %s: bad size '%s': %s\n", cur->name, s,
			ret ? rblk_size_error(ret) : "must be a positive multiple of 512 bytes");
		return 2;
	}
	return 0;
}

/* Makes a relative path absolute against the cwd (the target has another). */
static char *abs_path(const char *p)
{
	char cwd[PATH_MAX], *out;

	if (p[0] == '/')
		return strdup(p);
	if (!getcwd(cwd, sizeof(cwd)))
		return NULL;
	if (asprintf(&out, "%s/%s", cwd, p) < 0)
		return NULL;
	return out;
}

static json_object *request(const char *cmd, const char *name)
{
	json_object *r = json_object_new_object();

	json_object_object_add(r, "cmd", json_object_new_string(cmd));
	if (name)
		json_object_object_add(r, "name", json_object_new_string(name));
	return r;
}

/* Sends req; prints the JSON answer with --json.  0/1. */
static int send_req(json_object *req, json_object **rsp)
{
	int ret = ctl_request(req, rsp);

	if (!ret && ctl_json)
		ctl_print_json(*rsp);
	return ret;
}

/* An rbd volume's image, and what it is doing (volume show). */
static void print_rbd(json_object *v)
{
	json_object *r;

	if (!json_object_object_get_ex(v, "rbd", &r))
		return;
	printf("  uuid:       %s\n", ctl_jstr(v, "uuid", "-"));
	printf("  image:      %s/%s (id %s), %s, on cluster %s as %s\n",
	       ctl_jstr(r, "pool", "?"), ctl_jstr(r, "image", "?"),
	       ctl_jstr(r, "image_id", "?"),
	       ctl_jbool(r, "created_by_rblk") ? "created by rblk" : "not created by rblk",
	       ctl_jstr(r, "cluster", "?"), ctl_jstr(r, "client", "?"));
	printf("  image size: %" PRId64 " bytes", ctl_jint(r, "image_size"));
	if (ctl_jint(r, "resized_outside"))
		printf(" (resized outside rblk %" PRId64 " time(s): the volume keeps %" PRId64 " bytes until a restart)",
		       ctl_jint(r, "resized_outside"), ctl_jint(v, "size"));
	printf("\n  features:   %s\n", ctl_jstr(r, "features", "-"));
}

/* Defined in stats.c: one line of backend in-flight and latency. */
void ctl_print_backend_io(json_object *v, const char *indent);

static void print_volume(json_object *v)
{
	char sz[32];
	json_object *h;

	printf("volume %s\n", ctl_jstr(v, "name", "?"));
	printf("  size:       %" PRIu64 " bytes (%s)\n", (uint64_t)ctl_jint(v, "size"),
	       rblk_human_size((uint64_t)ctl_jint(v, "size"), sz, sizeof(sz)));
	printf("  backing:    %s %s\n", ctl_jstr(v, "type", "?"), ctl_jstr(v, "path", "-"));
	printf("  backend:    %s\n", ctl_jstr(v, "backend", "?"));
	printf("  read-only:  %s\n", ctl_jbool(v, "read_only") ? "yes" : "no");
	if (json_object_object_get_ex(v, "block_size", NULL))
		printf("  block size: %" PRId64 "\n", ctl_jint(v, "block_size"));
	if (json_object_object_get_ex(v, "flags", NULL))
		printf("  flags:      %s\n", ctl_jstr(v, "flags", "-"));
	printf("  auth:       %s%s%s\n", ctl_jbool(v, "auth") ? "secret " : "none",
	       ctl_jbool(v, "auth") ? ctl_jstr(v, "secret_file", "") : "", "");
	printf("  allow:      ");
	if (ctl_jbool(v, "allow_any_host")) {
		printf("any host\n");
	} else if (json_object_object_get_ex(v, "allow_hosts", &h) && json_object_array_length(h)) {
		for (size_t i = 0; i < json_object_array_length(h); i++)
			printf("%s%s", i ? ", " : "",
			       json_object_get_string(json_object_array_get_idx(h, i)));
		printf("\n");
	} else {
		printf("no host\n");
	}
	printf("  sessions:   %" PRId64 "\n", ctl_jint(v, "sessions"));
	print_rbd(v);
}

/* ---- subcommands ----------------------------------------------------------- */

static int cmd_create(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "size", required_argument, NULL, 's' },
		{ "path", required_argument, NULL, 'p' },
		{ "device", required_argument, NULL, 'd' },
		{ "backend", required_argument, NULL, 'b' },
		{ "ro", no_argument, NULL, 'r' },
		{ "allow-any-host", no_argument, NULL, 'A' },
		{ "rbd", required_argument, NULL, 'R' },
		{ "ceph-conf", required_argument, NULL, 'C' },
		{ "ceph-id", required_argument, NULL, 'I' },
		{ "ceph-keyring", required_argument, NULL, 'K' },
		COMMON_OPTS, { NULL, 0, NULL, 0 },
	};
	const char *size = NULL, *path = NULL, *dev = NULL, *backend = NULL;
	const char *rbd = NULL, *ceph[3] = { NULL, NULL, NULL };
	static const char *const ceph_keys[3] = { "ceph_conf", "ceph_client_id", "ceph_keyring" };
	json_object *req, *rsp;
	bool ro = false, any = false;
	uint64_t bytes = 0;
	char *ap = NULL;
	int c, ret;

	optind = 0;
	while ((c = rblk_getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 's': size = optarg; break;
		case 'p': path = optarg; break;
		case 'd': dev = optarg; break;
		case 'b': backend = optarg; break;
		case 'r': ro = true; break;
		case 'A': any = true; break;
		case 'R': rbd = optarg; break;
		case 'C': ceph[0] = optarg; break;
		case 'I': ceph[1] = optarg; break;
		case 'K': ceph[2] = optarg; break;
		default:
			if ((ret = common_opt(c)) >= 0)
				return ret;
		}
	}
	if (argc - optind != 1)
		return usage_err("%s", "give exactly one NAME");
	if ((ret = check_name("volume", argv[optind])))
		return ret;
	if (path && dev)
		return usage_err("%s", "--path and --device exclude each other");
	if (rbd && (path || dev))
		return usage_err("%s", "--rbd excludes --path and --device");
	if (!rbd && (ceph[0] || ceph[1] || ceph[2]))
		return usage_err("%s", "--ceph-conf, --ceph-id and --ceph-keyring go with --rbd");
	if (!size && !path && !dev && !rbd)
		return usage_err("%s", "--size is needed for a new volume");
	if (size && (ret = check_size(size, &bytes)))
		return ret;
	if (backend && strcmp(backend, "uring") && strcmp(backend, "aio") &&
	    strcmp(backend, "null") && !(rbd && !strcmp(backend, "rbd")))
		return usage_err("unknown backend '%s' (uring or aio; --rbd for an RBD image)", backend);
	req = request("volume.create", argv[optind]);
	if (rbd)
		json_object_object_add(req, "rbd", json_object_new_string(rbd));
	for (int i = 0; i < 3; i++) {
		if (!ceph[i])
			continue;
		ap = i == 1 ? strdup(ceph[i]) : abs_path(ceph[i]);
		if (!ap) {
			json_object_put(req);
			fprintf(stderr, "rblkctl: %s\n", strerror(errno));
			return 1;
		}
		json_object_object_add(req, ceph_keys[i], json_object_new_string(ap));
		free(ap);
		ap = NULL;
	}
	if (size)
		json_object_object_add(req, "size", json_object_new_int64((int64_t)bytes));
	if (path || dev) {
		ap = abs_path(path ? path : dev);
		if (!ap) {
			json_object_put(req);
			fprintf(stderr, "rblkctl: %s\n", strerror(errno));
			return 1;
		}
		json_object_object_add(req, path ? "path" : "device", json_object_new_string(ap));
		free(ap);
	}
	if (backend)
		json_object_object_add(req, "backend", json_object_new_string(backend));
	if (ro)
		json_object_object_add(req, "read_only", json_object_new_boolean(1));
	if (any)
		json_object_object_add(req, "allow_any_host", json_object_new_boolean(1));
	if (send_req(req, &rsp))
		return 1;
	if (!ctl_json) {
		json_object *v = NULL;
		char sz[32];

		json_object_object_get_ex(rsp, "volume", &v);
		printf("created volume %s: %s, %s %s, backend %s%s\n",
		       ctl_jstr(v, "name", argv[optind]),
		       rblk_format_size((uint64_t)ctl_jint(v, "size"), sz, sizeof(sz)),
		       ctl_jstr(v, "type", "?"), ctl_jstr(v, "path", "-"),
		       ctl_jstr(v, "backend", "?"),
		       !rbd ? "" : ctl_jbool(rsp, "created_image") ? " (new image)" : " (existing image)");
		if (ctl_jstr(rsp, "warning", NULL))
			fprintf(stderr, "rblkctl: warning: %s\n", ctl_jstr(rsp, "warning", ""));
	}
	json_object_put(rsp);
	return 0;
}

static int cmd_delete(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "force", no_argument, NULL, 'f' },
		{ "remove-file", no_argument, NULL, 'R' },
		COMMON_OPTS, { NULL, 0, NULL, 0 },
	};
	json_object *req, *rsp;
	bool force = false, remove_file = false;
	int c, ret;

	optind = 0;
	while ((c = rblk_getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		if (c == 'f')
			force = true;
		else if (c == 'R')
			remove_file = true;
		else if ((ret = common_opt(c)) >= 0)
			return ret;
	}
	if (argc - optind != 1)
		return usage_err("%s", "give exactly one NAME");
	if ((ret = check_name("volume", argv[optind])))
		return ret;
	req = request("volume.delete", argv[optind]);
	if (force)
		json_object_object_add(req, "force", json_object_new_boolean(1));
	if (remove_file)
		json_object_object_add(req, "remove_file", json_object_new_boolean(1));
	if (send_req(req, &rsp))
		return 1;
	if (!ctl_json) {
		printf("deleted volume %s", argv[optind]);
		if (ctl_jint(rsp, "disconnected"))
			printf(" (%" PRId64 " session(s) disconnected)", ctl_jint(rsp, "disconnected"));
		if (ctl_jstr(rsp, "removed_file", NULL))
			printf(", removed %s", ctl_jstr(rsp, "removed_file", ""));
		if (ctl_jstr(rsp, "kept_file", NULL))
			printf("; kept %s (%s)", ctl_jstr(rsp, "kept_file", ""),
			       ctl_jstr(rsp, "kept_reason", "?"));
		if (ctl_jstr(rsp, "removed_image", NULL))
			printf(", removed image %s", ctl_jstr(rsp, "removed_image", ""));
		if (ctl_jstr(rsp, "kept_image", NULL))
			printf(", kept image %s (rblk did not create it)", ctl_jstr(rsp, "kept_image", ""));
		printf("\n");
		if (ctl_jstr(rsp, "warning", NULL))
			fprintf(stderr, "rblkctl: warning: %s\n", ctl_jstr(rsp, "warning", ""));
	}
	json_object_put(rsp);
	return 0;
}

static int cmd_resize(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "size", required_argument, NULL, 's' },
		COMMON_OPTS, { NULL, 0, NULL, 0 },
	};
	json_object *req, *rsp;
	const char *size = NULL;
	uint64_t bytes;
	char a[32], b[32];
	int c, ret;

	optind = 0;
	while ((c = rblk_getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		if (c == 's')
			size = optarg;
		else if ((ret = common_opt(c)) >= 0)
			return ret;
	}
	if (argc - optind != 1)
		return usage_err("%s", "give exactly one NAME");
	if (!size)
		return usage_err("%s", "--size is required");
	/* "+S" grows by S: the target adds it to the size it has. */
	if ((ret = check_name("volume", argv[optind])) ||
	    (ret = check_size(size + (size[0] == '+'), &bytes)))
		return ret;
	req = request("volume.resize", argv[optind]);
	json_object_object_add(req, "size", size[0] == '+' ?
			       json_object_new_string(size) :
			       json_object_new_int64((int64_t)bytes));
	if (send_req(req, &rsp))
		return 1;
	if (!ctl_json) {
		if (json_object_object_get_ex(rsp, "old_size", NULL))
			printf("resized volume %s: %s -> %s (attached initiators are told within a second; /dev/ublkbN follows where the kernel can resize it live, Linux 6.16+)\n",
			       argv[optind],
			       rblk_format_size((uint64_t)ctl_jint(rsp, "old_size"), a, sizeof(a)),
			       rblk_format_size((uint64_t)ctl_jint(rsp, "size"), b, sizeof(b)));
		else
			printf("volume %s is already %s\n", argv[optind],
			       rblk_format_size(bytes, a, sizeof(a)));
	}
	json_object_put(rsp);
	return 0;
}

/* Commands with only NAME (and common options). */
static int name_only(int argc, char **argv, int nargs, const char **args)
{
	static const struct option lo[] = { COMMON_OPTS, { NULL, 0, NULL, 0 } };
	int c, ret;

	optind = 0;
	while ((c = rblk_getopt_long(argc, argv, "h", lo, NULL)) != -1)
		if ((ret = common_opt(c)) >= 0)
			return ret;
	if (argc - optind != nargs)
		return usage_err("%s", nargs == 0 ? "takes no arguments" :
				 nargs == 1 ? "give exactly one NAME" : "give NAME and HOST");
	for (int i = 0; i < nargs; i++) {
		args[i] = argv[optind + i];
		if ((ret = check_name(i ? "host" : "volume", args[i])))
			return ret;
	}
	return -1;
}

/* set NAME KEY=VALUE...: the target checks the keys and values. */
static int cmd_set(int argc, char **argv)
{
	static const struct option lo[] = { COMMON_OPTS, { NULL, 0, NULL, 0 } };
	json_object *req, *rsp, *set;
	const char *name;
	int c, ret;

	optind = 0;
	while ((c = rblk_getopt_long(argc, argv, "h", lo, NULL)) != -1)
		if ((ret = common_opt(c)) >= 0)
			return ret;
	if (argc - optind < 2)
		return usage_err("%s", "give NAME and at least one KEY=VALUE");
	name = argv[optind];
	if ((ret = check_name("volume", name)))
		return ret;
	set = json_object_new_object();
	for (int i = optind + 1; i < argc; i++) {
		char *eq = strchr(argv[i], '=');

		if (!eq || eq == argv[i]) {
			json_object_put(set);
			return usage_err("'%s' is not KEY=VALUE", argv[i]);
		}
		*eq = '\0';
		if (json_object_object_get_ex(set, argv[i], NULL)) {
			json_object_put(set);
			return usage_err("'%s' is given twice", argv[i]);
		}
		json_object_object_add(set, argv[i], json_object_new_string(eq + 1));
		*eq = '=';
	}
	req = request("volume.set", name);
	json_object_object_add(req, "set", set);
	if (send_req(req, &rsp))
		return 1;
	if (!ctl_json)
		printf("volume %s: %s\n", name, ctl_jbool(rsp, "changed") ?
		       "set" : "already so (nothing changed)");
	json_object_put(rsp);
	return 0;
}

static int cmd_list(int argc, char **argv)
{
	json_object *rsp, *vols;
	int ret;

	if ((ret = name_only(argc, argv, 0, NULL)) >= 0)
		return ret;
	if (send_req(request("volume.list", NULL), &rsp))
		return 1;
	if (!ctl_json && json_object_object_get_ex(rsp, "volumes", &vols)) {
		printf("%-20s %10s %-7s %-6s %-3s %-6s %8s  %s\n", "NAME", "SIZE",
		       "BACKEND", "TYPE", "RO", "AUTH", "SESSIONS", "PATH");
		for (size_t i = 0; i < json_object_array_length(vols); i++) {
			json_object *v = json_object_array_get_idx(vols, i);
			char sz[32];

			printf("%-20s %10s %-7s %-6s %-3s %-6s %8" PRId64 "  %s\n",
			       ctl_jstr(v, "name", "?"),
			       rblk_format_size((uint64_t)ctl_jint(v, "size"), sz, sizeof(sz)),
			       ctl_jstr(v, "backend", "?"), ctl_jstr(v, "type", "?"),
			       ctl_jbool(v, "read_only") ? "yes" : "no",
			       ctl_jbool(v, "auth") ? "secret" : "-",
			       ctl_jint(v, "sessions"), ctl_jstr(v, "path", "-"));
		}
	}
	json_object_put(rsp);
	return 0;
}

/* Defined in stats.c: prints one stats object as a table. */
void ctl_print_stats(json_object *stats, const char *indent);

static int cmd_show(int argc, char **argv)
{
	const char *args[1];
	json_object *rsp, *v = NULL, *sl, *st;
	int ret;

	if ((ret = name_only(argc, argv, 1, args)) >= 0)
		return ret;
	if (send_req(request("volume.show", args[0]), &rsp))
		return 1;
	if (!ctl_json && json_object_object_get_ex(rsp, "volume", &v)) {
		print_volume(v);
		printf("  logins:     %" PRId64 " (%" PRId64 " refused)\n",
		       ctl_jint(v, "logins"), ctl_jint(v, "refusals"));
		if (json_object_object_get_ex(v, "session_list", &sl))
			for (size_t i = 0; i < json_object_array_length(sl); i++) {
				json_object *s = json_object_array_get_idx(sl, i);

				printf("  session %" PRId64 ": host %s peer %s queue %" PRId64 " reactor %" PRId64 "\n",
				       ctl_jint(s, "id"), ctl_jstr(s, "host", "?"),
				       ctl_jstr(s, "peer", "?"), ctl_jint(s, "queue_id"),
				       ctl_jint(s, "reactor"));
			}
		if (json_object_object_get_ex(v, "stats", &st)) {
			printf("  counters:\n");
			ctl_print_stats(st, "    ");
		}
		ctl_print_backend_io(v, "  ");
	}
	json_object_put(rsp);
	return 0;
}

/*
 * allow|deny NAME HOST, or allow|deny NAME --any.  HOST (name, address or
 * CIDR range) is checked by the target only: the address rules live there.
 */
static int allow_deny(int argc, char **argv, const char *cmd)
{
	static const struct option lo[] = {
		{ "any", no_argument, NULL, 'a' },
		COMMON_OPTS, { NULL, 0, NULL, 0 },
	};
	bool allow = !strcmp(cmd, "volume.allow"), any = false;
	json_object *req, *rsp;
	const char *name, *host = NULL;
	int c, ret;

	optind = 0;
	while ((c = rblk_getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		if (c == 'a')
			any = true;
		else if ((ret = common_opt(c)) >= 0)
			return ret;
	}
	if (argc - optind != (any ? 1 : 2))
		return usage_err("%s", any ? "give NAME only with --any" : "give NAME and HOST (or NAME --any)");
	name = argv[optind];
	if ((ret = check_name("volume", name)))
		return ret;
	req = request(cmd, name);
	if (any) {
		json_object_object_add(req, "any", json_object_new_boolean(1));
	} else {
		host = argv[optind + 1];
		json_object_object_add(req, "host", json_object_new_string(host));
	}
	if (send_req(req, &rsp))
		return 1;
	if (!ctl_json) {
		if (!ctl_jbool(rsp, "changed") && allow)
			printf("volume %s: %s was already allowed (nothing changed)\n", name,
			       any ? "any host" : host);
		else if (!ctl_jbool(rsp, "changed"))
			printf("volume %s: %s was not allowed (nothing changed)\n", name,
			       any ? "any host" : host);
		else if (any)
			printf("volume %s: %s\n", name, allow ? "open to any host" :
			       "no longer open to any host");
		else
			printf("volume %s: host %s %s\n", name, host,
			       allow ? "allowed" : "removed from the allow list");
		if (ctl_jstr(rsp, "warning", NULL))
			fprintf(stderr, "rblkctl: warning: %s\n", ctl_jstr(rsp, "warning", ""));
	}
	json_object_put(rsp);
	return 0;
}

static int cmd_allow(int argc, char **argv)
{
	return allow_deny(argc, argv, "volume.allow");
}

static int cmd_deny(int argc, char **argv)
{
	return allow_deny(argc, argv, "volume.deny");
}

/*
 * secret NAME --file F | --generate F | --clear.  --generate writes a new
 * random secret file here first (rblkctl runs on the target's host: the
 * admin socket is local) and removes it again if the target refuses it.
 */
static int cmd_secret(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "file", required_argument, NULL, 'f' },
		{ "generate", required_argument, NULL, 'g' },
		{ "clear", no_argument, NULL, 'c' },
		COMMON_OPTS, { NULL, 0, NULL, 0 },
	};
	json_object *req, *rsp;
	const char *file = NULL, *gen = NULL;
	bool clear = false;
	char *ap = NULL, why[512];
	int c, ret;

	optind = 0;
	while ((c = rblk_getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		if (c == 'f')
			file = optarg;
		else if (c == 'g')
			gen = optarg;
		else if (c == 'c')
			clear = true;
		else if ((ret = common_opt(c)) >= 0)
			return ret;
	}
	if (argc - optind != 1)
		return usage_err("%s", "give exactly one NAME");
	if (!!file + !!gen + clear != 1)
		return usage_err("%s", "give one of --file F, --generate F or --clear");
	if ((ret = check_name("volume", argv[optind])))
		return ret;
	req = request("volume.secret", argv[optind]);
	if (clear) {
		json_object_object_add(req, "clear", json_object_new_boolean(1));
	} else {
		ap = abs_path(file ? file : gen);
		if (!ap) {
			json_object_put(req);
			fprintf(stderr, "rblkctl: %s\n", strerror(errno));
			return 1;
		}
		if (gen && (ret = rblk_auth_generate_secret(ap, why, sizeof(why)))) {
			fprintf(stderr, "rblkctl volume secret: %s\n", why);
			json_object_put(req);
			free(ap);
			return 1;
		}
		json_object_object_add(req, "file", json_object_new_string(ap));
	}
	ret = send_req(req, &rsp);
	if (ret && gen)
		unlink(ap);	/* refused: leave nothing behind */
	free(ap);
	if (ret)
		return 1;
	if (!ctl_json) {
		if (gen)
			printf("volume %s: wrote %d random bytes to %s (mode 0600); copy it to the initiators over a safe channel\n",
			       argv[optind], RBLK_SECRET_GEN_LEN, gen);
		printf("volume %s: %s\n", argv[optind],
		       clear ? "secret cleared (no authentication)" : "secret set (logins must answer the challenge)");
	}
	json_object_put(rsp);
	return 0;
}

static const struct vol_cmd vol_cmds[] = {
	{ .name = "create", .fn = cmd_create,
	  .usage = "create NAME --size S [--path P | --device DEV] [--backend uring|aio] [--ro] [--allow-any-host]\n"
		   "       rblkctl volume create NAME --rbd POOL/IMAGE [--size S] [--ceph-conf F] [--ceph-id ID]\n"
		   "                             [--ceph-keyring F] [--ro] [--allow-any-host]",
	  .help = "Creates a volume.  Without --path/--device a sparse file NAME.img is made in\n"
		  "the target's volume_dir.  Sizes: 4096, 512M, 10G, 1T (binary units).\n"
		  "--rbd exports a Ceph RBD image: an existing one as it is (a --size must\n"
		  "match it), or a new one of --size, which rblk then may resize and delete\n"
		  "(never an image it did not create).  The cluster: --ceph-conf (default\n"
		  "/etc/ceph/ceph.conf), --ceph-id (cephx user without 'client.', default\n"
		  "admin), --ceph-keyring (default: what the conf says).\n"
		  "A new volume admits no host until you allow some (volume allow), or\n"
		  "--allow-any-host opens it to every host." },
	{ .name = "delete", .fn = cmd_delete, .usage = "delete NAME [--force] [--remove-file]",
	  .help = "Deletes a volume; refused while sessions are attached unless --force, which\n"
		  "disconnects them.  The file 'volume create' made in volume_dir (recorded as\n"
		  "created_file in the config) is removed; every other store is kept: --path\n"
		  "files, devices, volumes written by hand or made by an older rblk.\n"
		  "--remove-file removes the volume's file anyway (never a device).  An RBD\n"
		  "image is removed only if rblk created it." },
	{ .name = "resize", .fn = cmd_resize, .usage = "resize NAME --size S|+S",
	  .help = "Grows a file volume, or an RBD image rblk created (never shrinks):\n"
		  "to S, or by S with +S (--size +10G).\n"
		  "Attached initiators are told the new size within a second, without a\n"
		  "new login; /dev/ublkbN grows live where the kernel can (ublk\n"
		  "UPDATE_SIZE, Linux 6.16+), else at the next attach." },
	{ .name = "list", .fn = cmd_list, .usage = "list", .help = "Lists volumes." },
	{ .name = "show", .fn = cmd_show, .usage = "show NAME",
	  .help = "Shows a volume: size, backing, backend, ACL, sessions, counters." },
	{ .name = "allow", .fn = cmd_allow, .usage = "allow NAME HOST | allow NAME --any",
	  .help = "Adds HOST to the allow list: an IP address or CIDR range (10.0.0.0/24,\n"
		  "fd00::/64) matches the connection's real address; a name matches the host\n"
		  "name the client claims, which anyone can claim.  --any opens the volume to\n"
		  "every host (allow_any_host; only while the list is empty)." },
	{ .name = "deny", .fn = cmd_deny, .usage = "deny NAME HOST | deny NAME --any",
	  .help = "Removes HOST from the allow list, or --any closes an open volume (new\n"
		  "logins; attached sessions stay).  An empty list admits no host." },
	{ .name = "set", .fn = cmd_set, .usage = "set NAME KEY=VALUE [KEY=VALUE...]",
	  .help = "Changes config keys of a running volume, all or nothing, and saves them:\n"
		  "  read_only=yes|no, direct=yes|no   reopen the volume's store: refused\n"
		  "                                    while sessions are attached\n"
		  "  allow_any_host=yes|no, secret_file=/abs/path (or secret_file= to clear)\n"
		  "                                    apply to new logins; sessions stay\n"
		  "KEY= (empty) puts the key back to its default.  Other keys are refused\n"
		  "with what to use instead (size: resize; allow_hosts: allow/deny; path,\n"
		  "backend, rbd_*: they name the store)." },
	{ .name = "secret", .fn = cmd_secret, .usage = "secret NAME --file F | --generate F | --clear",
	  .help = "Sets the volume's shared secret (file F, mode 0600, 16..1024 bytes, read by\n"
		  "the target) or clears it.  --generate F first writes a new secret to F: 32\n"
		  "random bytes (getrandom), mode 0600, never over an existing file.  Initiators\n"
		  "then need a copy of the same file.  Prefer generated secrets: anyone who\n"
		  "records one login can try guesses offline (docs/protocol.md)." },
};

static void volume_usage(FILE *f)
{
	fprintf(f, "usage: rblkctl volume SUBCOMMAND [options]   (rblkctl volume SUBCOMMAND --help)\n");
	for (size_t i = 0; i < ARRAY_SIZE(vol_cmds); i++)
		fprintf(f, "  %s\n", vol_cmds[i].usage);
	fprintf(f, "common options: --socket PATH, --json, --help\n");
}

int rblkctl_volume(int argc, char **argv)
{
	if (argc < 2) {
		volume_usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		volume_usage(stdout);
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(vol_cmds); i++) {
		if (!strcmp(argv[1], vol_cmds[i].name)) {
			cur = &vol_cmds[i];
			return vol_cmds[i].fn(argc - 1, argv + 1);
		}
	}
	fprintf(stderr, "rblkctl volume: unknown subcommand '%s'\n", argv[1]);
	volume_usage(stderr);
	return 2;
}
