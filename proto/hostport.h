/* SPDX-License-Identifier: MIT */
/*
 * "host:port" as every rblk program reads it (listen_tcp, listen_rdma,
 * --target): HOST, HOST:PORT, [V6], [V6]:PORT, and a bare IPv6 address
 * (more than one ':' and no brackets), which has no port.  One parser, so
 * the config, the listeners and the clients agree on what an address is.
 */
#ifndef RBLK_PROTO_HOSTPORT_H
#define RBLK_PROTO_HOSTPORT_H

#include <stddef.h>

/*
 * Copies the host (brackets dropped) into host[hostlen] and sets *port to
 * 1..65535, or 0 when s names none.  0, or -EINVAL for an empty host, a
 * host longer than hostlen - 1, an unclosed bracket, or a port that is not
 * 1..65535 in decimal; then host and *port are unspecified.
 */
int rblk_split_hostport(const char *s, char *host, size_t hostlen,
			unsigned *port);

#endif /* RBLK_PROTO_HOSTPORT_H */
