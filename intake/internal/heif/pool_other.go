//go:build !unix

package heif

import (
	"context"
	"errors"
	"image"
	"time"
)

// Pool has no workers on this system: every Decode fails with ErrStart, and the caller decodes
// in its own process.
type Pool struct{}

// PoolStats: see the unix Pool's.
type PoolStats struct {
	Started int
	CPU     time.Duration
	PeakRSS int64
}

const MeterTick = 20 * time.Millisecond

var (
	ErrWork  = errors.New("heic: the decode took more than its CPU time")
	ErrStart = errors.New("heic: no worker process")
)

func NewPool(string, int) *Pool { return &Pool{} }

func (*Pool) Warm(context.Context) error { return ErrStart }

func (*Pool) Decode(context.Context, []byte, int64, time.Duration) (image.Image, error) {
	return nil, ErrStart
}

func (*Pool) Stats() PoolStats { return PoolStats{} }

func (*Pool) Close() error { return nil }
