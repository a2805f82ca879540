// SPDX-License-Identifier: MIT
/* rblkctl: admin socket client and global options (see ctl.h). */
#include "clock.h"
#include "ctl.h"
#include "helpers.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define CTL_TIMEOUT_MS	10000
#define CTL_MAX_RSP	(16u << 20)

const char *ctl_socket;
bool ctl_json;

int ctl_global_opt(int argc, char **argv, int *i)
{
	const char *a = argv[*i];

	if (!strcmp(a, "--json")) {
		ctl_json = true;
		(*i)++;
		return 1;
	}
	if (!strncmp(a, "--socket=", 9)) {
		ctl_socket = a + 9;
		(*i)++;
		return 1;
	}
	if (!strcmp(a, "--socket")) {
		if (*i + 1 >= argc) {
			fprintf(stderr, "rblkctl: --socket needs a PATH\n");
			return -1;
		}
		ctl_socket = argv[*i + 1];
		*i += 2;
		return 1;
	}
	return 0;
}

static const char *socket_path(void)
{
	const char *env = getenv("RBLK_ADMIN_SOCKET");

	if (ctl_socket)
		return ctl_socket;
	return env && *env ? env : CTL_DEFAULT_SOCKET;
}

static int connect_admin(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "rblkctl: socket path too long: %s\n", path);
		return -1;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fprintf(stderr, "rblkctl: socket: %s\n", strerror(errno));
		return -1;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;

		fprintf(stderr, "rblkctl: cannot reach rblk-target at %s: %s%s\n",
			path, strerror(e),
			e == EACCES ? " (the admin socket is root only)" :
			e == ENOENT || e == ECONNREFUSED ? " (is rblk-target running? --socket PATH)" : "");
		close(fd);
		return -1;
	}
	return fd;
}

/* Reads one line (the answer) within the deadline; malloc'd or NULL. */
static char *recv_line(int fd, int64_t deadline)
{
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap), *nl;

	while (buf) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int left = (int)(deadline - rblk_now_ms());
		ssize_t n;

		if (left <= 0 || poll(&p, 1, left) <= 0) {
			fprintf(stderr, "rblkctl: no answer from rblk-target within %d s\n",
				CTL_TIMEOUT_MS / 1000);
			break;
		}
		if (len + 4096 > cap) {
			char *nb;

			if (cap >= CTL_MAX_RSP)
				break;
			nb = realloc(buf, cap * 2);
			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
		n = recv(fd, buf + len, cap - len - 1, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			fprintf(stderr, "rblkctl: rblk-target closed the admin connection%s\n",
				n < 0 ? strerror(errno) : "");
			break;
		}
		len += n;
		buf[len] = '\0';
		nl = memchr(buf, '\n', len);
		if (nl) {
			*nl = '\0';
			return buf;
		}
	}
	free(buf);
	return NULL;
}

int ctl_request(json_object *req, json_object **rsp)
{
	const char *text = json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN);
	json_object *o = NULL, *ok;
	char *line = NULL;
	int fd, ret = 1;

	*rsp = NULL;
	fd = connect_admin(socket_path());
	if (fd < 0)
		goto out_put;
	if (rblk_send_all(fd, text, strlen(text)) || rblk_send_all(fd, "\n", 1)) {
		fprintf(stderr, "rblkctl: sending to rblk-target: %s\n", strerror(errno));
		goto out_close;
	}
	line = recv_line(fd, rblk_now_ms() + CTL_TIMEOUT_MS);
	if (!line)
		goto out_close;
	o = json_tokener_parse(line);
	if (!o || !json_object_object_get_ex(o, "ok", &ok)) {
		fprintf(stderr, "rblkctl: malformed answer from rblk-target\n");
		goto out_close;
	}
	if (!json_object_get_boolean(ok)) {
		if (ctl_json)
			ctl_print_json(o);
		fprintf(stderr, "rblkctl: %s\n", ctl_jstr(o, "error", "request refused"));
		goto out_close;
	}
	*rsp = o;
	o = NULL;
	ret = 0;
out_close:
	close(fd);
out_put:
	json_object_put(o);
	free(line);
	json_object_put(req);
	return ret;
}

void ctl_print_json(json_object *o)
{
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE |
						      JSON_C_TO_STRING_SPACED));
}

const char *ctl_jstr(json_object *o, const char *key, const char *dflt)
{
	json_object *j;

	if (!o || !json_object_object_get_ex(o, key, &j) ||
	    !json_object_is_type(j, json_type_string))
		return dflt;
	return json_object_get_string(j);
}

int64_t ctl_jint(json_object *o, const char *key)
{
	json_object *j;

	if (!o || !json_object_object_get_ex(o, key, &j))
		return 0;
	return json_object_get_int64(j);
}

bool ctl_jbool(json_object *o, const char *key)
{
	json_object *j;

	if (!o || !json_object_object_get_ex(o, key, &j))
		return false;
	return json_object_get_boolean(j);
}

int ctl_no_args(int argc, char **argv, const char *cmd, void (*usage)(FILE *))
{
	int i = 1, g;

	while (i < argc) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		}
		g = ctl_global_opt(argc, argv, &i);
		if (g < 0)
			return 2;
		if (!g) {
			fprintf(stderr, "rblkctl %s: unexpected argument '%s'\n", cmd, argv[i]);
			usage(stderr);
			return 2;
		}
	}
	return -1;
}
