#!/bin/bash
# SPDX-License-Identifier: MIT
# Under systemd (JOURNAL_STREAM names stderr's device:inode) log lines
# carry the syslog priority as "<N>" and no timestamp or pid of their own:
# the journal records both.  A JOURNAL_STREAM that is not stderr (a
# redirect in the unit, an inherited variable) changes nothing.
. "$(dirname "$0")/lib.sh"
require_target

PORT=$(free_port) || skip "no free port"
CONF=$T/t.conf
write_conf "$CONF" uring "$T/vol.img" 1M
stamp='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+ rblk-target\[[0-9]+\] '

log "stderr is the journal stream"
: >"$T/target.log"
JOURNAL_STREAM=$(stat -c '%d:%i' "$T/target.log") start_target "$CONF"
stop_target TERM
head -n 5 "$T/target.log"
grep -Eq '^<6>INFO  .*listening on tcp' "$T/target.log" ||
	fail "no '<6>INFO ... listening' line under JOURNAL_STREAM"
grep -Eq "$stamp" "$T/target.log" && fail "a line kept its own timestamp under JOURNAL_STREAM"
grep -Evq '^<[3467]>' "$T/target.log" && fail "a line without a priority prefix: $(grep -Ev '^<[3467]>' "$T/target.log" | head -n 1)"

log "a bad --config fails with an error line at priority 3"
: >"$T/err.log"
JOURNAL_STREAM=$(stat -c '%d:%i' "$T/err.log") "$TARGET_BIN" --config "$T/missing.conf" 2>>"$T/err.log" &&
	fail "a missing config started"
cat "$T/err.log"
grep -q '^<3>ERROR ' "$T/err.log" || fail "no '<3>ERROR' line for a missing config"

log "JOURNAL_STREAM that is not stderr: plain lines"
: >"$T/target.log"
JOURNAL_STREAM=1:1 start_target "$CONF"
stop_target TERM
grep -Eq "${stamp}INFO  .*listening on tcp" "$T/target.log" ||
	fail "no timestamped line when stderr is not the journal: $(head -n 2 "$T/target.log")"
grep -q '^<' "$T/target.log" && fail "a priority prefix when stderr is not the journal"
exit 0
