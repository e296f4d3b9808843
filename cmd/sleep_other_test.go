//go:build !linux

package cmd

import "time"

// pacer wakes a goroutine at given times, as precisely as time.Sleep can.
type pacer struct{}

func newPacer() (*pacer, error) { return &pacer{}, nil }

// sleepUntil returns at t, or at once if t has passed.
func (p *pacer) sleepUntil(t time.Time) error { time.Sleep(time.Until(t)); return nil }

func (p *pacer) Close() error { return nil }
