// SPDX-License-Identifier: MIT
/*
 * The one-line reasons every layer of librblkclient hands back in the
 * caller's errbuf: in a file of its own, under everything that uses it.
 */
#include "client_transport.h"

#include <stdarg.h>
#include <stdio.h>

void rblk_client_set_err(char *errbuf, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!errbuf || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(errbuf, errlen, fmt, ap);
	va_end(ap);
}
