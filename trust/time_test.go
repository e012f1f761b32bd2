package trust_test

import "time"

func timeUTC(y, mo, d, h, mi, s int) int64 {
	return time.Date(y, time.Month(mo), d, h, mi, s, 0, time.UTC).UnixNano()
}
