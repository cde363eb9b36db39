//go:build !unix

package heif

import "time"

func stopAtCPULimit() {}

func limitCPU(time.Duration) {}
