# SPDX-License-Identifier: MIT
# fio result checks shared by the host integration tests and the VM suites
# (sourced, not run).  Jobs must run with --output-format=terse.

# fio_ok LOG MIN_READ_KB MIN_WRITE_KB: the terse lines in LOG (one per job)
# show no error and at least that much I/O, so a job that silently did
# nothing cannot pass.
fio_ok() {
	awk -F';' -v r="$2" -v w="$3" '
		$1 == "3" { n++; if ($5 != 0) err = 1; rk += $6; wk += $47 }
		END {
			if (!n) { print "no fio result line"; exit 1 }
			if (err) { print "fio job reported an error"; exit 1 }
			if (rk < r || wk < w) {
				printf "too little I/O: read %d KiB (want %d), write %d KiB (want %d)\n", rk, r, wk, w
				exit 1
			}
		}' "$1"
}
