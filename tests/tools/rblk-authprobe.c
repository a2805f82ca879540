// SPDX-License-Identifier: MIT
/*
 * Authentication attacks against a real target over TCP, one per run:
 *
 *   rblk-authprobe HOST PORT CASE SECRET_VOL OTHER_VOL SECRET_FILE
 *
 *   switch-volume  challenged for SECRET_VOL, answer naming OTHER_VOL (an
 *                  open volume) with a valid MAC over its fields
 *   switch-host    answer with another host name (valid MAC)
 *   switch-depth   answer with another queue depth (valid MAC)
 *   no-ini-nonce   valid MAC_I but no initiator nonce
 *   target-proof   the honest exchange: the OK must carry a MAC_T that
 *                  verifies against the secret
 *
 * Prints what came back and "PASS CASE" / "FAIL CASE"; exit 0 when the
 * target answered as docs/protocol.md demands (AUTH_FAILED and a closed
 * connection for the attacks), 1 otherwise, 2 for usage errors.
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "auth.h"
#include "rblk_proto.h"

static int dial(const char *host, const char *port)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res;
	int fd;

	if (getaddrinfo(host, port, &hints, &res))
		return -1;
	fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) < 0) {
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	return fd;
}

static int recv_exact(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, 10000) <= 0)
			return -ETIMEDOUT;
		n = recv(fd, (uint8_t *)buf + got, len - got, 0);
		if (n <= 0)
			return n ? -errno : -ECONNRESET;
		got += (size_t)n;
	}
	return 0;
}

/* One LOGIN, one LOGIN_RSP.  0 or -errno. */
static int round_trip(int fd, const struct rblk_login *l,
		      struct rblk_login_rsp *rsp)
{
	uint8_t out[sizeof(struct rblk_wire_login)];
	uint8_t in[sizeof(struct rblk_wire_login_rsp)];
	size_t n = rblk_encode_login(out, l);

	if (send(fd, out, n, MSG_NOSIGNAL) != (ssize_t)n)
		return -EIO;
	if (recv_exact(fd, in, sizeof(in)))
		return -ECONNRESET;
	return rblk_decode_login_rsp(in, sizeof(in), rsp) == RBLK_S_OK ? 0 : -EPROTO;
}

/* After a refusal the target must hang up. */
static bool closed_soon(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char c;

	return poll(&p, 1, 5000) == 1 && recv(fd, &c, 1, 0) == 0;
}

static void mklogin(struct rblk_login *l, const char *vol, const char *host)
{
	memset(l, 0, sizeof(*l));
	l->queue_depth = 4;
	strcpy(l->volume, vol);
	strcpy(l->host, host);
}

int main(int argc, char **argv)
{
	const char *cs, *svol, *ovol;
	struct rblk_login_rsp rsp;
	struct rblk_secret key;
	struct rblk_login l;
	uint8_t nt[RBLK_NONCE_LEN];
	char err[256];
	bool ok = false;
	int fd;

	if (argc != 7) {
		fprintf(stderr, "usage: rblk-authprobe HOST PORT CASE SECRET_VOL OTHER_VOL SECRET_FILE\n");
		return 2;
	}
	cs = argv[3];
	svol = argv[4];
	ovol = argv[5];
	if (strlen(svol) >= RBLK_NAME_MAX || strlen(ovol) >= RBLK_NAME_MAX) {
		fprintf(stderr, "rblk-authprobe: volume name too long\n");
		return 2;
	}
	if (rblk_auth_load_secret(argv[6], &key, err, sizeof(err))) {
		fprintf(stderr, "rblk-authprobe: %s\n", err);
		return 2;
	}
	fd = dial(argv[1], argv[2]);
	if (fd < 0) {
		fprintf(stderr, "rblk-authprobe: cannot connect\n");
		return 1;
	}
	mklogin(&l, svol, "probe");
	if (round_trip(fd, &l, &rsp) || rsp.status != RBLK_S_AUTH_REQUIRED) {
		printf("no challenge for %s (status %s)\n", svol, rblk_status_str(rsp.status));
		goto out;
	}
	memcpy(nt, rsp.auth, sizeof(nt));
	if (!strcmp(cs, "switch-volume"))
		mklogin(&l, ovol, "probe");
	else if (!strcmp(cs, "switch-host"))
		mklogin(&l, svol, "probe2");
	else if (!strcmp(cs, "switch-depth"))
		l.queue_depth = 8;
	else if (strcmp(cs, "no-ini-nonce") && strcmp(cs, "target-proof")) {
		fprintf(stderr, "rblk-authprobe: unknown case %s\n", cs);
		close(fd);
		return 2;
	}
	if (strcmp(cs, "no-ini-nonce"))
		rblk_auth_nonce(l.ini_nonce);
	rblk_auth_mac(&key, RBLK_AUTH_INITIATOR, nt, l.ini_nonce, l.volume,
		      l.host, l.auth_mac);
	l.has_mac = 1;
	if (round_trip(fd, &l, &rsp)) {
		printf("no answer to the second LOGIN\n");
		goto out;
	}
	printf("second LOGIN (%s): %s\n", cs, rblk_status_str(rsp.status));
	if (!strcmp(cs, "target-proof")) {
		ok = rsp.status == RBLK_S_OK &&
		     !rblk_auth_verify(&key, RBLK_AUTH_TARGET, nt, l.ini_nonce,
				       l.volume, l.host, rsp.auth);
		printf("target proof: %s\n", ok ? "verifies" : "WRONG");
	} else {
		ok = rsp.status == RBLK_S_AUTH_FAILED && closed_soon(fd);
		printf("connection %s\n", ok ? "closed" : "not closed as required");
	}
out:
	close(fd);
	rblk_auth_clear_secret(&key);
	printf("%s %s\n", ok ? "PASS" : "FAIL", cs);
	return ok ? 0 : 1;
}
