//go:build !unix

package mine

import "time"

func processCPU() (time.Duration, bool) { return 0, false }
