/* SPDX-License-Identifier: MIT */
/*
 * Human sizes shared by the target config and rblkctl: "4096", "512M",
 * "10G", "1T", "64KiB".  Binary multiples only (K = 1024): block devices
 * are sized in powers of two and a decimal "G" would silently lose 7%.
 * "10GB" is refused rather than read either way: to some it means 10^10
 * bytes, to others 10 GiB, and a size must never be a guess.
 */
#ifndef RBLK_PROTO_SIZE_H
#define RBLK_PROTO_SIZE_H

#include <stddef.h>
#include <stdint.h>

/*
 * Parses a size: decimal digits, then optionally one of K M G T P (either
 * case), optionally followed by "iB".  No sign, no spaces, no fractions.
 * Returns 0 and sets *out; -EDOM for "KB", "MB", ... (ambiguous), -EINVAL
 * for another malformed string, -ERANGE when the value does not fit in
 * 64 bits.
 */
int rblk_parse_size(const char *s, uint64_t *out);

/* Why rblk_parse_size refused (its return value), for one error line. */
const char *rblk_size_error(int err);

/*
 * Writes v in the largest exact binary unit ("10G", "1536M", "4097") into
 * buf.  Returns buf.  The result parses back to v with rblk_parse_size.
 */
char *rblk_format_size(uint64_t v, char *buf, size_t len);

/* Writes v rounded to one decimal in the largest unit ("1.5G") for
 * humans; not meant to be parsed back.  Returns buf. */
char *rblk_human_size(uint64_t v, char *buf, size_t len);

#endif /* RBLK_PROTO_SIZE_H */
