//go:build !linux

package cmd

import "time"

// sleepUntil returns at t, or at once if t has passed.
func sleepUntil(t time.Time) { time.Sleep(time.Until(t)) }
