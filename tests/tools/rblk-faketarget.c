// SPDX-License-Identifier: MIT
/*
 * A tiny impostor target for the initiator's side of mutual
 * authentication.  It serves LOGIN only, on 127.0.0.1:PORT, until killed:
 *
 *   rblk-faketarget PORT MODE SECRET_FILE
 *
 *   good          challenge, check the initiator's MAC, answer OK with
 *                 the right target proof (shows the fake is otherwise a
 *                 target the client accepts)
 *   bad-proof     the same with one bit of the proof flipped (a target
 *                 with another secret, or a relay guessing)
 *   no-proof      challenge, then OK without any proof
 *   no-challenge  OK at once, no challenge at all (the cheapest impostor)
 *
 * It prints "listening" once ready and one line per LOGIN it answered.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "auth.h"
#include "rblk_proto.h"

enum mode { M_GOOD, M_BAD_PROOF, M_NO_PROOF, M_NO_CHALLENGE };

static int recv_exact(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = recv(fd, (uint8_t *)buf + got, len - got, 0);

		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}

static int recv_login(int fd, struct rblk_login *l)
{
	uint8_t buf[sizeof(struct rblk_wire_login)];

	if (recv_exact(fd, buf, sizeof(buf)))
		return -1;
	return rblk_decode_login(buf, sizeof(buf), l) == RBLK_S_OK ? 0 : -1;
}

static void send_rsp(int fd, const struct rblk_login_rsp *r)
{
	uint8_t buf[sizeof(struct rblk_wire_login_rsp)];
	size_t n = rblk_encode_login_rsp(buf, r);

	if (send(fd, buf, n, MSG_NOSIGNAL) != (ssize_t)n)
		perror("send");
}

/* One connection: the LOGIN exchange of the chosen mode, then wait for
 * the client to hang up (it should, on every mode but good). */
static void serve(int fd, enum mode m, const struct rblk_secret *key)
{
	struct rblk_login_rsp ok = {
		.status = RBLK_S_OK, .queue_depth = 4, .size = 1 << 20,
		.block_size = 512, .max_io = 1 << 20, .inline_size = 4096,
		.max_sge = 1, .session_id = 7,
	};
	struct rblk_login_rsp chal = { .status = RBLK_S_AUTH_REQUIRED };
	uint8_t nt[RBLK_NONCE_LEN];
	struct rblk_login l;
	char c;

	if (recv_login(fd, &l))
		return;
	if (m != M_NO_CHALLENGE) {
		rblk_auth_nonce(nt);
		memcpy(chal.auth, nt, sizeof(nt));
		send_rsp(fd, &chal);
		if (recv_login(fd, &l))
			return;
		if (rblk_auth_verify(key, RBLK_AUTH_INITIATOR, nt, l.ini_nonce,
				     l.volume, l.host, l.auth_mac)) {
			struct rblk_login_rsp no = { .status = RBLK_S_AUTH_FAILED };

			printf("initiator MAC wrong\n");
			send_rsp(fd, &no);
			return;
		}
		if (m != M_NO_PROOF)
			rblk_auth_mac(key, RBLK_AUTH_TARGET, nt, l.ini_nonce,
				      l.volume, l.host, ok.auth);
		if (m == M_BAD_PROOF)
			ok.auth[0] ^= 1;
	}
	/* Logged before sending: the client may be gone right after. */
	printf("answered OK to host %s volume %s\n", l.host, l.volume);
	fflush(stdout);
	send_rsp(fd, &ok);
	while (recv(fd, &c, 1, 0) > 0)
		;
}

int main(int argc, char **argv)
{
	static const char *const names[] = {
		[M_GOOD] = "good", [M_BAD_PROOF] = "bad-proof",
		[M_NO_PROOF] = "no-proof", [M_NO_CHALLENGE] = "no-challenge",
	};
	struct sockaddr_in a = { .sin_family = AF_INET };
	struct rblk_secret key;
	char err[256];
	int lfd, one = 1, m = -1;

	if (argc != 4) {
		fprintf(stderr, "usage: rblk-faketarget PORT good|bad-proof|no-proof|no-challenge SECRET_FILE\n");
		return 2;
	}
	for (int i = 0; i < 4; i++)
		if (!strcmp(argv[2], names[i]))
			m = i;
	if (m < 0 || rblk_auth_load_secret(argv[3], &key, err, sizeof(err))) {
		fprintf(stderr, "rblk-faketarget: %s\n", m < 0 ? "unknown mode" : err);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	a.sin_port = htons((uint16_t)atoi(argv[1]));
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(lfd, 8)) {
		perror("rblk-faketarget: listen");
		return 1;
	}
	printf("listening\n");
	fflush(stdout);
	for (;;) {
		int fd = accept(lfd, NULL, NULL);

		if (fd < 0) {
			if (errno == EINTR)
				continue;
			return 1;
		}
		serve(fd, m, &key);
		close(fd);
	}
}
