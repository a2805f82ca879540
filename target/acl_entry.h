/* SPDX-License-Identifier: MIT */
/*
 * One allow_hosts entry, and whether a connection matches it.
 *
 * An entry is either a host name or an address (an IPv4/IPv6 address, or
 * a CIDR range such as 10.0.0.0/24 or fd00::/64).  The two kinds match
 * different things on purpose:
 *   - a name matches the host name the client *claims* in LOGIN/DISCOVER:
 *     anyone can claim any name, so a name is a label, not a proof;
 *   - an address matches only the connection's real peer address, taken
 *     from the socket (getpeername) or the RDMA CM (rdma_get_peer_addr),
 *     never the claimed name.  So a client claiming host "10.0.0.7" is not
 *     let in by an entry 10.0.0.7 unless it really connects from there.
 * Anything inet_pton understands is an address; a would-be name that
 * looks like an address but is not one (only digits and dots, or any ':')
 * is refused, so no name entry can be mistaken for an address.  An IPv4 entry also matches the IPv4-mapped IPv6 form of that peer
 * (dual-stack listeners).
 */
#ifndef RBLK_TARGET_ACL_ENTRY_H
#define RBLK_TARGET_ACL_ENTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "rblk_proto.h"

enum tgt_acl_kind {
	TGT_ACL_NAME,		/* claimed host name */
	TGT_ACL_ADDR,		/* real peer address within addr/prefix */
};

struct tgt_acl_entry {
	enum tgt_acl_kind kind;
	char     name[RBLK_NAME_MAX];	/* TGT_ACL_NAME */
	int      family;		/* AF_INET or AF_INET6 */
	uint8_t  addr[16];		/* network order, host bits zeroed */
	unsigned prefix;		/* 0..32 or 0..128 */
};

/*
 * Parses one allow_hosts entry.  Returns 0, or -EINVAL with a one-line
 * reason in err (which may be NULL): not a valid host name, address or
 * CIDR range.  Host bits below a CIDR prefix are ignored (10.0.0.9/24 is
 * 10.0.0.0/24).
 */
int tgt_acl_entry_parse(const char *s, struct tgt_acl_entry *e,
			char *err, size_t errlen);

/*
 * Does the connection match e?  host is the claimed name (may be NULL),
 * peer the real peer address (may be NULL: then no address entry matches).
 */
bool tgt_acl_entry_match(const struct tgt_acl_entry *e, const char *host,
			 const struct sockaddr *peer);

#endif /* RBLK_TARGET_ACL_ENTRY_H */
