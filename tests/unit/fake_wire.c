// SPDX-License-Identifier: MIT
/* Socket I/O of the client tests' scripted targets (fake_wire.h). */
#include "fake_wire.h"

#include <sys/socket.h>
#include <unistd.h>

#include "rblk_proto.h"

int rfull(int fd, void *b, size_t n)
{
	size_t g = 0;

	while (g < n) {
		ssize_t r = read(fd, (uint8_t *)b + g, n - g);

		if (r <= 0)
			return -1;
		g += (size_t)r;
	}
	return 0;
}

int wfull(int fd, const void *b, size_t n)
{
	size_t g = 0;

	while (g < n) {
		/* The client may have hung up already: no SIGPIPE. */
		ssize_t r = send(fd, (const uint8_t *)b + g, n - g, MSG_NOSIGNAL);

		if (r <= 0)
			return -1;
		g += (size_t)r;
	}
	return 0;
}

int read_pdu(int fd, uint8_t *buf, uint8_t *type, uint32_t *len)
{
	if (rfull(fd, buf, 8) ||
	    rblk_decode_hdr(buf, 8, RBLK_MAX_PDU, type, len) != RBLK_S_OK ||
	    rfull(fd, buf + 8, *len - 8))
		return -1;
	return 0;
}
