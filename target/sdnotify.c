// SPDX-License-Identifier: MIT
/*
 * The sd_notify datagram protocol, written here instead of linking
 * libsystemd (docs/target.md, "systemd"): $NOTIFY_SOCKET is the path of a
 * Unix datagram socket, or "@name" for one in the abstract namespace; the
 * message is the state text itself.  No credentials or fds are passed, so
 * this is a socket, a sendto and a close.
 */
#include "sdnotify.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* Fills *sa from $NOTIFY_SOCKET; returns the address length or -errno. */
static int notify_addr(const char *name, struct sockaddr_un *sa)
{
	size_t len = strlen(name);

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (name[0] != '/' && name[0] != '@')
		return -EAFNOSUPPORT;	/* vsock: and the like: not ours */
	if (len > sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	memcpy(sa->sun_path, name, len);
	if (name[0] == '@')
		sa->sun_path[0] = '\0';	/* abstract: no NUL terminator counted */
	else if (len == sizeof(sa->sun_path))
		return -ENAMETOOLONG;	/* a path needs room for its NUL */
	else
		len++;
	return (int)(offsetof(struct sockaddr_un, sun_path) + len);
}

int tgt_sd_notify(const char *state)
{
	const char *name = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa;
	size_t len = strlen(state);
	ssize_t n;
	int fd, alen, ret;

	if (!name || !name[0])
		return 0;
	alen = notify_addr(name, &sa);
	if (alen < 0)
		return alen;
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	do {
		n = sendto(fd, state, len, MSG_NOSIGNAL,
			   (const struct sockaddr *)&sa, (socklen_t)alen);
	} while (n < 0 && errno == EINTR);
	ret = n < 0 ? -errno : (size_t)n == len ? 1 : -EMSGSIZE;
	close(fd);
	return ret;
}
