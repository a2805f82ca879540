// SPDX-License-Identifier: MIT
/* /run/rblk/ublkbN.json: what is attached, served by whom (see state.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "state.h"

const char *ini_state_dir(void)
{
	const char *d = getenv("RBLK_RUN_DIR");

	return d && *d ? d : INI_STATE_DIR_DEFAULT;
}

const char *const ini_tmo_key[INI_TMO_COUNT] = {
	"keep_alive_tmo", "io_timeout", "reconnect_delay", "ctrl_loss_tmo",
	"fast_io_fail_tmo",
};
const char *const ini_tmo_opt[INI_TMO_COUNT] = {
	"--keep-alive-tmo", "--io-timeout", "--reconnect-delay",
	"--ctrl-loss-tmo", "--fast-io-fail-tmo",
};

static void state_path(char *buf, size_t len, int dev_id)
{
	snprintf(buf, len, "%s/ublkb%d.json", ini_state_dir(), dev_id);
}

static void add_paths(struct json_object *o, const struct ini_state *s)
{
	struct json_object *a = json_object_new_array();

	for (unsigned i = 0; a && i < s->npaths && i < RBLK_MAX_PATHS; i++) {
		const struct ini_path_state *p = &s->paths[i];
		struct json_object *e = json_object_new_object();

		if (!e)
			break;
		json_object_object_add(e, "target", json_object_new_string(p->spec));
		json_object_object_add(e, "state", json_object_new_string(p->state));
		json_object_object_add(e, "role", json_object_new_string(p->role));
		json_object_object_add(e, "probe", json_object_new_string(p->probe));
		json_object_object_add(e, "failures", json_object_new_int((int)p->failures));
		json_object_array_add(a, e);
	}
	json_object_object_add(o, "paths", a);
	json_object_object_add(o, "failback_delay", json_object_new_int(s->failback_s));
	json_object_object_add(o, "read_policy",
			       json_object_new_string(s->read_spread ? "spread" : "standby"));
	json_object_object_add(o, "failovers", json_object_new_int((int)s->failovers));
}

int ini_state_write(const struct ini_state *s)
{
	char path[PATH_MAX], tmp[PATH_MAX + 16];
	struct json_object *o;
	const char *text;
	int fd, ret = 0;
	size_t len;

	if (mkdir(ini_state_dir(), 0755) && errno != EEXIST)
		return -errno;
	state_path(path, sizeof(path), s->dev_id);
	snprintf(tmp, sizeof(tmp), "%s.tmp%d", path, (int)getpid());

	o = json_object_new_object();
	if (!o)
		return -ENOMEM;
	json_object_object_add(o, "device", json_object_new_int(s->dev_id));
	json_object_object_add(o, "pid", json_object_new_int(s->pid));
	json_object_object_add(o, "target", json_object_new_string(s->target));
	json_object_object_add(o, "port", json_object_new_string(s->port));
	json_object_object_add(o, "volume", json_object_new_string(s->volume));
	json_object_object_add(o, "transport", json_object_new_string(s->transport));
	json_object_object_add(o, "queues", json_object_new_int(s->queues));
	json_object_object_add(o, "depth", json_object_new_int(s->depth));
	json_object_object_add(o, "size", json_object_new_int64((int64_t)s->size));
	json_object_object_add(o, "block_size", json_object_new_int(s->block_size));
	json_object_object_add(o, "state", json_object_new_string(s->state));
	json_object_object_add(o, "state_since", json_object_new_int64(s->state_since));
	json_object_object_add(o, "reconnects", json_object_new_int(s->reconnects));
	json_object_object_add(o, "log", json_object_new_string(s->log));
	json_object_object_add(o, "started", json_object_new_int64(s->started));
	json_object_object_add(o, "recovery", json_object_new_string(s->recovery));
	json_object_object_add(o, "supervisor", json_object_new_int(s->supervisor));
	json_object_object_add(o, "recoveries", json_object_new_int(s->recoveries));
	json_object_object_add(o, "hostname", json_object_new_string(s->hostname));
	json_object_object_add(o, "secret_file", json_object_new_string(s->secret_file));
	json_object_object_add(o, "grace_ms", json_object_new_int(s->grace_ms));
	if (s->poll[0])
		json_object_object_add(o, "poll", json_object_new_string(s->poll));
	if (s->poll_us >= 0)
		json_object_object_add(o, "poll_us", json_object_new_int(s->poll_us));
	for (int i = 0; i < INI_TMO_COUNT; i++)
		if (s->tmo_s[i] != INI_TMO_UNSET)
			json_object_object_add(o, ini_tmo_key[i],
					       json_object_new_int(s->tmo_s[i]));
	add_paths(o, s);
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY);
	len = strlen(text);

	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		ret = -errno;
		goto out_put;
	}
	if (write(fd, text, len) != (ssize_t)len || write(fd, "\n", 1) != 1)
		ret = errno ? -errno : -EIO;
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret)
		unlink(tmp);
out_put:
	json_object_put(o);
	return ret;
}

int ini_state_remove(int dev_id)
{
	char path[PATH_MAX];

	state_path(path, sizeof(path), dev_id);
	return unlink(path) ? -errno : 0;
}

static void get_str(struct json_object *o, const char *key, char *dst, size_t len)
{
	struct json_object *v;

	dst[0] = 0;
	if (json_object_object_get_ex(o, key, &v) &&
	    json_object_is_type(v, json_type_string))
		snprintf(dst, len, "%s", json_object_get_string(v));
}

static int64_t get_int(struct json_object *o, const char *key, int64_t dflt)
{
	struct json_object *v;

	if (json_object_object_get_ex(o, key, &v) &&
	    json_object_is_type(v, json_type_int))
		return json_object_get_int64(v);
	return dflt;
}

static void get_paths(struct json_object *o, struct ini_state *s)
{
	struct json_object *a;
	char policy[16] = "";
	size_t n;

	s->failback_s = (int)get_int(o, "failback_delay", -1);
	s->failovers = (unsigned)get_int(o, "failovers", 0);
	get_str(o, "read_policy", policy, sizeof(policy));
	s->read_spread = !strcmp(policy, "spread");
	if (!json_object_object_get_ex(o, "paths", &a) ||
	    !json_object_is_type(a, json_type_array))
		return;
	n = json_object_array_length(a);
	for (size_t i = 0; i < n && s->npaths < RBLK_MAX_PATHS; i++) {
		struct json_object *e = json_object_array_get_idx(a, i);
		struct ini_path_state *p = &s->paths[s->npaths];

		if (!json_object_is_type(e, json_type_object))
			continue;
		get_str(e, "target", p->spec, sizeof(p->spec));
		get_str(e, "state", p->state, sizeof(p->state));
		get_str(e, "role", p->role, sizeof(p->role));
		get_str(e, "probe", p->probe, sizeof(p->probe));
		p->failures = (unsigned)get_int(e, "failures", 0);
		if (p->spec[0])
			s->npaths++;
	}
}

int ini_state_read(const char *path, struct ini_state *s)
{
	struct json_object *o;

	if (access(path, R_OK))
		return -errno;
	o = json_object_from_file(path);
	if (!o)
		return -EINVAL;
	if (!json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return -EINVAL;
	}
	memset(s, 0, sizeof(*s));
	s->dev_id = (int)get_int(o, "device", -1);
	s->pid = (pid_t)get_int(o, "pid", 0);
	get_str(o, "target", s->target, sizeof(s->target));
	get_str(o, "port", s->port, sizeof(s->port));
	get_str(o, "volume", s->volume, sizeof(s->volume));
	get_str(o, "transport", s->transport, sizeof(s->transport));
	s->queues = (unsigned)get_int(o, "queues", 0);
	s->depth = (unsigned)get_int(o, "depth", 0);
	s->size = (uint64_t)get_int(o, "size", 0);
	s->block_size = (uint32_t)get_int(o, "block_size", 0);
	get_str(o, "state", s->state, sizeof(s->state));
	s->state_since = get_int(o, "state_since", 0);
	s->reconnects = (unsigned)get_int(o, "reconnects", 0);
	get_str(o, "log", s->log, sizeof(s->log));
	s->started = get_int(o, "started", 0);
	get_str(o, "recovery", s->recovery, sizeof(s->recovery));
	s->supervisor = (pid_t)get_int(o, "supervisor", 0);
	s->recoveries = (unsigned)get_int(o, "recoveries", 0);
	get_str(o, "hostname", s->hostname, sizeof(s->hostname));
	get_str(o, "secret_file", s->secret_file, sizeof(s->secret_file));
	s->grace_ms = (int)get_int(o, "grace_ms", 0);
	get_str(o, "poll", s->poll, sizeof(s->poll));
	s->poll_us = (int)get_int(o, "poll_us", -1);
	if (s->poll_us < -1)
		s->poll_us = -1;
	for (int i = 0; i < INI_TMO_COUNT; i++) {
		int64_t v = get_int(o, ini_tmo_key[i], INI_TMO_UNSET);

		s->tmo_s[i] = v < -1 || v > INT_MAX ? INI_TMO_UNSET : (int)v;
	}
	get_paths(o, s);
	json_object_put(o);
	return s->dev_id < 0 ? -EINVAL : 0;
}

int ini_state_get(int dev_id, struct ini_state *s)
{
	char path[PATH_MAX];

	state_path(path, sizeof(path), dev_id);
	return ini_state_read(path, s);
}

static int by_dev(const void *a, const void *b)
{
	const struct ini_state *x = a, *y = b;

	return (x->dev_id > y->dev_id) - (x->dev_id < y->dev_id);
}

int ini_state_list(struct ini_state **out)
{
	struct ini_state *arr = NULL, *grown;
	char path[PATH_MAX];
	struct dirent *de;
	int n = 0, cap = 0, id;
	char tail[8];
	DIR *d;

	*out = NULL;
	d = opendir(ini_state_dir());
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		/* exactly ublkb<N>.json: temp files are not state */
		if (sscanf(de->d_name, "ublkb%d%7s", &id, tail) != 2 ||
		    strcmp(tail, ".json"))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 8;
			grown = realloc(arr, cap * sizeof(*arr));
			if (!grown) {
				free(arr);
				closedir(d);
				return -ENOMEM;
			}
			arr = grown;
		}
		snprintf(path, sizeof(path), "%s/%s", ini_state_dir(), de->d_name);
		if (ini_state_read(path, &arr[n]) == 0)
			n++;
	}
	closedir(d);
	if (n)
		qsort(arr, n, sizeof(*arr), by_dev);
	*out = arr;
	return n;
}

int ini_pid_alive(pid_t pid)
{
	char path[64], buf[256];
	const char *paren;
	int zombie = 0;
	FILE *f;

	if (pid <= 0 || (kill(pid, 0) && errno == ESRCH))
		return 0;
	/* A zombie (killed, not reaped yet) serves nothing. */
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fgets(buf, sizeof(buf), f) && (paren = strrchr(buf, ')')))
		zombie = paren[1] == ' ' && paren[2] == 'Z';
	fclose(f);
	return !zombie;
}

/* 1 when pid runs and its name starts with comm. */
static int pid_is(pid_t pid, const char *comm)
{
	char path[64], buf[64] = "";
	FILE *f;

	if (!ini_pid_alive(pid))
		return 0;
	/* A recycled pid would make us signal a stranger. */
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	return strncmp(buf, comm, strlen(comm)) == 0;
}

int ini_state_alive(const struct ini_state *s)
{
	return pid_is(s->pid, "rblk-initiator");
}

int ini_state_supervised(const struct ini_state *s)
{
	return pid_is(s->supervisor, INI_SUPERVISOR_COMM);
}
