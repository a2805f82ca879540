// SPDX-License-Identifier: MIT
/*
 * Admin socket server: one thread polls the listening socket, up to
 * ADMIN_MAX_CLIENTS connections and a stop eventfd.  Requests are handled
 * one at a time on this thread, so handlers never race each other and the
 * persisted config has exactly one writer.
 */
#include "admin_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"

int tgt_admin_create(struct tgt_admin **ap, const struct tgt_admin_params *p,
		     char *err, size_t errlen)
{
	const char *sock = p->socket_path;
	struct tgt_admin *a;
	char *text;
	int ret;

	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->listen_fd = -1;
	a->stop_efd = -1;
	a->reload_efd = -1;
	a->start_ms = rblk_now_ms();
	for (int i = 0; i < ADMIN_MAX_CLIENTS; i++)
		a->clients[i].fd = -1;
	/* Deep copy through the formatter: the admin thread owns its config. */
	text = tgt_config_format(p->cfg);
	if (!text) {
		ret = -ENOMEM;
		goto out_free;
	}
	ret = tgt_config_parse(text, "<admin copy>", &a->cfg, err, errlen);
	free(text);
	if (ret)
		goto out_free;
	if (!sock)
		sock = a->cfg.admin_socket ? a->cfg.admin_socket
					   : TGT_ADMIN_DEFAULT_SOCKET;
	a->socket_path = strdup(sock);
	a->volume_dir = strdup(a->cfg.volume_dir ? a->cfg.volume_dir
						 : TGT_ADMIN_DEFAULT_VOLUME_DIR);
	a->config_path = p->config_path ? strdup(p->config_path) : NULL;
	if (!a->socket_path || !a->volume_dir ||
	    (p->config_path && !a->config_path)) {
		ret = -ENOMEM;
		goto out_free_cfg;
	}
	if (strlen(a->socket_path) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
		snprintf(err, errlen, "admin socket path too long: %s", a->socket_path);
		ret = -ENAMETOOLONG;
		goto out_free_cfg;
	}
	/* What the file held when it was read: the first write checks it. */
	tgt_admin_digest(a, p->config_text ? p->config_text : "");
	*ap = a;
	return 0;

out_free_cfg:
	tgt_config_free(&a->cfg);
	free(a->socket_path);
	free(a->volume_dir);
	free(a->config_path);
out_free:
	free(a);
	if (ret == -ENOMEM)
		snprintf(err, errlen, "admin: out of memory");
	return ret;
}

const char *tgt_admin_socket_path(const struct tgt_admin *a)
{
	return a->socket_path;
}

static void client_drop(struct admin_client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c->buf);
	c->fd = -1;
	c->buf = NULL;
	c->len = 0;
}

static void stop_thread(struct tgt_admin *a)
{
	uint64_t one = 1;

	if (!a->running)
		return;
	if (write(a->stop_efd, &one, sizeof(one)) < 0)
		rblk_err("admin: cannot signal stop: %s", strerror(errno));
	pthread_join(a->thread, NULL);
	a->running = false;
}

void tgt_admin_destroy(struct tgt_admin *a)
{
	if (!a)
		return;
	stop_thread(a);
	for (int i = 0; i < ADMIN_MAX_CLIENTS; i++)
		client_drop(&a->clients[i]);
	if (a->listen_fd >= 0) {
		close(a->listen_fd);
		unlink(a->socket_path);
	}
	if (a->stop_efd >= 0)
		close(a->stop_efd);
	if (a->reload_efd >= 0)
		close(a->reload_efd);
	tgt_config_free(&a->cfg);
	free(a->socket_path);
	free(a->volume_dir);
	free(a->config_path);
	free(a);
}

/* ---- request handling ---------------------------------------------------- */

static const char *errno_name(int e)
{
	switch (e) {
	case ENOENT:	return "ENOENT";
	case EEXIST:	return "EEXIST";
	case EINVAL:	return "EINVAL";
	case EBUSY:	return "EBUSY";
	case EPERM:	return "EPERM";
	case EACCES:	return "EACCES";
	case ENOMEM:	return "ENOMEM";
	case ENOSPC:	return "ENOSPC";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case ERANGE:	return "ERANGE";
	case E2BIG:	return "E2BIG";
	case ENOTDIR:	return "ENOTDIR";
	case ESTALE:	return "ESTALE";
	case EIO:	return "EIO";
	default:	return "EIO";
	}
}

static char *error_line(int e, const char *msg)
{
	json_object *o = json_object_new_object();
	char *s;

	if (!o)
		return NULL;
	json_object_object_add(o, "ok", json_object_new_boolean(0));
	json_object_object_add(o, "errno", json_object_new_string(errno_name(e)));
	json_object_object_add(o, "error", json_object_new_string(msg));
	s = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	return s;
}

char *tgt_admin_handle(struct tgt_admin *a, const char *line, size_t len)
{
	const struct tgt_admin_cmd *cmd;
	json_tokener *tok;
	json_object *req, *rsp, *jcmd;
	char err[1024] = "";
	char *out;
	int ret;

	tok = json_tokener_new();
	if (!tok)
		return NULL;
	req = json_tokener_parse_ex(tok, line, (int)len);
	if (!req || json_tokener_get_error(tok) != json_tokener_success ||
	    tok->char_offset != (int)len) {
		json_tokener_free(tok);
		json_object_put(req);
		return error_line(EINVAL, "request is not one JSON object");
	}
	json_tokener_free(tok);
	if (!json_object_is_type(req, json_type_object) ||
	    !json_object_object_get_ex(req, "cmd", &jcmd) ||
	    !json_object_is_type(jcmd, json_type_string)) {
		json_object_put(req);
		return error_line(EINVAL, "request lacks a string \"cmd\"");
	}
	cmd = tgt_admin_cmd_find(json_object_get_string(jcmd));
	if (!cmd) {
		snprintf(err, sizeof(err), "unknown cmd '%.64s' (have: %s)",
			 json_object_get_string(jcmd), tgt_admin_cmd_names());
		json_object_put(req);
		return error_line(EINVAL, err);
	}
	RBLK_DBG(RBLK_DBG_CTL, "admin: %s", cmd->name);
	rsp = json_object_new_object();
	if (!rsp) {
		json_object_put(req);
		return NULL;
	}
	json_object_object_add(rsp, "ok", json_object_new_boolean(1));
	ret = cmd->fn(a, req, rsp, err, sizeof(err));
	json_object_put(req);
	if (ret) {
		json_object_put(rsp);
		if (!err[0])
			snprintf(err, sizeof(err), "%s", strerror(-ret));
		rblk_info("admin: %s refused: %s", cmd->name, err);
		return error_line(-ret, err);
	}
	out = strdup(json_object_to_json_string_ext(rsp, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(rsp);
	return out;
}

/* ---- socket -------------------------------------------------------------- */

static int send_line(int fd, const char *s)
{
	size_t len = strlen(s);
	struct iovec iov[2] = {
		{ .iov_base = (void *)s, .iov_len = len },
		{ .iov_base = "\n", .iov_len = 1 },
	};
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };
	size_t left = len + 1;

	while (left) {
		ssize_t n = sendmsg(fd, &mh, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		left -= n;
		while (n > 0 && mh.msg_iovlen) {
			if ((size_t)n >= mh.msg_iov->iov_len) {
				n -= mh.msg_iov->iov_len;
				mh.msg_iov++;
				mh.msg_iovlen--;
			} else {
				mh.msg_iov->iov_base = (char *)mh.msg_iov->iov_base + n;
				mh.msg_iov->iov_len -= n;
				n = 0;
			}
		}
	}
	return 0;
}

/* Reads what is there; handles every complete line.  <0: drop client. */
static int client_input(struct tgt_admin *a, struct admin_client *c)
{
	char tmp[4096];
	ssize_t n;
	char *nl;

	n = recv(c->fd, tmp, sizeof(tmp), MSG_DONTWAIT);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	if (n <= 0)
		return -1;
	if (c->len + n > TGT_ADMIN_MAX_LINE) {
		char *e = error_line(E2BIG, "request line longer than 64 KiB");

		if (e)
			send_line(c->fd, e);
		free(e);
		return -1;
	}
	if (!c->buf) {
		c->buf = malloc(TGT_ADMIN_MAX_LINE + 1);
		if (!c->buf)
			return -1;
	}
	memcpy(c->buf + c->len, tmp, n);
	c->len += n;
	while ((nl = memchr(c->buf, '\n', c->len))) {
		size_t ll = nl - c->buf;
		char *rsp;

		rsp = tgt_admin_handle(a, c->buf, ll);
		if (!rsp || send_line(c->fd, rsp)) {
			free(rsp);
			return -1;
		}
		free(rsp);
		memmove(c->buf, nl + 1, c->len - ll - 1);
		c->len -= ll + 1;
	}
	return 0;
}

static void accept_client(struct tgt_admin *a)
{
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	struct timeval tv = { .tv_sec = 5 };
	int fd, i;

	fd = accept4(a->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return;
	/* The 0600 socket already keeps others out; the credential check is
	 * the second lock in case someone loosened the mode. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0 ||
	    (cred.uid != 0 && cred.uid != geteuid())) {
		char *e = error_line(EACCES, "admin socket: permission denied (root only)");

		rblk_warn("admin: refused connection from uid %d", (int)cred.uid);
		if (e) {
			send_line(fd, e);
			free(e);
		}
		close(fd);
		return;
	}
	for (i = 0; i < ADMIN_MAX_CLIENTS && a->clients[i].fd >= 0; i++)
		;
	if (i == ADMIN_MAX_CLIENTS) {
		char *e = error_line(EBUSY, "too many admin connections");

		if (e) {
			send_line(fd, e);
			free(e);
		}
		close(fd);
		return;
	}
	/* Blocking sends with a bound: a stuck rblkctl cannot wedge us. */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	a->clients[i].fd = fd;
}

static void *admin_thread(void *arg)
{
	struct tgt_admin *a = arg;
	struct pollfd pfd[ADMIN_MAX_CLIENTS + 3];
	int map[ADMIN_MAX_CLIENTS + 3];
	uint64_t v;

	for (;;) {
		int n = 0;

		pfd[n++] = (struct pollfd){ .fd = a->stop_efd, .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = a->listen_fd, .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = a->reload_efd, .events = POLLIN };
		for (int i = 0; i < ADMIN_MAX_CLIENTS; i++) {
			if (a->clients[i].fd < 0)
				continue;
			map[n] = i;
			pfd[n++] = (struct pollfd){ .fd = a->clients[i].fd,
						    .events = POLLIN };
		}
		if (poll(pfd, n, -1) < 0) {
			if (errno == EINTR)
				continue;
			rblk_err("admin: poll: %s", strerror(errno));
			break;
		}
		if (pfd[0].revents)
			break;
		if (pfd[1].revents & POLLIN)
			accept_client(a);
		/* Between requests, like any other change of the config. */
		if ((pfd[2].revents & POLLIN) &&
		    read(a->reload_efd, &v, sizeof(v)) == sizeof(v))
			tgt_admin_reload_signal(a);
		for (int k = 3; k < n; k++) {
			struct admin_client *c = &a->clients[map[k]];

			if (!pfd[k].revents)
				continue;
			if (client_input(a, c) < 0)
				client_drop(c);
		}
	}
	return NULL;
}

static int mkdir_parent(const char *path)
{
	char dir[PATH_MAX];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

int tgt_admin_start(struct tgt_admin *a, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	mode_t old;
	int fd, ret;

	ret = mkdir_parent(a->socket_path);
	if (ret) {
		snprintf(err, errlen, "admin socket %s: creating its directory: %s",
			 a->socket_path, strerror(-ret));
		return ret;
	}
	strcpy(sa.sun_path, a->socket_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	/* Is another daemon serving it?  Then refuse; else it is stale. */
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		close(fd);
		snprintf(err, errlen, "admin socket %s: another rblk-target is listening on it",
			 a->socket_path);
		return -EADDRINUSE;
	}
	close(fd);
	/* Only ever remove a stale *socket*: a typo in admin_socket must not
	 * delete a file that happens to be there. */
	if (lstat(a->socket_path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			snprintf(err, errlen, "admin socket %s: exists and is not a socket; refusing to replace it",
				 a->socket_path);
			return -EEXIST;
		}
		unlink(a->socket_path);
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	/* umask so the socket never exists with a looser mode, even briefly. */
	old = umask(0177);
	ret = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (ret < 0 || chmod(a->socket_path, 0600) < 0 || listen(fd, 16) < 0) {
		ret = -errno;
		snprintf(err, errlen, "admin socket %s: %s", a->socket_path,
			 strerror(-ret));
		close(fd);
		return ret;
	}
	a->listen_fd = fd;
	a->stop_efd = eventfd(0, EFD_CLOEXEC);
	a->reload_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (a->stop_efd < 0 || a->reload_efd < 0) {
		ret = -errno;
		snprintf(err, errlen, "admin: eventfd: %s", strerror(-ret));
		return ret;
	}
	ret = -pthread_create(&a->thread, NULL, admin_thread, a);
	if (ret) {
		snprintf(err, errlen, "admin: thread: %s", strerror(-ret));
		return ret;
	}
	a->running = true;
	rblk_info("admin socket listening on %s", a->socket_path);
	return 0;
}

void tgt_admin_request_reload(struct tgt_admin *a)
{
	uint64_t one = 1;

	if (!a || a->reload_efd < 0 || write(a->reload_efd, &one, sizeof(one)) < 0)
		rblk_err("SIGHUP: cannot ask for a config reload: %s",
			 a && a->reload_efd >= 0 ? strerror(errno) : "admin socket not running");
}

int tgt_admin_check(const char *socket_path, char *err, size_t errlen)
{
	struct stat st;

	if (strlen(socket_path) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
		snprintf(err, errlen, "admin socket path too long: %s", socket_path);
		return -ENAMETOOLONG;
	}
	/* What tgt_admin_start refuses; a live socket is the running target. */
	if (lstat(socket_path, &st) == 0 && !S_ISSOCK(st.st_mode)) {
		snprintf(err, errlen, "admin socket %s: exists and is not a socket; a start would refuse to replace it",
			 socket_path);
		return -EEXIST;
	}
	return 0;
}
