// SPDX-License-Identifier: MIT
/* A ublk queue thread's CPUs (queue_cpus.h). */
#include <stdio.h>

#include "queue_cpus.h"

int ini_queue_cpus(const cpu_set_t *queue_set, const cpu_set_t *allowed,
		   cpu_set_t *out)
{
	CPU_AND(out, queue_set, allowed);
	if (!CPU_COUNT(out) || CPU_EQUAL(out, allowed))
		return 0;
	return 1;
}

void ini_cpus_format(const cpu_set_t *set, char *buf, size_t len)
{
	size_t used = 0;

	if (len)
		buf[0] = '\0';
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		int last = cpu;
		int n;

		if (!CPU_ISSET(cpu, set))
			continue;
		while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, set))
			last++;
		if (last == cpu)
			n = snprintf(buf + used, len - used, "%s%d", used ? "," : "", cpu);
		else
			n = snprintf(buf + used, len - used, "%s%d-%d", used ? "," : "",
				     cpu, last);
		if (n < 0 || (size_t)n >= len - used)
			return;		/* truncated: snprintf ended it */
		used += (size_t)n;
		cpu = last;
	}
}
